// Whole-tensor comparisons: equal, allclose, isclose, isnan.
#include "elementwise.h"

namespace kiln {

Tensor isnan(const Tensor& x) { return ne(x, x); }

// |a - b| <= atol + rtol * |b|, elementwise; NaNs equal when equal_nan.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  KILN_CHECK_TYPE(a.dtype() == b.dtype(), "isclose: expected self and other to have the same ",
                  "dtype, but got ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  if (!a.is_floating_point()) return eq(a, b);
  Tensor close = eq(a, b);
  Tensor diff = abs(a - b);
  Tensor tolerance = abs(b) * rtol + atol;
  close = logical_or(close, logical_and(le(diff, tolerance), eq(diff - diff, 0)));
  if (equal_nan) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  return close;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
  if (!a.sizes().equals(b.sizes())) return false;
  if (a.numel() == 0) return true;
  return all(eq(a, b)).item<bool>();
}

bool Tensor::equal(const Tensor& other) const { return kiln::equal(*this, other); }
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return kiln::allclose(*this, other, rtol, atol, equal_nan);
}

}  // namespace kiln
