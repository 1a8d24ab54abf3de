// FractionalMaxPool2d and FractionalMaxPool3d, as libtorch's: FractionalMaxPool2d(
// FractionalMaxPool2dOptions(3).output_size(2)); forward_with_indices also returns where each
// maximum came from. A given _random_samples is kept as a buffer.
#pragma once

#include <kiln/nn/functional/fractional_pooling.h>
#include <kiln/nn/module.h>

#include <tuple>

namespace kiln::nn {

template <size_t D>
class KILN_API FractionalMaxPoolImpl : public Module {
 public:
  FractionalMaxPoolImpl(ExpandingArray<D> kernel_size)  // NOLINT: as libtorch
      : FractionalMaxPoolImpl(FractionalMaxPoolOptions<D>(kernel_size)) {}
  explicit FractionalMaxPoolImpl(const FractionalMaxPoolOptions<D>& options);
  // Checks the options and registers _random_samples.
  void reset();
  // F::fractional_max_pool{D}d(input, options).
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  FractionalMaxPoolOptions<D> options;
  Tensor _random_samples;
};

class KILN_API FractionalMaxPool2dImpl : public FractionalMaxPoolImpl<2> {
 public:
  using FractionalMaxPoolImpl<2>::FractionalMaxPoolImpl;
};
KILN_MODULE(FractionalMaxPool2d);

class KILN_API FractionalMaxPool3dImpl : public FractionalMaxPoolImpl<3> {
 public:
  using FractionalMaxPoolImpl<3>::FractionalMaxPoolImpl;
};
KILN_MODULE(FractionalMaxPool3d);

}  // namespace kiln::nn
