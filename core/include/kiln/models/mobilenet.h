// MobileNetV2 ("MobileNetV2: Inverted Residuals and Linear Bottlenecks", Sandler et al. 2018) as
// torchvision builds it: the same layers under the same names, so that a state_dict saved from
// torchvision (as safetensors) loads by name with kiln::load(*model, path).
//
//   auto model = kiln::models::mobilenet_v2(kiln::models::MobileNetV2Options().width_mult(0.5));
//   kiln::Tensor logits = model(images);  // [N, 3, H, W] -> [N, num_classes]
//
// Names: features (a Sequential: "0" the stem, "1".."17" InvertedResiduals, "18" the last 1x1
// convolution), classifier (Dropout "0", Linear "1"). A convolution block (Conv2dNormActivation)
// holds a Conv2d "0", a BatchNorm2d "1" and a ReLU6 "2"; an InvertedResidual holds its layers in
// "conv". Initialisation is torchvision's: convolutions
// kaiming_normal_ (fan_out), BatchNorm2d weight 1 and bias 0, Linear weight normal(0, 0.01) and
// bias 0.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/modules/container.h>
#include <kiln/nn/options.h>

#include <cstdint>

namespace kiln::models {

struct MobileNetV2Options {
  // Outputs of the classifier.
  KILN_ARG(int64_t, num_classes) = 1000;
  // Multiplies every layer's channels (rounded to a multiple of round_nearest).
  KILN_ARG(double, width_mult) = 1.0;
  KILN_ARG(int64_t, round_nearest) = 8;
  // The classifier's dropout probability.
  KILN_ARG(double, dropout) = 0.2;
};

// Conv2d (no bias, padding (kernel - 1) / 2) - BatchNorm2d - ReLU6 as a Sequential of "0", "1",
// "2" (torchvision's Conv2dNormActivation, a Sequential too).
class KILN_API Conv2dNormActivationImpl : public nn::SequentialImpl {
 public:
  Conv2dNormActivationImpl(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                           int64_t groups = 1);
  // The three layers in order (one forward, so that a Sequential can hold this module).
  Tensor forward(const Tensor& x) { return SequentialImpl::forward(x); }
};
KILN_MODULE(Conv2dNormActivation);

// Expand (1x1, unless expand_ratio is 1), depthwise 3x3 (stride), project (1x1, linear: no
// activation); the input is added back when stride is 1 and the channels are unchanged.
class KILN_API InvertedResidualImpl : public nn::Module {
 public:
  // [N, inp, H, W] -> [N, oup, H / stride, W / stride]; stride 1 or 2; the hidden width is
  // round(inp * expand_ratio).
  InvertedResidualImpl(int64_t inp, int64_t oup, int64_t stride, double expand_ratio);
  Tensor forward(const Tensor& x);

  nn::Sequential conv{nullptr};
  bool use_res_connect = false;
};
KILN_MODULE(InvertedResidual);

// features - adaptive average pool to 1x1 - flatten - classifier.
class KILN_API MobileNetV2Impl : public nn::Module {
 public:
  explicit MobileNetV2Impl(const MobileNetV2Options& options = {});
  // [N, 3, H, W] -> [N, num_classes] logits.
  Tensor forward(const Tensor& x);

  MobileNetV2Options options;
  nn::Sequential features{nullptr};
  nn::Sequential classifier{nullptr};
};
KILN_MODULE(MobileNetV2);

// MobileNetV2: 3.5M parameters with 1000 classes and width_mult 1.
KILN_API MobileNetV2 mobilenet_v2(const MobileNetV2Options& options = {});

// v rounded to the nearest multiple of `divisor`, at least `divisor` and not below 90% of v:
// the channel counts of MobileNet (torchvision's _make_divisible).
KILN_API int64_t make_divisible(double v, int64_t divisor);

}  // namespace kiln::models
