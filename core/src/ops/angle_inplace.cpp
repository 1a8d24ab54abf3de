// The in-place forms of sgn, deg2rad and rad2deg (pointwise_composite.cpp), as PyTorch's:
// deg2rad_ and rad2deg_ are mul_ by the same constant as the out-of-place forms (so the numbers
// are theirs), refusing a self whose dtype cannot hold the floating result; sgn_ writes sign.
#include "elementwise.h"

#include <kiln/ops.h>
#include <kiln/tensor.h>

namespace kiln {

const Tensor& Tensor::sgn_() const {
  detail::check_inplace("sgn_", *this, dtype(), sizes());
  copy_(kiln::sign(*this));
  return *this;
}

const Tensor& Tensor::deg2rad_() const {
  detail::check_inplace("deg2rad_", *this, kiln::result_type(*this, Scalar(1.0)), sizes());
  return mul_(0.017453292519943295769236907684886127134428718885417);
}

const Tensor& Tensor::rad2deg_() const {
  detail::check_inplace("rad2deg_", *this, kiln::result_type(*this, Scalar(1.0)), sizes());
  return mul_(57.295779513082320876798154814105170332405472466564);
}

Tensor& deg2rad_(Tensor& x) {
  x.deg2rad_();
  return x;
}
Tensor& rad2deg_(Tensor& x) {
  x.rad2deg_();
  return x;
}

}  // namespace kiln
