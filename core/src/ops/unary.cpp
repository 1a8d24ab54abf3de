// Unary elementwise operators. As binary.cpp: a dtype rule per family, one line per operator.
#include "elementwise.h"

#include "../autograd/families.h"

namespace kiln {
namespace detail {
namespace {

using UnaryOp = Operator<Tensor(const Tensor&)>;

struct UnaryRule {
  ScalarType (*compute)(const char* op, ScalarType input);
  bool bool_output;
};

ScalarType keep(const char*, ScalarType t) { return t; }
ScalarType keep_no_bool(const char* op, ScalarType t) {
  if (t == kBool) throw_dtype_unsupported(op, t);
  return t;
}
ScalarType floating(const char*, ScalarType t) {
  return is_floating_point(t) ? t : default_float_dtype();
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

constexpr UnaryRule kKeep{keep, false};
constexpr UnaryRule kKeepNoBool{keep_no_bool, false};
constexpr UnaryRule kFloating{floating, false};
constexpr UnaryRule kIntegral{integral, false};
constexpr UnaryRule kNegate{negatable, false};
constexpr UnaryRule kToBool{keep, true};

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

}  // namespace

#define KILN_UNARY_OPS(name, rule)                                                              \
  UnaryOp name##_op(#name, #name "(Tensor self) -> Tensor", unary_backend<rule>);              \
  UnaryOp name##__op(#name "_", #name "_(Tensor(a!) self) -> Tensor(a!)",                       \
                     unary_inplace_backend<rule>, true, &name##_op)

KILN_UNARY_OPS(neg, kNegate);
KILN_UNARY_OPS(abs, kKeepNoBool);
KILN_UNARY_OPS(sign, kKeep);
KILN_UNARY_OPS(exp, kFloating);
KILN_UNARY_OPS(log, kFloating);
KILN_UNARY_OPS(log1p, kFloating);
KILN_UNARY_OPS(expm1, kFloating);
KILN_UNARY_OPS(sqrt, kFloating);
KILN_UNARY_OPS(rsqrt, kFloating);
KILN_UNARY_OPS(sin, kFloating);
KILN_UNARY_OPS(cos, kFloating);
KILN_UNARY_OPS(tanh, kFloating);
KILN_UNARY_OPS(sigmoid, kFloating);
KILN_UNARY_OPS(relu, kKeepNoBool);
KILN_UNARY_OPS(bitwise_not, kIntegral);
KILN_UNARY_OPS(logical_not, kToBool);
#undef KILN_UNARY_OPS

}  // namespace detail

Tensor neg(const Tensor& x) { return detail::neg_op(x); }
Tensor abs(const Tensor& x) { return detail::abs_op(x); }
Tensor sign(const Tensor& x) { return detail::sign_op(x); }
Tensor exp(const Tensor& x) { return detail::exp_op(x); }
Tensor log(const Tensor& x) { return detail::log_op(x); }
Tensor log1p(const Tensor& x) { return detail::log1p_op(x); }
Tensor expm1(const Tensor& x) { return detail::expm1_op(x); }
Tensor sqrt(const Tensor& x) { return detail::sqrt_op(x); }
Tensor rsqrt(const Tensor& x) { return detail::rsqrt_op(x); }
Tensor sin(const Tensor& x) { return detail::sin_op(x); }
Tensor cos(const Tensor& x) { return detail::cos_op(x); }
Tensor tanh(const Tensor& x) { return detail::tanh_op(x); }
Tensor sigmoid(const Tensor& x) { return detail::sigmoid_op(x); }
Tensor relu(const Tensor& x) { return detail::relu_op(x); }
Tensor bitwise_not(const Tensor& x) { return detail::bitwise_not_op(x); }
Tensor logical_not(const Tensor& x) { return detail::logical_not_op(x); }
Tensor square(const Tensor& x) { return mul(x, x); }

Tensor& Tensor::neg_() {
  detail::neg__op(*this);
  return *this;
}
Tensor& Tensor::abs_() {
  detail::abs__op(*this);
  return *this;
}
Tensor& Tensor::exp_() {
  detail::exp__op(*this);
  return *this;
}
Tensor& Tensor::log_() {
  detail::log__op(*this);
  return *this;
}
Tensor& Tensor::sqrt_() {
  detail::sqrt__op(*this);
  return *this;
}
Tensor& Tensor::relu_() {
  detail::relu__op(*this);
  return *this;
}
Tensor& Tensor::sigmoid_() {
  detail::sigmoid__op(*this);
  return *this;
}
Tensor& Tensor::tanh_() {
  detail::tanh__op(*this);
  return *this;
}

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
namespace kiln::detail {
namespace {

using autograd::detail::register_backward;
using autograd::detail::UnaryBackward;
using T = const Tensor&;

const UnaryBackward neg_backward{"NegBackward0", false, false,
                                 [](T g, T, T) { return neg(g); }};
const UnaryBackward abs_backward{"AbsBackward0", true, false,
                                 [](T g, T self, T) { return g * sign(self); }};
const UnaryBackward sign_backward{"SignBackward0", false, false,
                                  [](T g, T, T) { return zeros_like(g); }};
const UnaryBackward exp_backward{"ExpBackward0", false, true,
                                 [](T g, T, T result) { return g * result; }};
const UnaryBackward log_backward{"LogBackward0", true, false,
                                 [](T g, T self, T) { return g / self; }};
const UnaryBackward log1p_backward{"Log1PBackward0", true, false,
                                   [](T g, T self, T) { return g / (self + 1); }};
const UnaryBackward expm1_backward{"Expm1Backward0", false, true,
                                   [](T g, T, T result) { return g * (result + 1); }};
const UnaryBackward sqrt_backward{"SqrtBackward0", false, true,
                                  [](T g, T, T result) { return g / (result * 2); }};
const UnaryBackward rsqrt_backward{"RsqrtBackward0", false, true, [](T g, T, T result) {
                                     return g * pow(result, 3) * -0.5;
                                   }};
const UnaryBackward sin_backward{"SinBackward0", true, false,
                                 [](T g, T self, T) { return g * cos(self); }};
const UnaryBackward cos_backward{"CosBackward0", true, false,
                                 [](T g, T self, T) { return -g * sin(self); }};
const UnaryBackward tanh_backward{"TanhBackward0", false, true, [](T g, T, T result) {
                                    return g * (1 - result * result);
                                  }};
const UnaryBackward sigmoid_backward{"SigmoidBackward0", false, true, [](T g, T, T result) {
                                       return g * result * (1 - result);
                                     }};
const UnaryBackward relu_backward{"ReluBackward0", false, true,
                                  [](T g, T, T result) { return g * gt(result, 0); }};

const bool unary_backwards_registered = [] {
  register_backward(neg_op, neg_backward, &neg__op);
  register_backward(abs_op, abs_backward, &abs__op);
  register_backward(sign_op, sign_backward, &sign__op);
  register_backward(exp_op, exp_backward, &exp__op);
  register_backward(log_op, log_backward, &log__op);
  register_backward(log1p_op, log1p_backward, &log1p__op);
  register_backward(expm1_op, expm1_backward, &expm1__op);
  register_backward(sqrt_op, sqrt_backward, &sqrt__op);
  register_backward(rsqrt_op, rsqrt_backward, &rsqrt__op);
  register_backward(sin_op, sin_backward, &sin__op);
  register_backward(cos_op, cos_backward, &cos__op);
  register_backward(tanh_op, tanh_backward, &tanh__op);
  register_backward(sigmoid_op, sigmoid_backward, &sigmoid__op);
  register_backward(relu_op, relu_backward, &relu__op);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
