// FractionalMaxPool2d and FractionalMaxPool3d.
#include <kiln/nn/modules/fractional_pooling.h>

namespace kiln::nn {

template <size_t D>
FractionalMaxPoolImpl<D>::FractionalMaxPoolImpl(const FractionalMaxPoolOptions<D>& options)
    : options(options) {
  reset();
}

template <size_t D>
void FractionalMaxPoolImpl<D>::reset() {
  const char* name = D == 2 ? "FractionalMaxPool2d" : "FractionalMaxPool3d";
  _random_samples = register_buffer("_random_samples", options._random_samples());
  KILN_CHECK_VALUE(options.output_size() || options.output_ratio(), name, " requires specifying ",
                   "either an output size, or a pooling ratio");
  KILN_CHECK_VALUE(!(options.output_size() && options.output_ratio()), name, ": only one of ",
                   "output_size and output_ratio may be specified");
  if (options.output_ratio()) {
    for (double ratio : options.output_ratio()->values()) {
      KILN_CHECK_VALUE(ratio > 0.0 && ratio < 1.0, name, ": output_ratio must be between 0 and ",
                       "1 (got ", ratio, ")");
    }
  }
}

template <size_t D>
Tensor FractionalMaxPoolImpl<D>::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}

template <size_t D>
std::tuple<Tensor, Tensor> FractionalMaxPoolImpl<D>::forward_with_indices(const Tensor& input) {
  FractionalMaxPoolOptions<D> o = options;
  o._random_samples(_random_samples);
  if constexpr (D == 2) {
    return functional::fractional_max_pool2d_with_indices(input, o);
  } else {
    return functional::fractional_max_pool3d_with_indices(input, o);
  }
}

template <size_t D>
void FractionalMaxPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::FractionalMaxPool" << D << "d()";
}

template class FractionalMaxPoolImpl<2>;
template class FractionalMaxPoolImpl<3>;

}  // namespace kiln::nn
