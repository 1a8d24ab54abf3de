// Issue 15's composite activations and pointwise functions, written from kiln's primitives so
// that they run on every device and autograd differentiates them: prelu, rrelu, glu, nan_to_num,
// sgn, deg2rad, rad2deg; and clamp with tensor bounds, a composite of maximum and minimum with
// PyTorch's own gradient (ties go to self). prelu and clamp.Tensor are operators, for their
// autocast policy and gradient.
#include "elementwise.h"
#include "operator_entry.h"

#include <kiln/autograd.h>

#include <cmath>
#include <limits>

namespace kiln {
namespace detail {
namespace {

using T = const Tensor&;
using PairOp = Operator<Tensor(const Tensor&, const Tensor&)>;
using ClampTensorOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&)>;

// --- prelu ---------------------------------------------------------------------------------------
// x for x > 0, weight * x otherwise, weight one value or one per channel (dimension 1).
Tensor prelu_composite(const PairOp& op, T x, T weight) {
  KILN_CHECK_TYPE(is_floating_point(x.dtype()), op.name(), ": expected a floating point input, ",
                  "but got ", x.sizes(), " of dtype ", dtype_name(x.dtype()));
  KILN_CHECK_TYPE(weight.dtype() == x.dtype(), op.name(), ": expected weight of the input's dtype ",
                  dtype_name(x.dtype()), ", but got ", dtype_name(weight.dtype()), " (input ",
                  x.sizes(), ", weight ", weight.sizes(), "); convert the weight first");
  KILN_CHECK_VALUE(weight.dim() <= 1, op.name(), ": Expected `weight` to be a scalar or 1D ",
                   "tensor, but got ndim = ", weight.dim(), " (weight ", weight.sizes(), ")");
  const int64_t n = weight.numel();
  if (n == 1) return where(gt(x, 0), x, weight.reshape({}) * x);
  KILN_CHECK_VALUE(x.dim() > 0, op.name(), ": Not allow zero-dim input tensor with a weight of ", n,
                   " values");
  const int64_t channels = x.dim() > 1 ? x.size(1) : 1;
  KILN_CHECK_VALUE(channels == n, op.name(), ": Mismatch of parameter numbers and input channel ",
                   "size. Found parameter numbers = ", n, " and channel size = ", channels,
                   " (input ", x.sizes(), ", weight ", weight.sizes(), ").");
  std::vector<int64_t> shape(static_cast<size_t>(x.dim() - 1), 1);
  shape[0] = n;
  Tensor w = weight.reshape(shape);
  return where(gt(x, 0), x, w * x);
}

// PyTorch's CPU and CUDA autocast lists both run prelu in the lower dtype.
constexpr AutocastPolicy kLowerPrecision{amp::detail::CastPolicy::lower_precision,
                                         amp::detail::CastPolicy::lower_precision};

// --- clamp with tensor bounds ------------------------------------------------------------------
Tensor clamp_tensor_composite(const ClampTensorOp& op, T x, T min, T max) {
  KILN_CHECK_VALUE(min.defined() || max.defined(), op.name(),
                   ": at least one of 'min' or 'max' must not be None");
  KILN_CHECK_TYPE(x.dtype() != kBool, op.name(), ": not implemented for dtype bool (input ",
                  x.sizes(), ")");
  Tensor out = x;
  if (min.defined()) out = maximum(out, min);
  if (max.defined()) out = minimum(out, max);
  return out;
}

using autograd::detail::FunctionNode;
using autograd::detail::sum_to;

// As PyTorch's clamp_backward_min_max: self keeps the gradient where min <= x <= max; min takes
// it where x < min (and min < max), max where x > max (or max < min).
std::vector<Tensor> clamp_tensor_grads(FunctionNode& n, const Tensor& g, const DimVector& xs,
                                       const DimVector& lo_s, const DimVector& hi_s) {
  Tensor x = n.saved(0), lo = n.saved(1), hi = n.saved(2);
  Tensor zero = zeros_like(g);
  std::vector<Tensor> grads(3);
  if (n.needs_input_grad(0)) {
    Tensor keep = ones_like(x, TensorOptions().dtype(kBool));
    if (lo.defined()) keep = logical_and(keep, ge(x, lo));
    if (hi.defined()) keep = logical_and(keep, le(x, hi));
    grads[0] = sum_to(where(keep, g, zero), xs);
  }
  if (n.needs_input_grad(1)) {
    Tensor take = lt(x, lo);
    if (hi.defined()) take = logical_and(take, lt(lo, hi));
    grads[1] = sum_to(where(take, g, zero), lo_s);
  }
  if (n.needs_input_grad(2)) {
    Tensor take = gt(x, hi);
    if (lo.defined()) take = logical_or(take, lt(hi, lo));
    grads[2] = sum_to(where(take, g, zero), hi_s);
  }
  return grads;
}

Tensor clamp_tensor_autograd(const ClampTensorOp& op, T x, T min, T max) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, min, max);
  }
  DimVector xs(x.sizes());
  DimVector lo_s = min.defined() ? DimVector(min.sizes()) : DimVector();
  DimVector hi_s = max.defined() ? DimVector(max.sizes()) : DimVector();
  auto node =
      autograd::detail::record("ClampBackward0", {&x, &min, &max}, {&out},
                               [xs, lo_s, hi_s](FunctionNode& n, const std::vector<Tensor>& g) {
                                 return clamp_tensor_grads(n, g[0], xs, lo_s, hi_s);
                               });
  if (node) {
    node->save(x);
    node->save(min);
    node->save(max);
  }
  return out;
}

}  // namespace

