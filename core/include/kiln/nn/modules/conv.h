// Conv2d.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

namespace kiln::nn {

// Conv2dOptions(in, out, kernel).stride(2).padding(1).dilation(1).groups(1).bias(true).
struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  KILN_ARG(int64_t, in_channels);
  KILN_ARG(int64_t, out_channels);
  KILN_ARG(ExpandingArray<2>, kernel_size);
  KILN_ARG(ExpandingArray<2>, stride) = 1;
  KILN_ARG(ExpandingArray<2>, padding) = 0;
  KILN_ARG(ExpandingArray<2>, dilation) = 1;
  KILN_ARG(int64_t, groups) = 1;
  KILN_ARG(bool, bias) = true;
};

// 2-D convolution of [N, in_channels, H, W] (or unbatched [in_channels, H, W]) with weight
// [out_channels, in_channels / groups, kH, kW] and bias [out_channels], initialised as PyTorch:
// kaiming_uniform_(a = sqrt(5)) and uniform in +-1/sqrt(fan_in).
class KILN_API Conv2dImpl : public Module {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(const Conv2dOptions& options);

  // Re-initialises weight and bias.
  void reset_parameters();
  // conv2d(input, weight, bias, stride, padding, dilation, groups).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  Conv2dOptions options;
  Tensor weight;
  Tensor bias;  // undefined when options.bias() is false
};
KILN_MODULE(Conv2d);

}  // namespace kiln::nn
