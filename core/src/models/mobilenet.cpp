#include <kiln/models/mobilenet.h>

#include <kiln/error.h>
#include <kiln/nn/functional/pooling.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/conv.h>
#include <kiln/nn/modules/dropout.h>
#include <kiln/nn/modules/linear.h>
#include <kiln/nn/modules/normalization.h>
#include <kiln/ops.h>

#include <algorithm>
#include <cmath>

namespace kiln::models {

Conv2dNormActivationImpl::Conv2dNormActivationImpl(int64_t in, int64_t out, int64_t kernel,
                                                   int64_t stride, int64_t groups) {
  push_back(nn::Conv2d(nn::Conv2dOptions(in, out, kernel)
                           .stride(stride)
                           .padding((kernel - 1) / 2)
                           .groups(groups)
                           .bias(false)));
  push_back(nn::BatchNorm2d(out));
  // ReLU6 as clamp(0, 6) until kiln::nn::ReLU6 lands (issue 15, activations).
  push_back(nn::Functional([](const Tensor& x) { return clamp(x, 0, 6); }));
}

int64_t make_divisible(double v, int64_t divisor) {
  KILN_CHECK_VALUE(divisor > 0, "make_divisible: divisor must be positive (got ", divisor, ")");
  KILN_CHECK_VALUE(std::isfinite(v) && v >= 0 && v < 0x1p62, "make_divisible: channel count ", v,
                   " must be finite, non-negative and below 2^62");
  auto rounded = static_cast<int64_t>(v + static_cast<double>(divisor) / 2) / divisor * divisor;
  int64_t result = std::max(divisor, rounded);
  if (static_cast<double>(result) < 0.9 * v) result += divisor;  // never round down by > 10%
  return result;
}

InvertedResidualImpl::InvertedResidualImpl(int64_t inp, int64_t oup, int64_t stride,
                                           double expand_ratio) {
  KILN_CHECK_VALUE(stride == 1 || stride == 2, "InvertedResidual: stride should be 1 or 2 (got ",
                   stride, ")");
  KILN_CHECK_VALUE(expand_ratio > 0 && std::isfinite(expand_ratio),
                   "InvertedResidual: expand_ratio must be positive (got ", expand_ratio, ")");
  double hidden_exact = static_cast<double>(inp) * expand_ratio;
  KILN_CHECK_VALUE(hidden_exact < 0x1p62, "InvertedResidual: hidden width ", inp, " * ",
                   expand_ratio, " is too large");
  // Python's round(): halves to even, which nearbyint does in the default rounding mode
  auto hidden = static_cast<int64_t>(std::nearbyint(hidden_exact));
  use_res_connect = stride == 1 && inp == oup;
  nn::Sequential layers;
  if (expand_ratio != 1) layers->push_back(Conv2dNormActivation(inp, hidden, 1));
  layers->push_back(Conv2dNormActivation(hidden, hidden, 3, stride, hidden));  // depthwise
  layers->push_back(nn::Conv2d(nn::Conv2dOptions(hidden, oup, 1).bias(false)));
  layers->push_back(nn::BatchNorm2d(oup));
  conv = register_module("conv", layers);
}

Tensor InvertedResidualImpl::forward(const Tensor& x) {
  return use_res_connect ? x + conv(x) : conv(x);
}

MobileNetV2Impl::MobileNetV2Impl(const MobileNetV2Options& options) : options(options) {
  KILN_CHECK_VALUE(options.num_classes() > 0, "MobileNetV2: num_classes must be positive (got ",
                   options.num_classes(), ")");
  KILN_CHECK_VALUE(options.width_mult() > 0 && std::isfinite(options.width_mult()),
                   "MobileNetV2: width_mult must be positive (got ", options.width_mult(), ")");
  // expansion t, output channels c, repeats n, first stride s (the paper's Table 2)
  struct Stage {
    int64_t t, c, n, s;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t round = options.round_nearest();
  int64_t input = make_divisible(32 * options.width_mult(), round);
  int64_t last = make_divisible(1280 * std::max(1.0, options.width_mult()), round);
  nn::Sequential layers;
  layers->push_back(Conv2dNormActivation(3, input, 3, 2));
  for (const Stage& stage : stages) {
    int64_t output = make_divisible(static_cast<double>(stage.c) * options.width_mult(), round);
    for (int64_t i = 0; i < stage.n; ++i) {
      layers->push_back(InvertedResidual(input, output, i == 0 ? stage.s : 1,
                                         static_cast<double>(stage.t)));
      input = output;
    }
  }
  layers->push_back(Conv2dNormActivation(input, last, 1));
  features = register_module("features", layers);
  classifier =
      register_module("classifier", nn::Sequential(nn::Dropout(options.dropout()),
                                                   nn::Linear(last, options.num_classes())));

  for (const auto& module : modules(/*include_self=*/false)) {
    if (auto* c = module->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(c->weight, 0, nn::init::FanMode::FanOut);
      if (c->bias.defined()) nn::init::zeros_(c->bias);
    } else if (auto* norm = module->as<nn::BatchNorm2d>()) {
      nn::init::ones_(norm->weight);
      nn::init::zeros_(norm->bias);
    } else if (auto* linear = module->as<nn::Linear>()) {
      nn::init::normal_(linear->weight, 0, 0.01);
      nn::init::zeros_(linear->bias);
    }
  }
}

Tensor MobileNetV2Impl::forward(const Tensor& x) {
  Tensor out = adaptive_avg_pool2d(features(x), {1, 1});
  return classifier(flatten(out, 1));
}

MobileNetV2 mobilenet_v2(const MobileNetV2Options& options) { return MobileNetV2(options); }

}  // namespace kiln::models
