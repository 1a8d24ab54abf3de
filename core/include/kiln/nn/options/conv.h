// Options of the convolution layers and functions, as libtorch's (torch/nn/options/conv.h and
// fold.h): Conv1dOptions(3, 8, 5).padding(kiln::kSame).padding_mode(kiln::kReflect),
// ConvTranspose2dOptions(8, 3, 4).stride(2).output_padding(1), F::Conv3dFuncOptions().bias(b),
// FoldOptions({8, 8}, 3), and the tags kValid, kSame, kZeros, kReflect, kReplicate, kCircular
// (with padding's and interpolation's: kConstant, kNearest, kLinear, kBilinear, ...).
#pragma once

#include <kiln/nn/options.h>
#include <kiln/tensor.h>

#include <variant>

namespace kiln {
namespace enumtype {
struct kValid {};
struct kSame {};
struct kZeros {};
struct kReflect {};
struct kReplicate {};
struct kCircular {};
struct kConstant {};
struct kNearest {};
struct kNearestExact {};
struct kLinear {};
struct kBilinear {};
struct kBicubic {};
struct kTrilinear {};
struct kArea {};
// RNN's nonlinearity (nn/options/rnn.h) and a Transformer layer's activation (transformer.h)
struct kTanh {};
struct kReLU {};
struct kGELU {};
}  // namespace enumtype
inline constexpr enumtype::kValid kValid{};
inline constexpr enumtype::kSame kSame{};
inline constexpr enumtype::kZeros kZeros{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};
// F::pad's default mode, and F::interpolate's modes (nn/options/padding.h, upsampling.h)
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kNearest kNearest{};
inline constexpr enumtype::kNearestExact kNearestExact{};
inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kBilinear kBilinear{};
inline constexpr enumtype::kBicubic kBicubic{};
inline constexpr enumtype::kTrilinear kTrilinear{};
inline constexpr enumtype::kArea kArea{};
inline constexpr enumtype::kTanh kTanh{};
inline constexpr enumtype::kReLU kReLU{};
inline constexpr enumtype::kGELU kGELU{};
}  // namespace kiln

namespace kiln::nn {

// How a convolution pads its input: explicit sizes, none (kValid), or enough for an output of
// the input's size (kSame, stride 1 only).
template <size_t D>
using ConvPadding = std::variant<ExpandingArray<D>, enumtype::kValid, enumtype::kSame>;
// What the padding holds: zeros, or the input reflected, replicated or wrapped around.
using PaddingMode =
    std::variant<enumtype::kZeros, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;

// "zeros", "reflect", "replicate" or "circular", as PyTorch names them.
inline const char* padding_mode_name(const PaddingMode& mode) {
  const char* names[] = {"zeros", "reflect", "replicate", "circular"};
  return names[mode.index()];
}

template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  KILN_ARG(int64_t, in_channels);
  KILN_ARG(int64_t, out_channels);
  KILN_ARG(ExpandingArray<D>, kernel_size);
  KILN_ARG(ExpandingArray<D>, stride) = 1;
  KILN_ARG(ConvPadding<D>, padding) = 0;
  KILN_ARG(ExpandingArray<D>, dilation) = 1;
  KILN_ARG(int64_t, groups) = 1;
  KILN_ARG(bool, bias) = true;
  KILN_ARG(PaddingMode, padding_mode) = kZeros;

 public:
  // padding({1, 2}): one size per dimension.
  ConvOptions& padding(std::initializer_list<int64_t> sizes) {
    padding_ = ExpandingArray<D>(sizes);
    return *this;
  }
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  KILN_ARG(int64_t, in_channels);
  KILN_ARG(int64_t, out_channels);
  KILN_ARG(ExpandingArray<D>, kernel_size);
  KILN_ARG(ExpandingArray<D>, stride) = 1;
  KILN_ARG(ExpandingArray<D>, padding) = 0;
  // added to one side of each output size (smaller than the stride or the dilation)
  KILN_ARG(ExpandingArray<D>, output_padding) = 0;
  KILN_ARG(int64_t, groups) = 1;
  KILN_ARG(bool, bias) = true;
  KILN_ARG(ExpandingArray<D>, dilation) = 1;
  // only kZeros, as PyTorch's
  KILN_ARG(PaddingMode, padding_mode) = kZeros;
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

struct FoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  KILN_ARG(ExpandingArray<2>, output_size);
  KILN_ARG(ExpandingArray<2>, kernel_size);
  KILN_ARG(ExpandingArray<2>, dilation) = 1;
  KILN_ARG(ExpandingArray<2>, padding) = 0;
  KILN_ARG(ExpandingArray<2>, stride) = 1;
};

struct UnfoldOptions {
  UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  KILN_ARG(ExpandingArray<2>, kernel_size);
  KILN_ARG(ExpandingArray<2>, dilation) = 1;
  KILN_ARG(ExpandingArray<2>, padding) = 0;
  KILN_ARG(ExpandingArray<2>, stride) = 1;
};

namespace functional {

template <size_t D>
struct ConvFuncOptions {
  KILN_ARG(Tensor, bias) = {};
  KILN_ARG(ExpandingArray<D>, stride) = 1;
  KILN_ARG(ConvPadding<D>, padding) = 0;
  KILN_ARG(ExpandingArray<D>, dilation) = 1;
  KILN_ARG(int64_t, groups) = 1;

 public:
  ConvFuncOptions& padding(std::initializer_list<int64_t> sizes) {
    padding_ = ExpandingArray<D>(sizes);
    return *this;
  }
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

template <size_t D>
struct ConvTransposeFuncOptions {
  KILN_ARG(Tensor, bias) = {};
  KILN_ARG(ExpandingArray<D>, stride) = 1;
  KILN_ARG(ExpandingArray<D>, padding) = 0;
  KILN_ARG(ExpandingArray<D>, output_padding) = 0;
  KILN_ARG(int64_t, groups) = 1;
  KILN_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;

using FoldFuncOptions = FoldOptions;
using UnfoldFuncOptions = UnfoldOptions;

}  // namespace functional
}  // namespace kiln::nn
