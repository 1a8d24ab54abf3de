// Options of the pooling layers and functions, as libtorch's (torch/nn/options/pooling.h):
// MaxPool2dOptions(3).stride(2).padding(1), AdaptiveAvgPool2dOptions({7, 7}),
// MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{8, 8}). A stride left unset is the
// kernel size.
#pragma once

#include <kiln/nn/options.h>

#include <optional>
#include <ostream>
#include <vector>

namespace kiln::nn {

// D sizes given as one or as D, each of which may be absent (nullopt: keep the input's size),
// as libtorch's ExpandingArrayWithOptional: AdaptiveAvgPool2dOptions({7, std::nullopt}).
template <size_t D>
class ExpandingArrayWithOptional {
 public:
  ExpandingArrayWithOptional(int64_t single) { values_.fill(single); }  // NOLINT: as libtorch
  ExpandingArrayWithOptional(std::initializer_list<std::optional<int64_t>> list) {  // NOLINT
    KILN_CHECK_VALUE(list.size() == D, "expected ", D, " output sizes, but got ", list.size());
    std::copy(list.begin(), list.end(), values_.begin());
  }
  ExpandingArrayWithOptional(const std::vector<int64_t>& v) {  // NOLINT: as libtorch
    KILN_CHECK_VALUE(v.size() == D, "expected ", D, " output sizes, but got ", v.size());
    std::copy(v.begin(), v.end(), values_.begin());
  }
  ExpandingArrayWithOptional(const ExpandingArray<D>& a) {  // NOLINT: as libtorch
    for (size_t i = 0; i < D; ++i) values_[i] = a[i];
  }
  const std::optional<int64_t>& operator[](size_t i) const { return values_[i]; }
  static constexpr size_t size() { return D; }

 private:
  std::array<std::optional<int64_t>, D> values_;
};

// As libtorch prints it: [5, None].
template <size_t D>
std::ostream& operator<<(std::ostream& out, const ExpandingArrayWithOptional<D>& a) {
  out << '[';
  for (size_t i = 0; i < D; ++i) {
    out << (i ? ", " : "");
    if (a[i]) {
      out << *a[i];
    } else {
      out << "None";
    }
  }
  return out << ']';
}

template <size_t D>
struct MaxPoolOptions {
  MaxPoolOptions(ExpandingArray<D> kernel_size)  // NOLINT
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  KILN_ARG(ExpandingArray<D>, kernel_size);
  KILN_ARG(ExpandingArray<D>, stride);
  KILN_ARG(ExpandingArray<D>, padding) = 0;
  KILN_ARG(ExpandingArray<D>, dilation) = 1;
  // Whether a window that starts inside the input (or its left padding) and overhangs its end
  // gives an output (ceil) or not (floor).
  KILN_ARG(bool, ceil_mode) = false;
};
using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;

template <size_t D>
struct AvgPoolOptions {
  AvgPoolOptions(ExpandingArray<D> kernel_size)  // NOLINT
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  KILN_ARG(ExpandingArray<D>, kernel_size);
  KILN_ARG(ExpandingArray<D>, stride);
  KILN_ARG(ExpandingArray<D>, padding) = 0;
  KILN_ARG(bool, ceil_mode) = false;
  // Whether the zero padding counts in the divisor.
  KILN_ARG(bool, count_include_pad) = true;
  // When given, every window's sum is divided by it instead of the window's size.
  KILN_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using AvgPool3dOptions = AvgPoolOptions<3>;

template <class OutputSize>
struct AdaptiveMaxPoolOptions {
  AdaptiveMaxPoolOptions(OutputSize output_size) : output_size_(output_size) {}  // NOLINT
  KILN_ARG(OutputSize, output_size);
};
using AdaptiveMaxPool1dOptions = AdaptiveMaxPoolOptions<ExpandingArray<1>>;
using AdaptiveMaxPool2dOptions = AdaptiveMaxPoolOptions<ExpandingArrayWithOptional<2>>;
using AdaptiveMaxPool3dOptions = AdaptiveMaxPoolOptions<ExpandingArrayWithOptional<3>>;

template <class OutputSize>
struct AdaptiveAvgPoolOptions {
  AdaptiveAvgPoolOptions(OutputSize output_size) : output_size_(output_size) {}  // NOLINT
  KILN_ARG(OutputSize, output_size);
};
using AdaptiveAvgPool1dOptions = AdaptiveAvgPoolOptions<ExpandingArray<1>>;
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<ExpandingArrayWithOptional<2>>;
using AdaptiveAvgPool3dOptions = AdaptiveAvgPoolOptions<ExpandingArrayWithOptional<3>>;

template <size_t D>
struct MaxUnpoolOptions {
  MaxUnpoolOptions(ExpandingArray<D> kernel_size)  // NOLINT
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  KILN_ARG(ExpandingArray<D>, kernel_size);
  KILN_ARG(ExpandingArray<D>, stride);
  KILN_ARG(ExpandingArray<D>, padding) = 0;
};
using MaxUnpool1dOptions = MaxUnpoolOptions<1>;
using MaxUnpool2dOptions = MaxUnpoolOptions<2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<3>;

template <size_t D>
struct LPPoolOptions {
  LPPoolOptions(double norm_type, ExpandingArray<D> kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  KILN_ARG(double, norm_type);
  KILN_ARG(ExpandingArray<D>, kernel_size);
  KILN_ARG(ExpandingArray<D>, stride);
  KILN_ARG(bool, ceil_mode) = false;
};
using LPPool1dOptions = LPPoolOptions<1>;
using LPPool2dOptions = LPPoolOptions<2>;

namespace functional {
using MaxPool1dFuncOptions = MaxPool1dOptions;
using MaxPool2dFuncOptions = MaxPool2dOptions;
using MaxPool3dFuncOptions = MaxPool3dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
using AvgPool3dFuncOptions = AvgPool3dOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPool3dOptions;
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPool1dOptions;
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPool3dOptions;
using LPPool1dFuncOptions = LPPool1dOptions;
using LPPool2dFuncOptions = LPPool2dOptions;

// MaxUnpoolOptions plus the output size (D spatial sizes, or D + 2 with batch and channels).
template <size_t D>
struct MaxUnpoolFuncOptions {
  MaxUnpoolFuncOptions(ExpandingArray<D> kernel_size)  // NOLINT
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  KILN_ARG(ExpandingArray<D>, kernel_size);
  KILN_ARG(ExpandingArray<D>, stride);
  KILN_ARG(ExpandingArray<D>, padding) = 0;
  KILN_ARG(std::optional<std::vector<int64_t>>, output_size) = std::nullopt;
};
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<1>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<3>;
}  // namespace functional

}  // namespace kiln::nn
