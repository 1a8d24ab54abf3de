// Convolution layers, as libtorch's: Conv1d/2d/3d (padding sizes, kValid or kSame; padding_mode
// zeros, reflect, replicate or circular), ConvTranspose1d/2d/3d, Fold and Unfold. Weights are
// [out_channels, in_channels / groups, k...] ([in_channels, out_channels / groups, k...] when
// transposed), initialised as PyTorch's: kaiming_uniform_(a = sqrt(5)) and a bias uniform in
// +-1/sqrt(fan_in).
#pragma once

#include <kiln/nn/functional/conv.h>
#include <kiln/nn/module.h>

#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

namespace kiln::nn {

namespace detail {
// weight and bias (undefined without bias) of a convolution, checked and initialised; `kind`
// names the module in errors.
KILN_API std::pair<Tensor, Tensor> conv_parameters(const std::string& kind, int64_t in, int64_t out,
                                                   int64_t groups, IntArrayRef kernel,
                                                   bool transposed, bool bias);
// kaiming_uniform_(weight, sqrt(5)) and bias uniform in +-1/sqrt(fan_in).
KILN_API void reset_conv_parameters(Tensor& weight, Tensor& bias);
// libtorch's repr of a convolution; `padding` already spelled ("[1, 1]", "'same'", or empty).
KILN_API void print_conv(std::ostream& stream, const std::string& kind, int64_t in, int64_t out,
                         IntArrayRef kernel, IntArrayRef stride, const std::string& padding,
                         IntArrayRef dilation, IntArrayRef output_padding, int64_t groups,
                         bool bias, const PaddingMode& mode);
// How a ConvPadding prints: "'valid'", "'same'", its sizes, or "" for zeros.
template <size_t D>
std::string padding_repr(const ConvPadding<D>& padding) {
  if (std::holds_alternative<enumtype::kValid>(padding)) return "'valid'";
  if (std::holds_alternative<enumtype::kSame>(padding)) return "'same'";
  const ExpandingArray<D>& sizes = std::get<ExpandingArray<D>>(padding);
  if (sizes == ExpandingArray<D>(0)) return "";
  std::ostringstream s;
  s << sizes.ref();
  return s.str();
}
// input padded as padding and mode say when mode is not zeros (the convolution then pads
// nothing); input itself otherwise. weight gives the kernel sizes for kSame.
KILN_API Tensor pad_for_mode(const char* kind, const Tensor& input, const Tensor& weight,
                             IntArrayRef padding, bool same, IntArrayRef dilation,
                             const PaddingMode& mode);
// The output_padding that makes a transposed convolution of input give output_size (the last
// stride.size() sizes): each between its smallest size and that plus stride - 1.
KILN_API std::vector<int64_t> output_padding_for(const char* kind, const Tensor& input,
                                                 IntArrayRef output_size, IntArrayRef stride,
                                                 IntArrayRef padding, IntArrayRef kernel,
                                                 IntArrayRef dilation);
}  // namespace detail

// The shared part of Conv1d/2d/3d.
template <size_t D>
class ConvNdImpl : public Module {
 public:
  explicit ConvNdImpl(const ConvOptions<D>& options) : options(options) {
    if (std::holds_alternative<enumtype::kSame>(options.padding())) {
      for (size_t d = 0; d < D; ++d) {
        KILN_CHECK_VALUE(options.stride()[d] == 1, "Conv", D, "d: padding='same' is not ",
                         "supported for strided convolutions (got stride=", options.stride().ref(),
                         ")");
      }
    }
    std::tie(weight, bias) = detail::conv_parameters("Conv" + std::to_string(D) + "d",
                                                     options.in_channels(), options.out_channels(),
                                                     options.groups(), options.kernel_size(),
                                                     /*transposed=*/false, options.bias());
    weight = register_parameter("weight", weight);
    bias = register_parameter("bias", bias, options.bias());
  }
  // Re-initialises weight and bias.
  void reset_parameters() { detail::reset_conv_parameters(weight, bias); }
  void pretty_print(std::ostream& stream) const override {
    stream << "kiln::nn::";
    detail::print_conv(stream, "Conv" + std::to_string(D) + "d", options.in_channels(),
                       options.out_channels(), options.kernel_size(), options.stride(),
                       detail::padding_repr<D>(options.padding()), options.dilation(),
                       ExpandingArray<D>(0), options.groups(), options.bias(),
                       options.padding_mode());
  }

  ConvOptions<D> options;
  Tensor weight;
  Tensor bias;  // undefined when options.bias() is false

