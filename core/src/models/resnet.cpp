#include <kiln/models/resnet.h>

#include <kiln/error.h>
#include <kiln/nn/init.h>
#include <kiln/ops.h>

#include <string>
#include <utility>

namespace kiln::models {

namespace {

// a * b for a channel count, named `what` in the error when it overflows.
int64_t channels(const char* what, int64_t a, int64_t b) {
  int64_t product = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(a, b, &product), "ResNet: ", what, " (", a, " * ", b,
                   ") overflows int64");
  return product;
}

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride = 1, int64_t groups = 1) {
  return nn::Conv2d(
      nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).groups(groups).bias(false));
}

nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

// relu(out + shortcut) in place on `out` (a fresh BatchNorm2d output), the end of every
// residual block, as torchvision's `out += identity; relu(out)`: no new activations.
Tensor residual_relu(const Tensor& out, const Tensor& shortcut) {
  out.add_(shortcut);
  return out.relu_();
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride,
                               nn::Sequential downsample, int64_t groups, int64_t base_width) {
  KILN_CHECK_VALUE(groups == 1 && base_width == 64, "BasicBlock only supports groups=1 and ",
                   "base_width=64 (got groups=", groups, ", base_width=", base_width,
                   "); use Bottleneck for ResNeXt and Wide ResNet");
  conv1 = register_module("conv1", conv3x3(inplanes, planes, stride));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes));
  relu = register_module("relu", nn::ReLU(true));
  conv2 = register_module("conv2", conv3x3(planes, planes));
  bn2 = register_module("bn2", nn::BatchNorm2d(planes));
  if (downsample) this->downsample = register_module("downsample", std::move(downsample));
}

Tensor BasicBlockImpl::forward(const Tensor& x) {
  Tensor out = bn1->forward_relu(conv1(x));  // relu(bn1(.)) in one pass
  out = bn2(conv2(out));
  return residual_relu(out, downsample ? downsample(x) : x);
}

BottleneckImpl::BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride,
                               nn::Sequential downsample, int64_t groups, int64_t base_width) {
  KILN_CHECK_VALUE(groups > 0 && base_width > 0, "Bottleneck: groups and base_width must be ",
                   "positive (got groups=", groups, ", base_width=", base_width, ")");
  // torchvision's int(planes * (base_width / 64.0)) * groups
  int64_t width = channels("width",
                           static_cast<int64_t>(static_cast<double>(planes) * base_width / 64.0),
                           groups);
  int64_t out = channels("planes * expansion", planes, expansion);
  conv1 = register_module("conv1", conv1x1(inplanes, width));
  bn1 = register_module("bn1", nn::BatchNorm2d(width));
  conv2 = register_module("conv2", conv3x3(width, width, stride, groups));
  bn2 = register_module("bn2", nn::BatchNorm2d(width));
  conv3 = register_module("conv3", conv1x1(width, out));
  bn3 = register_module("bn3", nn::BatchNorm2d(out));
  relu = register_module("relu", nn::ReLU(true));
  if (downsample) this->downsample = register_module("downsample", std::move(downsample));
}

Tensor BottleneckImpl::forward(const Tensor& x) {
  Tensor out = bn1->forward_relu(conv1(x));
  out = bn2->forward_relu(conv2(out));
  out = bn3(conv3(out));
  return residual_relu(out, downsample ? downsample(x) : x);
}

ResNetImpl::ResNetImpl(ResNetBlock block, std::vector<int64_t> layers, const ResNetOptions& options)
    : options(options), block_(block) {
  KILN_CHECK_VALUE(layers.size() == 4, "ResNet: expected the block counts of 4 layers, got ",
                   layers.size(), " counts");
  for (int64_t n : layers) {
    KILN_CHECK_VALUE(n > 0, "ResNet: each layer needs at least one block (got ", n, ")");
  }
  KILN_CHECK_VALUE(options.num_classes() > 0, "ResNet: num_classes must be positive (got ",
                   options.num_classes(), ")");
  KILN_CHECK_VALUE(options.groups() > 0 && options.width_per_group() > 0,
                   "ResNet: groups and width_per_group must be positive (got groups=",
                   options.groups(), ", width_per_group=", options.width_per_group(), ")");
  conv1 = register_module(
      "conv1", nn::Conv2d(nn::Conv2dOptions(3, inplanes_, 7).stride(2).padding(3).bias(false)));
  bn1 = register_module("bn1", nn::BatchNorm2d(inplanes_));
  relu = register_module("relu", nn::ReLU(true));
  maxpool = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  layer1 = register_module("layer1", make_layer(64, layers[0], 1));
  layer2 = register_module("layer2", make_layer(128, layers[1], 2));
  layer3 = register_module("layer3", make_layer(256, layers[2], 2));
  layer4 = register_module("layer4", make_layer(512, layers[3], 2));
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})));
  fc = register_module("fc", nn::Linear(inplanes_, options.num_classes()));

  for (const auto& module : modules(/*include_self=*/false)) {
    if (auto* conv = module->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0, nn::init::FanMode::FanOut,
                                nn::init::Nonlinearity::ReLU);
    } else if (auto* norm = module->as<nn::BatchNorm2d>()) {
      nn::init::ones_(norm->weight);
      nn::init::zeros_(norm->bias);
    }
  }
  if (options.zero_init_residual()) {
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* basic = module->as<BasicBlock>()) nn::init::zeros_(basic->bn2->weight);
      if (auto* bottleneck = module->as<Bottleneck>()) nn::init::zeros_(bottleneck->bn3->weight);
    }
  }
}

nn::Sequential ResNetImpl::make_layer(int64_t planes, int64_t blocks, int64_t stride) {
  int64_t expansion = block_ == ResNetBlock::Basic ? BasicBlockImpl::expansion
                                                   : BottleneckImpl::expansion;
  int64_t out = channels("planes * expansion", planes, expansion);
  nn::Sequential downsample{nullptr};
  if (stride != 1 || inplanes_ != out) {
    downsample = nn::Sequential(conv1x1(inplanes_, out, stride), nn::BatchNorm2d(out));
  }
  nn::Sequential layer;
  int64_t groups = options.groups(), width = options.width_per_group();
  for (int64_t i = 0; i < blocks; ++i) {
    int64_t block_stride = i == 0 ? stride : 1;
    nn::Sequential shortcut = i == 0 ? downsample : nn::Sequential(nullptr);
    if (block_ == ResNetBlock::Basic) {
      layer->push_back(BasicBlock(inplanes_, planes, block_stride, shortcut, groups, width));
    } else {
      layer->push_back(Bottleneck(inplanes_, planes, block_stride, shortcut, groups, width));
    }
    inplanes_ = out;
  }
  return layer;
}

Tensor ResNetImpl::forward(const Tensor& x) {
  Tensor out = bn1->forward_relu(conv1(x));
  out = maxpool(out);
  out = layer4(layer3(layer2(layer1(out))));
  out = flatten(avgpool(out), 1);
  return fc(out);
}

ResNet resnet18(const ResNetOptions& options) {
  return ResNet(ResNetBlock::Basic, std::vector<int64_t>{2, 2, 2, 2}, options);
}

ResNet resnet34(const ResNetOptions& options) {
  return ResNet(ResNetBlock::Basic, std::vector<int64_t>{3, 4, 6, 3}, options);
}

ResNet resnet50(const ResNetOptions& options) {
  return ResNet(ResNetBlock::Bottleneck, std::vector<int64_t>{3, 4, 6, 3}, options);
}

}  // namespace kiln::models
