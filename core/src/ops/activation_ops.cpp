// Unary activations with one scalar parameter (gelu's approximation, leaky_relu's slope,
// hardshrink's and softshrink's lambda): primitives with one-pass kernels, whose functors take
// the parameter as a member (Gelu<C>, LeakyRelu<C>, ... in kiln/sdk/pointwise.hpp). The kernel
// gets the parameter as its attribute 0, an F64 (docs/primitives.md). One entry per operator
// (See Note [One entry per operator]): the Autograd kernel is param_autograd<formula>, which
// records the formula with the parameter.
#include "elementwise.h"
#include "operator_entry.h"

#include <kiln/autograd.h>

#include <cmath>
#include <string_view>

namespace kiln {
namespace detail {
namespace {

using ParamSignature = Tensor(const Tensor&, const Scalar&);
using ParamOp = Operator<ParamSignature>;

// The gradient of op(self, param): grad -> grad_self.
struct ParamFormula {
  const char* name;  // "GeluBackward0"
  Tensor (*formula)(const Tensor& grad, const Tensor& self, double param);
};

ScalarType floating_only(const ParamOp& op, const Tensor& x) {
  if (!is_floating_point(x.dtype())) throw_dtype_unsupported(op.name(), x.dtype());
  return x.dtype();
}

Tensor param_backend(const ParamOp& op, const Tensor& x, const Scalar& param) {
  floating_only(op, x);
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  run_kernel(*op.functional(), {&x}, {&out}, Attrs().f64("param", param.to_double()));
  return out;
}

Tensor param_inplace_backend(const ParamOp& op, const Tensor& self, const Scalar& param) {
  check_inplace(op.name(), self, floating_only(op, self), self.sizes());
  run_kernel(*op.functional(), {&self}, {&self}, Attrs().f64("param", param.to_double()));
  bump_version(self);
  return self;
}

template <const ParamFormula& F>
Tensor param_autograd(const ParamOp& op, const Tensor& x, const Scalar& param) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, param);
  }
  const double p = param.to_double();
  auto node = autograd::detail::record(F.name, {&x}, {&out},
                                       [p](autograd::detail::FunctionNode& n,
                                           const std::vector<Tensor>& g) {
                                         return std::vector<Tensor>{F.formula(g[0], n.saved(0), p)};
                                       });
  if (node) node->save(x);
  return out;
}

using T = const Tensor&;
constexpr double kSqrtHalf = 0.7071067811865476;       // 1 / sqrt(2)
constexpr double kInvSqrtTwoPi = 0.3989422804014327;   // 1 / sqrt(2 pi)
constexpr double kSqrtTwoOverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kKappa = 0.044715;

// Note [Fused gelu backward]: gelu's gradient is about ten elementwise operators, each a pass
// over memory (and, in bfloat16, a rounding). gelu_backward is an optional primitive that does
// it in one pass, computing in float32 for the 16-bit floats and rounding once, as PyTorch's
// GeluBackward. It runs where the device has it and no graph of the gradient is being built;
// under create_graph the formula below is written in differentiable operators.
using GeluBackwardOp = Operator<Tensor(const Tensor&, const Tensor&, double)>;

Tensor gelu_backward_backend(const GeluBackwardOp& op, const Tensor& grad, const Tensor& x,
                             double tanh_approximation) {
  KILN_CHECK_TYPE(is_floating_point(x.dtype()) && grad.dtype() == x.dtype(), op.name(),
                  ": expected a floating point self and a grad_output of its dtype, but got ",
                  dtype_name(grad.dtype()), " and ", dtype_name(x.dtype()));
  KILN_CHECK_VALUE(grad.sizes() == x.sizes(), op.name(), ": grad_output of size ", grad.sizes(),
                   " does not match self of size ", x.sizes());
  common_device(op.name(), {&grad, &x});
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  run_kernel(op, {&grad, &x}, {&out}, Attrs().f64("tanh_approximation", tanh_approximation));
  return out;
}

GeluBackwardOp gelu_backward_op(
    "gelu_backward",
    "gelu_backward(Tensor grad_output, Tensor self, float tanh_approximation) -> Tensor",
    gelu_backward_backend);
const bool gelu_backward_registered = [] {
  gelu_backward_op.set_optional();
  return true;
}();

