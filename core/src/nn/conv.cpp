// The convolution modules: Conv1d/2d/3d, ConvTranspose1d/2d/3d, Fold, Unfold.
#include "conv.h"

#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/conv.h>

#include "repr.h"

#include <cmath>
#include <sstream>

namespace kiln::nn {
namespace detail {

std::pair<Tensor, Tensor> conv_parameters(const std::string& kind, int64_t in, int64_t out,
                                          int64_t groups, IntArrayRef kernel, bool transposed,
                                          bool bias) {
  KILN_CHECK_VALUE(groups > 0, kind, ": groups must be a positive integer (got ", groups, ")");
  KILN_CHECK_VALUE(in % groups == 0, kind, ": in_channels must be divisible by groups (got ",
                   "in_channels=", in, ", groups=", groups, ")");
  KILN_CHECK_VALUE(out % groups == 0, kind, ": out_channels must be divisible by groups (got ",
                   "out_channels=", out, ", groups=", groups, ")");
  DimVector sizes = transposed ? DimVector{in, out / groups} : DimVector{out, in / groups};
  for (int64_t k : kernel) {
    KILN_CHECK_VALUE(k > 0, kind, ": kernel_size must be positive (got ", kernel, ")");
    sizes.push_back(k);
  }
  Tensor weight = empty(sizes);
  Tensor b = bias ? empty({out}) : Tensor();
  reset_conv_parameters(weight, b);
  return {weight, b};
}

void reset_conv_parameters(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

// libtorch prints a padding mode by its enum's name (kReflect).
const char* enum_name(const PaddingMode& mode) {
  const char* names[] = {"kZeros", "kReflect", "kReplicate", "kCircular"};
  return names[mode.index()];
}

// As libtorch: stride always; padding, dilation, output_padding, groups, bias and padding_mode
// when not the default.
void print_conv(std::ostream& stream, const std::string& kind, int64_t in, int64_t out,
                IntArrayRef kernel, IntArrayRef stride, const std::string& padding,
                IntArrayRef dilation, IntArrayRef output_padding, int64_t groups, bool bias,
                const PaddingMode& mode) {
  auto all = [](IntArrayRef v, int64_t value) {
    for (int64_t x : v) {
      if (x != value) return false;
    }
    return true;
  };
  // libtorch prints a one-dimensional ExpandingArray as its value alone: kernel_size=5, [3, 3]
  auto sizes = [](IntArrayRef v) {
    std::ostringstream text;
    if (v.size() == 1) {
      text << v[0];
    } else {
      text << v;
    }
    return text.str();
  };
  std::string pad = padding;
  if (kernel.size() == 1 && pad.size() > 2 && pad.front() == '[' && pad.back() == ']') {
    pad = pad.substr(1, pad.size() - 2);
  }
  stream << kind << "(" << in << ", " << out << ", kernel_size=" << sizes(kernel)
         << ", stride=" << sizes(stride);
  if (!pad.empty()) stream << ", padding=" << pad;
  if (!all(dilation, 1)) stream << ", dilation=" << sizes(dilation);
  if (!all(output_padding, 0)) stream << ", output_padding=" << sizes(output_padding);
  if (groups != 1) stream << ", groups=" << groups;
  if (!bias) stream << ", bias=false";
  if (!std::holds_alternative<enumtype::kZeros>(mode)) {
    stream << ", padding_mode=" << enum_name(mode);
  }
  stream << ")";
}

Tensor pad_for_mode(const char* kind, const Tensor& input, const Tensor& weight,
                    IntArrayRef padding, bool same, IntArrayRef dilation, const PaddingMode& mode) {
  const size_t dims = padding.size();
  DimVector before(padding), after(padding);
  if (same) {
    for (size_t d = 0; d < dims; ++d) {
      int64_t total = 0;
      KILN_CHECK_VALUE(!__builtin_mul_overflow(dilation[d],
                                               weight.size(static_cast<int64_t>(d) + 2) - 1,
                                               &total),
                       kind, ": padding='same' for weight of size ", weight.sizes(),
                       " and dilation ", dilation, " overflows int64");
      before[d] = total / 2;
      after[d] = total - before[d];
    }
  }
  return pad_with_mode(kind, input, before, after, mode);
}

std::vector<int64_t> output_padding_for(const char* kind, const Tensor& input,
                                        IntArrayRef output_size, IntArrayRef stride,
                                        IntArrayRef padding, IntArrayRef kernel,
                                        IntArrayRef dilation) {
  const size_t dims = stride.size();
  KILN_CHECK_VALUE(output_size.size() == dims || output_size.size() == dims + 2, kind,
                   ": output_size must have ", dims, " or ", dims + 2, " elements (got ",
                   output_size, ")");
  KILN_CHECK_VALUE(input.dim() >= static_cast<int64_t>(dims), kind, ": input of size ",
                   input.sizes(), " has fewer than ", dims, " dimensions");
  std::vector<int64_t> out;
  for (size_t d = 0; d < dims; ++d) {
    const int64_t in = input.size(input.dim() - static_cast<int64_t>(dims - d));
    int64_t smallest = 0, span = 0;
    bool overflow = __builtin_mul_overflow(in - 1, stride[d], &smallest) ||
                    __builtin_sub_overflow(smallest, 2 * padding[d], &smallest) ||
                    __builtin_mul_overflow(dilation[d], kernel[d] - 1, &span) ||
                    __builtin_add_overflow(smallest, span + 1, &smallest);
    KILN_CHECK_VALUE(!overflow, kind, ": the output size for input of size ", input.sizes(),
                     " overflows int64");
    const int64_t want = output_size[output_size.size() - dims + d];
    KILN_CHECK_VALUE(want >= smallest && want < smallest + stride[d], kind, ": requested an ",
                     "output size of ", output_size, ", but valid sizes of dimension ", d,
                     " range from ", smallest, " to ", smallest + stride[d] - 1,
                     " (for an input of size ", input.sizes(), ")");
    out.push_back(want - smallest);
  }
  return out;
}

}  // namespace detail

Tensor Conv1dImpl::forward(const Tensor& input) {
  auto [x, f] = prepare(input);
  return functional::conv1d(x, weight, f);
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  auto [x, f] = prepare(input);
  return functional::conv2d(x, weight, f);
}

Tensor Conv3dImpl::forward(const Tensor& input) {
  auto [x, f] = prepare(input);
  return functional::conv3d(x, weight, f);
}

// As PyTorch's Python repr: stride always, padding, dilation, groups and bias only when not the
// default.
void Conv2dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Conv2d(" << options.in_channels() << ", " << options.out_channels()
         << ", kernel_size=" << options.kernel_size() << ", stride=" << options.stride();
  const auto* padding = std::get_if<ExpandingArray<2>>(&options.padding());
  if (padding == nullptr) {
    stream << ", padding=" << nn::detail::padding_repr<2>(options.padding());
  } else if (!(*padding == ExpandingArray<2>(0))) {
    stream << ", padding=" << *padding;
  }
  if (!(options.dilation() == ExpandingArray<2>(1))) {
    stream << ", dilation=" << options.dilation();
  }
  if (options.groups() != 1) stream << ", groups=" << options.groups();
  if (!options.bias()) stream << ", bias=" << nn::detail::bool_str(false);
  if (!std::holds_alternative<enumtype::kZeros>(options.padding_mode())) {
    stream << ", padding_mode=" << detail::enum_name(options.padding_mode());
  }
  stream << ")";
}

Tensor FoldImpl::forward(const Tensor& input) { return functional::fold(input, options); }

void FoldImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Fold(output_size=" << options.output_size().ref()
         << ", kernel_size=" << options.kernel_size().ref()
         << ", dilation=" << options.dilation().ref() << ", padding=" << options.padding().ref()
         << ", stride=" << options.stride().ref() << ")";
}

Tensor UnfoldImpl::forward(const Tensor& input) { return functional::unfold(input, options); }

void UnfoldImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Unfold(kernel_size=" << options.kernel_size().ref()
         << ", dilation=" << options.dilation().ref() << ", padding=" << options.padding().ref()
         << ", stride=" << options.stride().ref() << ")";
}

}  // namespace kiln::nn