 protected:
  // The functional options of forward, the input padded first when padding_mode is not zeros.
  std::pair<Tensor, functional::ConvFuncOptions<D>> prepare(const Tensor& input) const {
    functional::ConvFuncOptions<D> f;
    f.bias(bias).stride(options.stride()).dilation(options.dilation()).groups(options.groups());
    if (std::holds_alternative<enumtype::kZeros>(options.padding_mode())) {
      f.padding(options.padding());
      return {input, f};
    }
    const auto* sizes = std::get_if<ExpandingArray<D>>(&options.padding());
    DimVector pad = sizes ? DimVector(sizes->ref()) : DimVector(D, 0);
    bool same = std::holds_alternative<enumtype::kSame>(options.padding());
    Tensor padded = detail::pad_for_mode(("Conv" + std::to_string(D) + "d").c_str(), input, weight,
                                         pad, same, options.dilation(), options.padding_mode());
    f.padding(kValid);
    return {padded, f};
  }
};

class KILN_API Conv1dImpl : public ConvNdImpl<1> {
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv1dImpl(const Conv1dOptions& options) : ConvNdImpl(options) {}
  // conv1d of [N, in_channels, L] or [in_channels, L].
  Tensor forward(const Tensor& input);
};
KILN_MODULE(Conv1d);

// 2-D convolution of [N, in_channels, H, W] (or unbatched [in_channels, H, W]); prints as
// PyTorch's Python repr.
class KILN_API Conv2dImpl : public ConvNdImpl<2> {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(const Conv2dOptions& options) : ConvNdImpl(options) {}
  // conv2d(input, weight, bias, stride, padding, dilation, groups).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(Conv2d);

class KILN_API Conv3dImpl : public ConvNdImpl<3> {
 public:
  Conv3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : Conv3dImpl(Conv3dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv3dImpl(const Conv3dOptions& options) : ConvNdImpl(options) {}
  // conv3d of [N, in_channels, D, H, W] or [in_channels, D, H, W].
  Tensor forward(const Tensor& input);
};
KILN_MODULE(Conv3d);

// The shared part of ConvTranspose1d/2d/3d.
template <size_t D>
class ConvTransposeNdImpl : public Module {
 public:
  explicit ConvTransposeNdImpl(const ConvTransposeOptions<D>& options) : options(options) {
    KILN_CHECK_VALUE(std::holds_alternative<enumtype::kZeros>(options.padding_mode()),
                     "ConvTranspose", D, "d: only padding_mode='zeros' is supported (got '",
                     padding_mode_name(options.padding_mode()), "')");
    std::tie(weight, bias) = detail::conv_parameters("ConvTranspose" + std::to_string(D) + "d",
                                                     options.in_channels(), options.out_channels(),
                                                     options.groups(), options.kernel_size(),
                                                     /*transposed=*/true, options.bias());
    weight = register_parameter("weight", weight);
    bias = register_parameter("bias", bias, options.bias());
  }
  void reset_parameters() { detail::reset_conv_parameters(weight, bias); }
  void pretty_print(std::ostream& stream) const override {
    std::ostringstream padding;
    if (!(options.padding() == ExpandingArray<D>(0))) padding << options.padding().ref();
    stream << "kiln::nn::";
    detail::print_conv(stream, "ConvTranspose" + std::to_string(D) + "d", options.in_channels(),
                       options.out_channels(), options.kernel_size(), options.stride(),
                       padding.str(), options.dilation(), options.output_padding(),
                       options.groups(), options.bias(), options.padding_mode());
  }
  // The transposed convolution with the module's options; output_size (D sizes, or D + 2 with
  // batch and channels) picks the output_padding that gives it, as libtorch's.
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = {}) {
    functional::ConvTransposeFuncOptions<D> f;
    f.bias(bias)
        .stride(options.stride())
        .padding(options.padding())
        .output_padding(options.output_padding())
        .groups(options.groups())
        .dilation(options.dilation());
    if (output_size) {
      f.output_padding(detail::output_padding_for(
          ("ConvTranspose" + std::to_string(D) + "d").c_str(), input, *output_size,
          options.stride(), options.padding(), options.kernel_size(), options.dilation()));
    }
    if constexpr (D == 1) return functional::conv_transpose1d(input, weight, f);
    if constexpr (D == 2) return functional::conv_transpose2d(input, weight, f);
    if constexpr (D == 3) return functional::conv_transpose3d(input, weight, f);
  }

  ConvTransposeOptions<D> options;
  Tensor weight;  // [in_channels, out_channels / groups, k...]
  Tensor bias;    // undefined when options.bias() is false
};

class KILN_API ConvTranspose1dImpl : public ConvTransposeNdImpl<1> {
 public:
  ConvTranspose1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : ConvTranspose1dImpl(ConvTranspose1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose1dImpl(const ConvTranspose1dOptions& options)
      : ConvTransposeNdImpl(options) {}
};
KILN_MODULE(ConvTranspose1d);

class KILN_API ConvTranspose2dImpl : public ConvTransposeNdImpl<2> {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options)
      : ConvTransposeNdImpl(options) {}
};
KILN_MODULE(ConvTranspose2d);

class KILN_API ConvTranspose3dImpl : public ConvTransposeNdImpl<3> {
 public:
  ConvTranspose3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : ConvTranspose3dImpl(ConvTranspose3dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose3dImpl(const ConvTranspose3dOptions& options)
      : ConvTransposeNdImpl(options) {}
};
KILN_MODULE(ConvTranspose3d);

// functional::fold with the module's options.
class KILN_API FoldImpl : public Module {
 public:
  FoldImpl(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : FoldImpl(FoldOptions(output_size, kernel_size)) {}
  explicit FoldImpl(const FoldOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  FoldOptions options;
};
KILN_MODULE(Fold);

// functional::unfold with the module's options.
class KILN_API UnfoldImpl : public Module {
 public:
  explicit UnfoldImpl(ExpandingArray<2> kernel_size) : UnfoldImpl(UnfoldOptions(kernel_size)) {}
  explicit UnfoldImpl(const UnfoldOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  UnfoldOptions options;
};
KILN_MODULE(Unfold);

}  // namespace kiln::nn