// As PyTorch's GeluBackward: Phi(x) + x * phi(x), or the derivative of the tanh approximation.
// See Note [Fused gelu backward].
Tensor gelu_backward(T g, T x, double tanh_approximation) {
  if (!autograd::GradMode::is_enabled() && gelu_backward_op.has_plugin_kernel(x.device().type()) &&
      g.dtype() == x.dtype() && g.sizes() == x.sizes() && g.device() == x.device()) {
    return gelu_backward_op(g, x, tanh_approximation);
  }
  if (x.dtype() == kHalf || x.dtype() == kBFloat16) {  // in float32, rounded once, as the fused
    return gelu_backward(g.to(kFloat), x.to(kFloat), tanh_approximation).to(x.dtype());
  }
  if (tanh_approximation == 0) {
    Tensor cdf = (erf(x * kSqrtHalf) + 1) * 0.5;
    Tensor pdf = exp(x * x * -0.5) * kInvSqrtTwoPi;
    return g * (cdf + x * pdf);
  }
  Tensor x_sq = x * x;
  Tensor t = tanh((x + x_sq * x * kKappa) * kSqrtTwoOverPi);
  Tensor left = (t + 1) * 0.5;
  Tensor right = x * 0.5 * (1 - t * t) * ((x_sq * (3 * kKappa) + 1) * kSqrtTwoOverPi);
  return g * (left + right);
}
// 0 where -lambd <= x <= lambd, as PyTorch's hardshrink_backward (softshrink's too).
Tensor shrink_backward(T g, T x, double lambd) {
  return where(logical_and(ge(x, -lambd), le(x, lambd)), 0, g);
}

constexpr ParamFormula kGelu{"GeluBackward0", gelu_backward};
constexpr ParamFormula kLeakyRelu{"LeakyReluBackward0", [](T g, T x, double slope) {
                                    return where(gt(x, 0), g, g * slope);
                                  }};
constexpr ParamFormula kHardshrink{"HardshrinkBackward0", shrink_backward};
constexpr ParamFormula kSoftshrink{"SoftshrinkBackward0", shrink_backward};

}  // namespace
}  // namespace detail

// The operator objects detail::name_op and detail::name__op (in-place), and their entry.
#define KILN_UNARY_PARAM(name, param, autocast, formula)                                      \
  namespace detail {                                                                          \
  ParamOp name##_op(#name, #name "(Tensor self, Scalar " param ") -> Tensor", param_backend); \
  ParamOp name##__op(#name "_", #name "_(Tensor(a!) self, Scalar " param ") -> Tensor(a!)",   \
                     param_inplace_backend, true, &name##_op);                                \
  const OperatorEntry<ParamSignature> name##_entry(name##_op, &name##__op, autocast,          \
                                                   param_autograd<formula>);                  \
  }                                                                                           \
  static_assert(true, "the entry ends with a semicolon")

KILN_UNARY_PARAM(gelu, "tanh_approximation", kNoCast, kGelu);
KILN_UNARY_PARAM(leaky_relu, "negative_slope", kNoCast, kLeakyRelu);
KILN_UNARY_PARAM(hardshrink, "lambd", kNoCast, kHardshrink);
KILN_UNARY_PARAM(softshrink, "lambd", kNoCast, kSoftshrink);
#undef KILN_UNARY_PARAM

Tensor gelu(const Tensor& x, std::string_view approximate) {
  KILN_CHECK_VALUE(approximate == "none" || approximate == "tanh", "gelu(): approximate '",
                   approximate, "' is not one of 'none' and 'tanh'");
  return detail::gelu_op(x, approximate == "tanh" ? 1.0 : 0.0);
}
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return detail::leaky_relu_op(x, negative_slope);
}
Tensor& leaky_relu_(Tensor& x, double negative_slope) {
  detail::leaky_relu__op(x, negative_slope);
  return x;
}
Tensor hardshrink(const Tensor& x, double lambd) { return detail::hardshrink_op(x, lambd); }
Tensor softshrink(const Tensor& x, double lambd) {
  KILN_CHECK_VALUE(lambd >= 0, "softshrink(): lambda must be greater or equal to 0, but found ",
                   "to be ", lambd, ".");
  return detail::softshrink_op(x, lambd);
}

}  // namespace kiln
