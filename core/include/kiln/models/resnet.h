// ResNet-18/34/50 ("Deep Residual Learning for Image Recognition", He et al. 2015) as
// torchvision builds them: the same layers under the same names, so that a state_dict saved from
// torchvision (as safetensors) loads by name with kiln::load(*model, path).
//
//   auto model = kiln::models::resnet50(kiln::models::ResNetOptions().num_classes(10));
//   kiln::load(*model, "resnet50.safetensors");  // torchvision's state_dict, saved as safetensors
//   kiln::Tensor logits = model(images);          // [N, 3, H, W] -> [N, num_classes]
//
// Names: conv1, bn1, relu, maxpool, layer1..layer4 (Sequentials of blocks "0", "1", ...), avgpool,
// fc; a block has conv1, bn1, conv2, bn2 (and conv3, bn3 in a Bottleneck), relu, and downsample
// (a Sequential of a 1x1 convolution "0" and a BatchNorm2d "1") where its shape changes. The
// Bottleneck strides in its 3x3 convolution, as torchvision's (ResNet v1.5). Initialisation is
// torchvision's: convolutions kaiming_normal_ (fan_out, ReLU), BatchNorm2d weight 1 and bias 0,
// fc as Linear's default; zero_init_residual zeroes each block's last BatchNorm2d weight.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/modules/activation.h>
#include <kiln/nn/modules/container.h>
#include <kiln/nn/modules/conv.h>
#include <kiln/nn/modules/linear.h>
#include <kiln/nn/modules/normalization.h>
#include <kiln/nn/modules/pooling.h>
#include <kiln/nn/options.h>

#include <cstdint>
#include <vector>

namespace kiln::models {

struct ResNetOptions {
  // Outputs of the final Linear layer.
  KILN_ARG(int64_t, num_classes) = 1000;
  // Each residual block's last BatchNorm2d starts with weight 0, so each block starts as the
  // identity ("Accurate, Large Minibatch SGD", Goyal et al. 2017).
  KILN_ARG(bool, zero_init_residual) = false;
  // Groups and width of the Bottleneck's 3x3 convolution (ResNeXt, Wide ResNet); BasicBlock
  // supports only groups 1 and width 64.
  KILN_ARG(int64_t, groups) = 1;
  KILN_ARG(int64_t, width_per_group) = 64;
};

// Two 3x3 convolutions with a shortcut: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)),
// where shortcut is downsample, or the identity when it is empty. ResNet-18 and -34.
class KILN_API BasicBlockImpl : public nn::Module {
 public:
  // Output channels per `planes`.
  static constexpr int64_t expansion = 1;

  // [N, inplanes, H, W] -> [N, planes, H / stride, W / stride]; `downsample` (may be empty)
  // maps the input to the output's shape.
  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride = 1,
                 nn::Sequential downsample = nullptr, int64_t groups = 1, int64_t base_width = 64);
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  nn::ReLU relu{nullptr};
  nn::Sequential downsample{nullptr};
};
KILN_MODULE(BasicBlock);

// 1x1 (reduce to width), 3x3 (stride, groups), 1x1 (expand to planes * 4) convolutions with a
// shortcut, each followed by a BatchNorm2d. ResNet-50 and deeper.
class KILN_API BottleneckImpl : public nn::Module {
 public:
  static constexpr int64_t expansion = 4;

  // [N, inplanes, H, W] -> [N, planes * 4, H / stride, W / stride]; the 3x3 convolution has
  // width planes * base_width / 64 * groups channels.
  BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride = 1,
                 nn::Sequential downsample = nullptr, int64_t groups = 1, int64_t base_width = 64);
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  nn::ReLU relu{nullptr};
  nn::Sequential downsample{nullptr};
};
KILN_MODULE(Bottleneck);

// The kind of residual block of a ResNet.
enum class ResNetBlock { Basic, Bottleneck };

// conv1 (7x7, stride 2) - bn1 - relu - maxpool (3x3, stride 2) - layer1..4 (64, 128, 256, 512
// planes; layer2..4 stride 2) - avgpool (to 1x1) - flatten - fc.
class KILN_API ResNetImpl : public nn::Module {
 public:
  // `layers`: the number of blocks in layer1..layer4 (four positive counts).
  ResNetImpl(ResNetBlock block, std::vector<int64_t> layers, const ResNetOptions& options = {});
  // [N, 3, H, W] -> [N, num_classes] logits.
  Tensor forward(const Tensor& x);

  ResNetOptions options;
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ReLU relu{nullptr};
  nn::MaxPool2d maxpool{nullptr};
  nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Linear fc{nullptr};

 private:
  nn::Sequential make_layer(int64_t planes, int64_t blocks, int64_t stride);

  ResNetBlock block_;
  int64_t inplanes_ = 64;
};
KILN_MODULE(ResNet);

// BasicBlock, layers {2, 2, 2, 2}: 11.7M parameters with 1000 classes.
KILN_API ResNet resnet18(const ResNetOptions& options = {});
// BasicBlock, layers {3, 4, 6, 3}: 21.8M parameters.
KILN_API ResNet resnet34(const ResNetOptions& options = {});
// Bottleneck, layers {3, 4, 6, 3}: 25.6M parameters.
KILN_API ResNet resnet50(const ResNetOptions& options = {});

}  // namespace kiln::models
