// Tensor methods of issue 15's activations and pointwise math that forward to kiln/ops.h (the
// in-place binary and ternary methods are beside their entries, in binary.cpp and
// ternary_math.cpp).
#include <kiln/ops.h>
#include <kiln/tensor.h>

namespace kiln {

Tensor Tensor::atan2(const Tensor& other) const { return kiln::atan2(*this, other); }
Tensor Tensor::hypot(const Tensor& other) const { return kiln::hypot(*this, other); }
Tensor Tensor::logaddexp(const Tensor& other) const { return kiln::logaddexp(*this, other); }
Tensor Tensor::logaddexp2(const Tensor& other) const { return kiln::logaddexp2(*this, other); }
Tensor Tensor::copysign(const Tensor& other) const { return kiln::copysign(*this, other); }
Tensor Tensor::copysign(const Scalar& other) const { return kiln::copysign(*this, other); }
Tensor Tensor::xlogy(const Tensor& other) const { return kiln::xlogy(*this, other); }
Tensor Tensor::xlogy(const Scalar& other) const { return kiln::xlogy(*this, other); }
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf,
                          std::optional<double> neginf) const {
  return kiln::nan_to_num(*this, nan, posinf, neginf);
}
const Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf,
                                  std::optional<double> neginf) const {
  copy_(kiln::nan_to_num(*this, nan, posinf, neginf));
  return *this;
}
Tensor Tensor::sgn() const { return kiln::sgn(*this); }
Tensor Tensor::deg2rad() const { return kiln::deg2rad(*this); }
Tensor Tensor::rad2deg() const { return kiln::rad2deg(*this); }
Tensor Tensor::prelu(const Tensor& weight) const { return kiln::prelu(*this, weight); }
Tensor Tensor::hardshrink(double lambd) const { return kiln::hardshrink(*this, lambd); }
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return kiln::clamp(*this, min.value_or(Tensor()), max.value_or(Tensor()));
}

}  // namespace kiln
