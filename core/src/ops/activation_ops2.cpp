// Activations with several scalar parameters: elu (alpha, scale, input_scale; selu and celu are
// elu with fixed or derived parameters) and threshold (threshold, value), primitives with one-pass
// kernels whose functors hold the parameters (Elu<C>, Threshold<C> in
// kiln/sdk/pointwise_activation.hpp); the kernel gets them as the attributes 0, 1, ... in order.
// hardtanh (and relu6) is a composite over clamp's kernel with PyTorch's own gradient, which is 0
// at the bounds. One entry per operator (See Note [One entry per operator]).
#include "activation_backward.h"
#include "elementwise.h"
#include "operator_entry.h"

#include <kiln/autograd.h>

#include <array>
#include <cmath>

namespace kiln {
namespace detail {
namespace {

using T = const Tensor&;
using S = const Scalar&;
using EluSignature = Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&);
using PairSignature = Tensor(const Tensor&, const Scalar&, const Scalar&);
using EluOp = Operator<EluSignature>;
using PairOp = Operator<PairSignature>;

// The gradient of op(self, params...): grad -> grad_self, with the parameters as doubles.
struct ParamsFormula {
  const char* name;  // "EluBackward0"
  Tensor (*formula)(const Tensor& grad, const Tensor& self, const std::array<double, 3>& p);
};

// The dtype op computes in: floating only (elu), or every dtype but bool (threshold).
template <bool FloatingOnly>
ScalarType params_dtype(const char* op, const Tensor& x) {
  const bool ok = FloatingOnly ? is_floating_point(x.dtype()) : x.dtype() != kBool;
  if (!ok) throw_dtype_unsupported(op, x.dtype());
  return x.dtype();
}

template <class... P>
Attrs params_attrs(const P&... p) {
  Attrs attrs;
  (attrs.scalar("param", p), ...);
  return attrs;
}

template <bool FloatingOnly, class... P>
Tensor params_backend(const Operator<Tensor(const Tensor&, const P&...)>& op, const Tensor& x,
                      const P&... p) {
  params_dtype<FloatingOnly>(op.name(), x);
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  run_kernel(*op.functional(), {&x}, {&out}, params_attrs(p...));
  return out;
}

template <bool FloatingOnly, class... P>
Tensor params_inplace_backend(const Operator<Tensor(const Tensor&, const P&...)>& op,
                              const Tensor& self, const P&... p) {
  check_inplace(op.name(), self, params_dtype<FloatingOnly>(op.name(), self), self.sizes());
  run_kernel(*op.functional(), {&self}, {&self}, params_attrs(p...));
  bump_version(self);
  return self;
}

template <const ParamsFormula& F, class... P>
Tensor params_autograd(const Operator<Tensor(const Tensor&, const P&...)>& op, const Tensor& x,
                       const P&... p) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, p...);
  }
  std::array<double, 3> values{};
  size_t i = 0;
  ((values[i++] = p.to_double()), ...);
  auto node =
      autograd::detail::record(F.name, {&x}, {&out},
                               [values](autograd::detail::FunctionNode& n,
                                        const std::vector<Tensor>& g) {
                                 return std::vector<Tensor>{F.formula(g[0], n.saved(0), values)};
                               });
  if (node) node->save(x);
  return out;
}

// As PyTorch's elu_backward on self: grad * input_scale * alpha * scale * exp(x * input_scale)
// for x <= 0, grad * scale otherwise (a NaN x too); one pass where the device has the fused
// primitive (Note [Fused activation gradients]).
Tensor elu_backward(T g, T x, const std::array<double, 3>& p) {
  const double alpha = p[0], scale = p[1], input_scale = p[2];
  Tensor fused = fused_elu_backward(g, x, alpha, scale, input_scale);
  if (fused.defined()) return fused;
  Tensor negative = exp(x * input_scale) * (input_scale * alpha * scale);
  return where(le(x, 0), g * negative, g * scale);
}
Tensor threshold_gradient(T g, T x, const std::array<double, 3>& p) {
  return threshold_backward(g, x, p[0]);
}

constexpr ParamsFormula kElu{"EluBackward0", elu_backward};
constexpr ParamsFormula kThreshold{"ThresholdBackward0", threshold_gradient};

}  // namespace

EluOp elu_op("elu",
             "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
             params_backend<true, Scalar, Scalar, Scalar>);
EluOp elu__op("elu_",
              "elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> "
              "Tensor(a!)",
              params_inplace_backend<true, Scalar, Scalar, Scalar>, true, &elu_op);
const OperatorEntry<EluSignature> elu_entry(elu_op, &elu__op, kNoCast,
                                            params_autograd<kElu, Scalar, Scalar, Scalar>);
PairOp threshold_op("threshold", "threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
                    params_backend<false, Scalar, Scalar>);
PairOp threshold__op("threshold_",
                     "threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)",
                     params_inplace_backend<false, Scalar, Scalar>, true, &threshold_op);
const OperatorEntry<PairSignature> threshold_entry(threshold_op, &threshold__op, kNoCast,
                                                   params_autograd<kThreshold, Scalar, Scalar>);