PairOp prelu_op("prelu", "prelu(Tensor self, Tensor weight) -> Tensor", prelu_composite,
                /*primitive=*/false);
const OperatorEntry<Tensor(const Tensor&, const Tensor&)> prelu_entry(prelu_op, nullptr,
                                                                      kLowerPrecision, no_backward);
ClampTensorOp clamp_tensor_op("clamp.Tensor",
                              "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> "
                              "Tensor",
                              clamp_tensor_composite, /*primitive=*/false);
const OperatorEntry<Tensor(const Tensor&, const Tensor&, const Tensor&)> clamp_tensor_entry(
    clamp_tensor_op, nullptr, kNoCast, clamp_tensor_autograd);

}  // namespace detail

Tensor prelu(const Tensor& x, const Tensor& weight) { return detail::prelu_op(x, weight); }

Tensor rrelu(const Tensor& x, const Scalar& lower, const Scalar& upper, bool training) {
  const double lo = lower.to_double(), hi = upper.to_double();
  KILN_CHECK_VALUE(lo <= hi, "rrelu: lower bound ", lo, " must be less than or equal to the ",
                   "upper bound ", hi);
  KILN_CHECK_TYPE(x.is_floating_point(), "rrelu: expected a floating point input, but got ",
                  x.sizes(), " of dtype ", dtype_name(x.dtype()));
  if (!training) return leaky_relu(x, (lo + hi) / 2);
  // as PyTorch's rrelu_with_noise: a slope drawn uniformly from [lower, upper] per element x <= 0
  Tensor slope = empty_like(x);
  {
    NoGradGuard no_grad;
    slope.uniform_(lo, hi);
    slope = where(le(x, 0), slope, 1.0);
  }
  return x * slope;
}

Tensor glu(const Tensor& x, int64_t dim) {
  KILN_CHECK_VALUE(x.dim() > 0, "glu: glu does not support scalars because halving size must be ",
                   "even");
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  KILN_CHECK_INDEX(d >= 0 && d < x.dim(), "glu: dimension ", dim, " is out of range for a tensor ",
                   "of sizes ", x.sizes());
  KILN_CHECK_VALUE(x.size(d) % 2 == 0, "glu: Halving dimension must be even, but dimension ", d,
                   " is size ", x.size(d), " (input ", x.sizes(), ")");
  KILN_CHECK_TYPE(x.is_floating_point(), "glu: expected a floating point input, but got ",
                  x.sizes(), " of dtype ", dtype_name(x.dtype()));
  std::vector<Tensor> halves = x.chunk(2, d);
  return halves[0] * sigmoid(halves[1]);
}

namespace {
// The largest finite value of a floating dtype.
double largest_finite(ScalarType dtype) {
  switch (dtype) {
    case kHalf: return 65504.0;
    case kBFloat16: return 3.3895313892515355e38;
    case kFloat: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}
}  // namespace

Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!x.is_floating_point()) return x.clone();
  const double big = largest_finite(x.dtype());
  const double inf = std::numeric_limits<double>::infinity();
  Tensor out = where(eq(x, -inf), Scalar(neginf.value_or(-big)), x);
  out = where(eq(x, inf), Scalar(posinf.value_or(big)), out);
  return where(isnan(x), Scalar(nan.value_or(0.0)), out);
}
Tensor& nan_to_num_(Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                    std::optional<double> neginf) {
  x.copy_(nan_to_num(x, nan, posinf, neginf));
  return x;
}

Tensor sgn(const Tensor& x) { return sign(x); }
Tensor deg2rad(const Tensor& x) {
  return x * 0.017453292519943295769236907684886127134428718885417;
}
Tensor rad2deg(const Tensor& x) { return x * 57.295779513082320876798154814105170332405472466564; }

Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max) {
  return detail::clamp_tensor_op(x, min, max);
}

}  // namespace kiln
