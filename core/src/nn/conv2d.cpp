// Conv2d.
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/conv.h>

#include "repr.h"

#include <cmath>

namespace kiln::nn {

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options) : options(options) {
  const int64_t in = options.in_channels(), out = options.out_channels(), g = options.groups();
  KILN_CHECK_VALUE(g > 0, "Conv2d: groups must be a positive integer (got ", g, ")");
  KILN_CHECK_VALUE(in % g == 0, "Conv2d: in_channels must be divisible by groups (got ",
                   "in_channels=", in, ", groups=", g, ")");
  KILN_CHECK_VALUE(out % g == 0, "Conv2d: out_channels must be divisible by groups (got ",
                   "out_channels=", out, ", groups=", g, ")");
  const ExpandingArray<2>& k = options.kernel_size();
  KILN_CHECK_VALUE(k[0] > 0 && k[1] > 0, "Conv2d: kernel_size must be positive (got ", k, ")");
  weight = register_parameter("weight", empty({out, in / g, k[0], k[1]}));
  bias = register_parameter("bias", options.bias() ? empty({out}) : Tensor(), options.bias());
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  return functional::conv2d(input, weight, bias, options.stride(), options.padding(),
                            options.dilation(), options.groups());
}

// As PyTorch: stride always, padding, dilation, groups and bias only when not the default.
void Conv2dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Conv2d(" << options.in_channels() << ", " << options.out_channels()
         << ", kernel_size=" << options.kernel_size() << ", stride=" << options.stride();
  if (!(options.padding() == ExpandingArray<2>(0))) stream << ", padding=" << options.padding();
  if (!(options.dilation() == ExpandingArray<2>(1))) {
    stream << ", dilation=" << options.dilation();
  }
  if (options.groups() != 1) stream << ", groups=" << options.groups();
  if (!options.bias()) stream << ", bias=" << detail::bool_str(false);
  stream << ")";
}

}  // namespace kiln::nn
