// Unary elementwise operators: a dtype rule per family, one entry per operator (See Note [One
// entry per operator]).
#include "activation_backward.h"
#include "elementwise.h"
#include "operator_entry.h"

#include <cmath>

namespace kiln {
namespace detail {
namespace {

using UnaryOp = Operator<Tensor(const Tensor&)>;

// The dtype the kernel computes in for an input dtype (or a TypeError), whether the output is
// bool, and the rule's columns in docs/primitives.md (See Note [Generated primitive rows]).
struct UnaryRule {
  ScalarType (*compute)(const char* op, ScalarType input);
  bool bool_output;
  const char* doc_columns;
};

ScalarType keep(const char*, ScalarType t) { return t; }
ScalarType keep_no_bool(const char* op, ScalarType t) {
  if (t == kBool) throw_dtype_unsupported(op, t);
  return t;
}
ScalarType floating(const char*, ScalarType t) {
  return is_floating_point(t) ? t : default_float_dtype();
}
ScalarType floating_only(const char* op, ScalarType t) {
  if (!is_floating_point(t)) throw_dtype_unsupported(op, t);
  return t;
}
ScalarType integral(const char* op, ScalarType t) {
  KILN_CHECK_TYPE(is_integral(t, true), op, ": only integral and bool tensors are supported ",
                  "(got ", dtype_name(t), ")");
  return t;
}
ScalarType negatable(const char* op, ScalarType t) {
  KILN_CHECK_TYPE(t != kBool, op, ": negation, the `-` operator, on a bool tensor is not ",
                  "supported. If you are trying to invert a mask, use the `~` or ",
                  "`logical_not()` operator instead.");
  return t;
}

constexpr UnaryRule kKeep{keep, false, "x | out | — | all |"};
constexpr UnaryRule kKeepNoBool{keep_no_bool, false, "x | out | — | all but bool |"};
constexpr UnaryRule kFloating{floating, false,
                              "x | out | — | floating | core converts integer and bool inputs to "
                              "the default dtype (float32)"};
constexpr UnaryRule kFloatingOnly{floating_only, false,
                                  "x | out | — | floating | core refuses other dtypes"};
constexpr UnaryRule kIntegral{integral, false, "x | out | — | bool, integers |"};
constexpr UnaryRule kNegate{negatable, false, "x | out | — | all but bool |"};
constexpr UnaryRule kToBool{keep, true, "x (any dtype) | out (bool) | — | |"};

template <const UnaryRule& R>
Tensor unary_backend(const UnaryOp& op, const Tensor& x) {
  ScalarType compute = R.compute(op.name(), x.dtype());
  Tensor in = x.dtype() == compute ? x : x.to(compute);
  Tensor out = empty_tensor(x.sizes(), R.bool_output ? kBool : compute, x.device());
  run_kernel(*op.functional(), {&in}, {&out});
  return out;
}

template <const UnaryRule& R>
Tensor unary_inplace_backend(const UnaryOp& op, const Tensor& self) {
  ScalarType compute = R.compute(op.name(), self.dtype());
  check_inplace(op.name(), self, R.bool_output ? kBool : compute, self.sizes());
  if (compute == self.dtype() && !R.bool_output) {
    run_kernel(*op.functional(), {&self}, {&self});
  } else {
    const_cast<Tensor&>(self).copy_(unary_backend<R>(op, self));
  }
  bump_version(self);
  return self;
}

using T = const Tensor&;  // the formulas' arguments

}  // namespace
}  // namespace detail

// The operator objects detail::name_op and detail::name__op (in-place), their entry, their row
// of docs/primitives.md, and the public function kiln::name: `rule` a UnaryRule, `autocast` an
// AutocastPolicy, then the BackwardFormula (name, saves self, saves result, formula) or
// no_backward.
#define KILN_UNARY(name, rule, autocast, ...)                                               \
  namespace detail {                                                                        \
  UnaryOp name##_op(#name, #name "(Tensor self) -> Tensor", unary_backend<rule>);           \
  UnaryOp name##__op(#name "_", #name "_(Tensor(a!) self) -> Tensor(a!)",                   \
                     unary_inplace_backend<rule>, true, &name##_op);                        \
  const OperatorEntry<Tensor(const Tensor&)> name##_entry(name##_op, &name##__op, autocast, \
                                                          __VA_ARGS__);                     \
  const PrimitiveRow name##_row(name##_op, rule.doc_columns);                               \
  }                                                                                         \
  Tensor name(const Tensor& x) { return detail::name##_op(x); }                             \
  static_assert(true, "the entry ends with a semicolon")

KILN_UNARY(neg, kNegate, kNoCast, {"NegBackward0", false, false, [](T g, T, T) { return neg(g); }});
KILN_UNARY(abs, kKeepNoBool, kNoCast,
           {"AbsBackward0", true, false, [](T g, T self, T) { return g * sign(self); }});
KILN_UNARY(sign, kKeep, kNoCast,
           {"SignBackward0", false, false, [](T g, T, T) { return zeros_like(g); }});
KILN_UNARY(exp, kFloating, kFp32OffCpu,
           {"ExpBackward0", false, true, [](T g, T, T result) { return g * result; }});
KILN_UNARY(log, kFloating, kFp32OffCpu,
           {"LogBackward0", true, false, [](T g, T self, T) { return g / self; }});
KILN_UNARY(log1p, kFloating, kFp32OffCpu,
           {"Log1PBackward0", true, false, [](T g, T self, T) { return g / (self + 1); }});
KILN_UNARY(expm1, kFloating, kFp32OffCpu,
           {"Expm1Backward0", false, true, [](T g, T, T result) { return g * (result + 1); }});
KILN_UNARY(sqrt, kFloating, kNoCast,
           {"SqrtBackward0", false, true, [](T g, T, T result) { return g / (result * 2); }});
KILN_UNARY(rsqrt, kFloating, kFp32OffCpu, {"RsqrtBackward0", false, true, [](T g, T, T result) {
                                             return g * pow(result, 3) * -0.5;
                                           }});
KILN_UNARY(sin, kFloating, kNoCast,
           {"SinBackward0", true, false, [](T g, T self, T) { return g * cos(self); }});
KILN_UNARY(cos, kFloating, kNoCast,
           {"CosBackward0", true, false, [](T g, T self, T) { return -g * sin(self); }});
KILN_UNARY(tanh, kFloating, kNoCast, {"TanhBackward0", false, true, [](T g, T, T result) {
                                        return g * (1 - result * result);
                                      }});
KILN_UNARY(sigmoid, kFloating, kNoCast, {"SigmoidBackward0", false, true, [](T g, T, T result) {
                                           return g * result * (1 - result);
                                         }});
// As PyTorch's: threshold_backward(grad, result, 0) (a NaN result passes the gradient).
KILN_UNARY(relu, kKeepNoBool, kNoCast, {"ReluBackward0", false, true, [](T g, T, T result) {
                                          return detail::threshold_backward(g, result, 0);
                                        }});
KILN_UNARY(bitwise_not, kIntegral, kNoCast, no_backward);
KILN_UNARY(logical_not, kToBool, kNoCast, no_backward);

// Issue 15: activations and math functions. Constants of the formulas: 2 / sqrt(pi), ln 2, ln 10,
// pi.
constexpr double kTwoOverSqrtPi = 1.1283791670955126;
constexpr double kLn2 = 0.6931471805599453;
constexpr double kLn10 = 2.302585092994046;
constexpr double kPi = 3.141592653589793;
namespace detail {
namespace {
Tensor zero_gradient(T g, T, T) { return zeros_like(g); }
// softplus(x) = log(1 + exp(x)), without overflow.
Tensor softplus_stable(T x) { return relu(x) + log1p(exp(-abs(x))); }
}  // namespace
}  // namespace detail
KILN_UNARY(floor, kKeepNoBool, kNoCast, {"FloorBackward0", false, false, detail::zero_gradient});
KILN_UNARY(ceil, kKeepNoBool, kNoCast, {"CeilBackward0", false, false, detail::zero_gradient});
KILN_UNARY(round, kKeepNoBool, kNoCast, {"RoundBackward0", false, false, detail::zero_gradient});
KILN_UNARY(trunc, kKeepNoBool, kNoCast, {"TruncBackward0", false, false, detail::zero_gradient});
KILN_UNARY(frac, kFloatingOnly, kNoCast,
           {"FracBackward0", false, false, [](T g, T, T) { return g * 1; }});
KILN_UNARY(reciprocal, kFloating, kFp32OffCpu,
           {"ReciprocalBackward0", false, true,
            [](T g, T, T result) { return -g * (result * result); }});
KILN_UNARY(log2, kFloating, kFp32OffCpu,
           {"Log2Backward0", true, false, [](T g, T self, T) { return g / (self * kLn2); }});
KILN_UNARY(log10, kFloating, kFp32OffCpu,
           {"Log10Backward0", true, false, [](T g, T self, T) { return g / (self * kLn10); }});
KILN_UNARY(exp2, kFloating, kNoCast,
           {"Exp2Backward0", false, true, [](T g, T, T result) { return g * result * kLn2; }});
KILN_UNARY(tan, kFloating, kFp32OffCpu, {"TanBackward0", false, true, [](T g, T, T result) {
                                           return g * (result * result + 1);
                                         }});
KILN_UNARY(sinh, kFloating, kFp32OffCpu,
           {"SinhBackward0", true, false, [](T g, T self, T) { return g * cosh(self); }});
KILN_UNARY(cosh, kFloating, kFp32OffCpu,
           {"CoshBackward0", true, false, [](T g, T self, T) { return g * sinh(self); }});
KILN_UNARY(asin, kFloating, kFp32OffCpu, {"AsinBackward0", true, false, [](T g, T self, T) {
                                            return g * rsqrt(1 - self * self);
                                          }});
KILN_UNARY(acos, kFloating, kFp32OffCpu, {"AcosBackward0", true, false, [](T g, T self, T) {
                                            return -g * rsqrt(1 - self * self);
                                          }});
KILN_UNARY(atan, kFloating, kNoCast,
           {"AtanBackward0", true, false, [](T g, T self, T) { return g / (self * self + 1); }});
KILN_UNARY(asinh, kFloating, kNoCast, {"AsinhBackward0", true, false, [](T g, T self, T) {
                                         return g * rsqrt(self * self + 1);
                                       }});
KILN_UNARY(acosh, kFloating, kNoCast, {"AcoshBackward0", true, false, [](T g, T self, T) {
                                         return g * rsqrt(self * self - 1);
                                       }});
KILN_UNARY(atanh, kFloating, kNoCast,
           {"AtanhBackward0", true, false, [](T g, T self, T) { return g / (1 - self * self); }});
KILN_UNARY(erf, kFloating, kNoCast, {"ErfBackward0", true, false, [](T g, T self, T) {
                                       return g * exp(-(self * self)) * kTwoOverSqrtPi;
                                     }});
KILN_UNARY(erfc, kFloating, kNoCast, {"ErfcBackward0", true, false, [](T g, T self, T) {
                                        return g * exp(-(self * self)) * -kTwoOverSqrtPi;
                                      }});
KILN_UNARY(erfinv, kFloating, kFp32OffCpu,
           {"ErfinvBackward0", false, true,
            [](T g, T, T result) { return g * exp(result * result) * (1 / kTwoOverSqrtPi); }});
// As PyTorch's sinc_backward: 0 where x is 0 (sinc is flat there).
KILN_UNARY(sinc, kFloating, kNoCast, {"SincBackward0", true, false, [](T g, T x, T) {
                                        Tensor px = x * kPi;
                                        Tensor squared_pi = x * x * kPi;
                                        Tensor out = g * (px * cos(px) - sin(px)) / squared_pi;
                                        return where(eq(squared_pi, 0), 0.0, out);
                                      }});
KILN_UNARY(silu, kFloatingOnly, kNoCast, {"SiluBackward0", true, false, [](T g, T self, T) {
                                            Tensor s = sigmoid(self);
                                            return g * s * (1 + self * (1 - s));
                                          }});
KILN_UNARY(mish, kFloatingOnly, kNoCast, {"MishBackward0", true, false, [](T g, T self, T) {
                                            Tensor t = tanh(detail::softplus_stable(self));
                                            return g * (t + self * sigmoid(self) * (1 - t * t));
                                          }});
// As PyTorch's hardswish_backward and hardsigmoid_backward.
KILN_UNARY(hardswish, kFloatingOnly, kNoCast, {"HardswishBackward0", true, false, [](T g, T x, T) {
                                                 Tensor fused =
                                                     detail::fused_hardswish_backward(g, x);
                                                 if (fused.defined()) return fused;
                                                 Tensor inner = where(le(x, 3), x / 3 + 0.5, 1.0);
                                                 return g * where(lt(x, -3), 0.0, inner);
                                               }});
KILN_UNARY(hardsigmoid, kFloatingOnly, kNoCast,
           {"HardsigmoidBackward0", true, false, [](T g, T x, T) {
              // PyTorch's kernel multiplies by 1/6 rounded to float32, in every dtype
              constexpr double kOneSixthF = static_cast<double>(1.0f / 6.0f);
              return where(logical_and(gt(x, -3), lt(x, 3)), g * kOneSixthF, zeros_like(g));
            }});
#undef KILN_UNARY

Tensor round(const Tensor& x, int64_t decimals) {
  if (decimals == 0) return round(x);
  KILN_CHECK_VALUE(decimals >= -308 && decimals <= 308, "round(): decimals ", decimals,
                   " is out of [-308, 308]: 10^decimals is not a finite double");
  KILN_CHECK_TYPE(is_floating_point(x.dtype()), "round(): decimals ", decimals,
                  " needs a floating-point tensor (got ", dtype_name(x.dtype()), ")");
  // as PyTorch: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for d < 0
  const double ten_pow = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  return decimals > 0 ? round(x * ten_pow) / ten_pow : round(x / ten_pow) * ten_pow;
}
Tensor logsigmoid(const Tensor& x) { return -detail::softplus_stable(-x); }
Tensor softsign(const Tensor& x) { return x / (abs(x) + 1); }
Tensor tanhshrink(const Tensor& x) { return x - tanh(x); }

Tensor square(const Tensor& x) { return mul(x, x); }
Tensor& hardswish_(Tensor& x) {
  detail::hardswish__op(x);
  return x;
}
Tensor& hardsigmoid_(Tensor& x) {
  detail::hardsigmoid__op(x);
  return x;
}

const Tensor& Tensor::neg_() const {
  detail::neg__op(*this);
  return *this;
}
const Tensor& Tensor::abs_() const {
  detail::abs__op(*this);
  return *this;
}
const Tensor& Tensor::exp_() const {
  detail::exp__op(*this);
  return *this;
}
const Tensor& Tensor::log_() const {
  detail::log__op(*this);
  return *this;
}
const Tensor& Tensor::sqrt_() const {
  detail::sqrt__op(*this);
  return *this;
}
const Tensor& Tensor::relu_() const {
  detail::relu__op(*this);
  return *this;
}
const Tensor& Tensor::sigmoid_() const {
  detail::sigmoid__op(*this);
  return *this;
}
const Tensor& Tensor::tanh_() const {
  detail::tanh__op(*this);
  return *this;
}

}  // namespace kiln
