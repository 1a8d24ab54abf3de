// Comparisons and logical operators, one entry each (See Note [One entry per operator]), and
// the whole-tensor comparisons built on them: equal, allclose, isclose, and the tests isnan,
// isinf, isposinf, isneginf, isfinite.
#include "binary.h"

#include <limits>

namespace kiln {
namespace detail {

KILN_BINARY(eq, kCompare, kNoCast, no_backward);
KILN_BINARY(ne, kCompare, kNoCast, no_backward);
KILN_BINARY(lt, kCompare, kNoCast, no_backward);
KILN_BINARY(le, kCompare, kNoCast, no_backward);
KILN_BINARY(gt, kCompare, kNoCast, no_backward);
KILN_BINARY(ge, kCompare, kNoCast, no_backward);
KILN_BINARY(logical_and, kCompare, kNoCast, no_backward);
KILN_BINARY(logical_or, kCompare, kNoCast, no_backward);
KILN_BINARY(logical_xor, kCompare, kNoCast, no_backward);

}  // namespace detail

Tensor eq(const Tensor& a, const Tensor& b) { return detail::eq_op(a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return detail::ne_op(a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return detail::lt_op(a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return detail::le_op(a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return detail::gt_op(a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return detail::ge_op(a, b); }
Tensor eq(const Tensor& a, const Scalar& b) { return detail::eq_op(a, detail::wrap_for(a, b)); }
Tensor ne(const Tensor& a, const Scalar& b) { return detail::ne_op(a, detail::wrap_for(a, b)); }
Tensor lt(const Tensor& a, const Scalar& b) { return detail::lt_op(a, detail::wrap_for(a, b)); }
Tensor le(const Tensor& a, const Scalar& b) { return detail::le_op(a, detail::wrap_for(a, b)); }
Tensor gt(const Tensor& a, const Scalar& b) { return detail::gt_op(a, detail::wrap_for(a, b)); }
Tensor ge(const Tensor& a, const Scalar& b) { return detail::ge_op(a, detail::wrap_for(a, b)); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return detail::logical_and_op(a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return detail::logical_or_op(a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return detail::logical_xor_op(a, b); }

Tensor isnan(const Tensor& x) { return ne(x, x); }

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
// false everywhere, for inputs that cannot hold infinities or NaNs
Tensor never(const Tensor& x) { return zeros(x.sizes(), x.options().dtype(kBool)); }
}  // namespace

Tensor isinf(const Tensor& x) { return x.is_floating_point() ? eq(abs(x), kInf) : never(x); }
Tensor isposinf(const Tensor& x) { return x.is_floating_point() ? eq(x, kInf) : never(x); }
Tensor isneginf(const Tensor& x) { return x.is_floating_point() ? eq(x, -kInf) : never(x); }
Tensor isfinite(const Tensor& x) {
  if (!x.is_floating_point()) return logical_not(never(x));
  return logical_and(eq(x, x), ne(abs(x), kInf));
}

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
