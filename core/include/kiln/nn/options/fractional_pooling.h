// Options of fractional max pooling, as libtorch's FractionalMaxPoolOptions<D>:
// FractionalMaxPool2dOptions(3).output_size(2), FractionalMaxPool3dOptions({2, 3, 3})
// .output_ratio(0.5)._random_samples(samples).
#pragma once

#include <kiln/nn/options.h>
#include <kiln/tensor.h>

#include <array>
#include <initializer_list>
#include <optional>

namespace kiln::nn {

// D ratios given as one or as D (libtorch's ExpandingArray<D, double>).
template <size_t D>
class ExpandingRatio {
 public:
  ExpandingRatio(double single) { values_.fill(single); }  // NOLINT: as libtorch
  ExpandingRatio(std::initializer_list<double> list) {     // NOLINT: as libtorch
    KILN_CHECK_VALUE(list.size() == D, "expected ", D, " ratios, but got ", list.size());
    std::copy(list.begin(), list.end(), values_.begin());
  }
  double operator[](size_t i) const { return values_[i]; }
  const std::array<double, D>& values() const { return values_; }

 private:
  std::array<double, D> values_{};
};

template <size_t D>
struct FractionalMaxPoolOptions {
  FractionalMaxPoolOptions(ExpandingArray<D> kernel_size)  // NOLINT: as libtorch
      : kernel_size_(kernel_size) {}
  KILN_ARG(ExpandingArray<D>, kernel_size);
  // The output's spatial size, or its ratio to the input's (in (0, 1)): one of the two.
  KILN_ARG(std::optional<ExpandingArray<D>>, output_size) = std::nullopt;
  KILN_ARG(std::optional<ExpandingRatio<D>>, output_ratio) = std::nullopt;
  // [N, C, D] samples in [0, 1) that place the pooling regions (drawn from the default
  // generator when undefined).
  KILN_ARG(Tensor, _random_samples) = Tensor();

 public:
  // Braced lists, which std::optional's setter cannot take: output_size({4, 5}).
  FractionalMaxPoolOptions& output_size(std::initializer_list<int64_t> sizes) {
    output_size_ = ExpandingArray<D>(sizes);
    return *this;
  }
  FractionalMaxPoolOptions& output_ratio(std::initializer_list<double> ratios) {
    output_ratio_ = ExpandingRatio<D>(ratios);
    return *this;
  }
};
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<2>;
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<3>;

namespace functional {
using FractionalMaxPool2dFuncOptions = FractionalMaxPool2dOptions;
using FractionalMaxPool3dFuncOptions = FractionalMaxPool3dOptions;
}  // namespace functional

}  // namespace kiln::nn