namespace {
// PyTorch computes an in-place elu's gradient from its result, which a negative alpha * scale
// makes ambiguous: it refuses (in backward; kiln as soon as the call would be recorded).
Tensor elu_inplace_autograd(const EluOp& op, const Tensor& self, S alpha, S scale, S input_scale) {
  const bool records = autograd::GradMode::is_enabled() && self.requires_grad();
  KILN_CHECK_VALUE(!records || alpha.to_double() * scale.to_double() >= 0, op.name(),
                   ": in-place elu backward calculation is triggered with a negative slope which ",
                   "is not supported (alpha ", alpha.to_double(), ", scale ", scale.to_double(),
                   "). This is caused by calling in-place forward function with a negative ",
                   "slope, please call out-of-place version instead.");
  return autograd::detail::inplace_kernel<EluOp, S, S, S>(op, self, alpha, scale, input_scale);
}
[[maybe_unused]] const bool elu_inplace_installed = [] {
  elu__op.set_kernel(DispatchKey::Autograd, elu_inplace_autograd);
  return true;
}();

// --- hardtanh: clamp's kernel, PyTorch's gradient ------------------------------------------------
// Bounds do not promote: integer tensors take them as integers (truncated), as PyTorch.
std::array<Scalar, 2> hardtanh_bounds(const char* op, const Tensor& x, S min_val, S max_val) {
  KILN_CHECK_TYPE(x.dtype() != kBool, op, ": bool inputs are not supported (got a tensor of ",
                  "sizes ", x.sizes(), " and dtype bool); convert it to a numeric dtype first");
  if (is_floating_point(x.dtype())) return {min_val, max_val};
  const int64_t lo = min_val.to_long(), hi = max_val.to_long();
  KILN_CHECK_VALUE(x.dtype() != kByte || (lo >= 0 && hi >= 0), op, ": cannot do hardtanh on an ",
                   "unsigned type (uint8) with negative limits [", lo, ", ", hi, "]");
  return {Scalar(lo), Scalar(hi)};
}

Tensor hardtanh_backend(const PairOp& op, const Tensor& x, S min_val, S max_val) {
  auto [lo, hi] = hardtanh_bounds(op.name(), x, min_val, max_val);
  return clamp(x, lo, hi);
}

Tensor hardtanh_inplace_backend(const PairOp& op, const Tensor& self, S min_val, S max_val) {
  auto [lo, hi] = hardtanh_bounds(op.name(), self, min_val, max_val);
  self.clamp_(lo, hi);
  return self;
}

// As PyTorch's hardtanh_backward: 0 where x <= min_val or x >= max_val.
Tensor hardtanh_backward(T g, T x, const std::array<double, 3>& p) {
  return where(logical_or(le(x, p[0]), ge(x, p[1])), zeros_like(g), g);
}
constexpr ParamsFormula kHardtanh{"HardtanhBackward0", hardtanh_backward};

}  // namespace

PairOp hardtanh_op("hardtanh",
                   "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
                   hardtanh_backend, /*primitive=*/false);
PairOp hardtanh__op("hardtanh_",
                    "hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
                    hardtanh_inplace_backend, /*primitive=*/false, &hardtanh_op);
const OperatorEntry<PairSignature> hardtanh_entry(hardtanh_op, &hardtanh__op, kNoCast,
                                                  params_autograd<kHardtanh, Scalar, Scalar>);

}  // namespace detail

// SELU's constants (Klambauer et al., "Self-Normalizing Neural Networks"), as PyTorch's.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

Tensor elu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return detail::elu_op(x, alpha, scale, input_scale);
}
Tensor& elu_(Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  detail::elu__op(x, alpha, scale, input_scale);
  return x;
}
Tensor selu(const Tensor& x) { return detail::elu_op(x, kSeluAlpha, kSeluScale, 1.0); }
Tensor& selu_(Tensor& x) { return elu_(x, kSeluAlpha, kSeluScale, 1.0); }

namespace {
double celu_inverse_alpha(const Scalar& alpha) {
  const double a = alpha.to_double();
  KILN_CHECK_VALUE(a != 0, "celu: ZeroDivisionError: alpha cannot be 0 for CELU (it divides the ",
                   "input by alpha)");
  return 1.0 / a;
}
}  // namespace

Tensor celu(const Tensor& x, const Scalar& alpha) {
  return detail::elu_op(x, alpha, 1.0, celu_inverse_alpha(alpha));
}
Tensor& celu_(Tensor& x, const Scalar& alpha) {
  return elu_(x, alpha, 1.0, celu_inverse_alpha(alpha));
}
Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value) {
  return detail::threshold_op(x, threshold, value);
}
Tensor& threshold_(Tensor& x, const Scalar& threshold, const Scalar& value) {
  detail::threshold__op(x, threshold, value);
  return x;
}
Tensor hardtanh(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  return detail::hardtanh_op(x, min_val, max_val);
}
Tensor& hardtanh_(Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  detail::hardtanh__op(x, min_val, max_val);
  return x;
}
Tensor relu6(const Tensor& x) { return detail::hardtanh_op(x, int64_t{0}, int64_t{6}); }
Tensor& relu6_(Tensor& x) { return hardtanh_(x, int64_t{0}, int64_t{6}); }

}  // namespace kiln
