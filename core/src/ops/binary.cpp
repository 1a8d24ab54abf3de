// Binary elementwise operators: arithmetic and bitwise (comparisons and logical operators are in
// compare.cpp). Each family is a dtype rule plugged into one out-of-place and one in-place
// backend (binary.h); each operator is one entry (See Note [One entry per operator]).
#include "binary.h"

namespace kiln {
namespace detail {

using AlphaOp = Operator<Tensor(const Tensor&, const Tensor&, const Scalar&)>;

void prepare(Prepared& p, const char* op, const Rule& rule, const Tensor& a, const Tensor& b) {
  const TensorImpl& ia = a.impl();
  const TensorImpl& ib = b.impl();
  // two tensors of one dtype on one device (the common case) promote to that dtype there
  bool same = ia.dtype == ib.dtype && ia.device == ib.device && !ia.wrapped_number &&
              !ib.wrapped_number;
  Device device = same ? ia.device : common_device(op, {&a, &b});
  ScalarType compute = rule.compute(op, same ? ia.dtype : result_type_of({&a, &b}));
  if (same && compute == ia.dtype && a.sizes().equals(b.sizes())) {
    // nothing to convert, move or broadcast: the inputs as they are
    p.x = &a;
    p.y = &b;
    p.out = empty_tensor(a.sizes(), rule.bool_output ? kBool : compute, device);
    return;
  }
  DimVector sizes = broadcast_dims(a.sizes(), b.sizes());
  p.x = &prepared_input(a, compute, device, sizes, p.x_slot);
  p.y = &prepared_input(b, compute, device, sizes, p.y_slot);
  p.out = empty_tensor(sizes, rule.bool_output ? kBool : compute, device);
}

namespace {

void check_alpha(const char* op, ScalarType compute, const Scalar& alpha) {
  KILN_CHECK_TYPE(is_floating_point(compute) || !alpha.is_floating_point(), op,
                  ": for integral input tensors, argument alpha must not be a floating point ",
                  "number");
}

template <bool Subtract>
Tensor alpha_backend(const AlphaOp& op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const Rule& rule = Subtract ? kArithmeticNoBool : kArithmetic;
  if (Subtract && a.dtype() == kBool && b.dtype() == kBool) {
    throw TypeError(str(op.name(), ": subtraction, the `-` operator, with two bool tensors is ",
                        "not supported. Use the `^` or `logical_xor()` operator instead."));
  }
  Prepared p;
  prepare(p, op.name(), rule, a, b);
  check_alpha(op.name(), p.out.dtype(), alpha);
  run_kernel(*op.functional(), {p.x, p.y}, {&p.out}, Attrs().scalar("alpha", alpha));
  return std::move(p.out);
}

template <bool Subtract>
Tensor alpha_inplace_backend(const AlphaOp& op, const Tensor& self, const Tensor& b,
                             const Scalar& alpha) {
  ScalarType compute = result_type_of({&self, &b});
  DimVector sizes = broadcast_dims(self.sizes(), b.sizes());
  check_inplace(op.name(), self, compute, sizes);
  if (compute == self.dtype()) {
    check_alpha(op.name(), compute, alpha);
    Tensor slot;
    const Tensor& y =
        prepared_input(b, compute, common_device(op.name(), {&self, &b}), sizes, slot);
    run_kernel(*op.functional(), {&self, &y}, {&self}, Attrs().scalar("alpha", alpha));
  } else {
    const_cast<Tensor&>(self).copy_(alpha_backend<Subtract>(op, self, b, alpha));
  }
  bump_version(self);
  return self;
}

}  // namespace

namespace {
// where a == b the gradient is shared half and half, as PyTorch
Tensor larger_share(const Tensor& g, const Tensor& mine, const Tensor& other) {
  return where(eq(mine, other), g / 2, where(gt(mine, other), g, zeros_like(g)));
}
}  // namespace

// The same for `self op alpha * other` (add, sub), whose d/dother the family kernel scales by
// alpha.
#define KILN_ALPHA(name, subtract, autocast, ...)                                            \
  AlphaOp name##_op(#name, #name "(Tensor self, Tensor other, Scalar alpha=1) -> Tensor",    \
                    alpha_backend<subtract>);                                                \
  AlphaOp name##__op(#name "_",                                                              \
                     #name "_(Tensor(a!) self, Tensor other, Scalar alpha=1) -> Tensor(a!)", \
                     alpha_inplace_backend<subtract>, true, &name##_op);                     \
  const OperatorEntry<Tensor(const Tensor&, const Tensor&, const Scalar&)> name##_entry(     \
      name##_op, &name##__op, autocast, __VA_ARGS__)

using T = const Tensor&;

KILN_ALPHA(add, false, kNoCast,
           {{"AddBackward0", false, false, false, [](T g, T, T, T) { return g; },
             [](T g, T, T, T) { return g; }}});
KILN_ALPHA(sub, true, kNoCast,
           {{"SubBackward0", false, false, false, [](T g, T, T, T) { return g; },
             [](T g, T, T, T) { return neg(g); }}});
KILN_BINARY(mul, kArithmetic, kNoCast,
            {"MulBackward0", true, true, false, [](T g, T, T b, T) { return g * b; },
             [](T g, T a, T, T) { return g * a; }});
KILN_BINARY(div, kTrueDivide, kNoCast,
            {"DivBackward0", true, true, false, [](T g, T, T b, T) { return g / b; },
             [](T g, T a, T b, T) { return -g * a / (b * b); }});
KILN_BINARY(floor_divide, kArithmeticNoBool, kNoCast, no_backward);
KILN_BINARY(remainder, kArithmeticNoBool, kNoCast,
            {"RemainderBackward0", true, true, false, [](T g, T, T, T) { return g; },
             [](T g, T a, T b, T) { return -g * floor_divide(a, b); }});
KILN_BINARY(fmod, kArithmeticNoBool, kNoCast,
            {"FmodBackward0", true, true, true, [](T g, T, T, T) { return g; },
             [](T g, T a, T b, T result) { return -g * (a - result) / b; }});
KILN_BINARY(pow, kArithmeticNoBool, kFp32OffCpu,
            {"PowBackward1", true, true, true,
             [](T g, T a, T b, T) { return where(eq(b, 0), zeros_like(g), g * b * pow(a, b - 1)); },
             [](T g, T a, T b, T result) {
               // 0^b has derivative 0 in b for b >= 0 (log(0) would give nan)
               return where(logical_and(eq(a, 0), ge(b, 0)), zeros_like(g), g * result * log(a));
             }});
KILN_BINARY(maximum, kArithmetic, kNoCast,
            {"MaximumBackward0", true, true, false,
             [](T g, T a, T b, T) { return larger_share(g, a, b); },
             [](T g, T a, T b, T) { return larger_share(g, b, a); }});
KILN_BINARY(minimum, kArithmetic, kNoCast,
            {"MinimumBackward0", true, true, false,
             [](T g, T a, T b, T) { return larger_share(g, b, a); },
             [](T g, T a, T b, T) { return larger_share(g, a, b); }});
KILN_BINARY(bitwise_and, kBitwise, kNoCast, no_backward);
KILN_BINARY(bitwise_or, kBitwise, kNoCast, no_backward);
KILN_BINARY(bitwise_xor, kBitwise, kNoCast, no_backward);

// Issue 15: binary math. atan2, copysign and xlogy compute integers in float32 (kTrueDivide);
// logaddexp, logaddexp2 and hypot refuse them, as PyTorch.
namespace {
ScalarType floating_promoted(const char* op, ScalarType t) {
  if (!is_floating_point(t)) throw_dtype_unsupported(op, t);
  return t;
}
constexpr Rule kFloatingPromoted{floating_promoted, false};
// PyTorch's CUDA autocast list promotes atan2 to the widest input; its CPU list leaves it alone.
constexpr AutocastPolicy kPromoteOffCpu{amp::detail::CastPolicy::none,
                                        amp::detail::CastPolicy::promote};
Tensor atan2_grad(T g, T a, T b, bool for_a) {
  Tensor denominator = a * a + b * b;
  return for_a ? g * b / denominator : g * -a / denominator;
}
}  // namespace
KILN_BINARY(atan2, kTrueDivide, kPromoteOffCpu,
            {"Atan2Backward0", true, true, false,
             [](T g, T a, T b, T) { return atan2_grad(g, a, b, true); },
             [](T g, T a, T b, T) { return atan2_grad(g, a, b, false); }});
KILN_BINARY(logaddexp, kFloatingPromoted, kNoCast,
            {"LogaddexpBackward0", true, true, false,
             [](T g, T a, T b, T) { return g / (exp(b - a) + 1); },
             [](T g, T a, T b, T) { return g / (exp(a - b) + 1); }});
KILN_BINARY(logaddexp2, kFloatingPromoted, kNoCast,
            {"Logaddexp2Backward0", true, true, false,
             [](T g, T a, T b, T) { return g / (exp2(b - a) + 1); },
             [](T g, T a, T b, T) { return g / (exp2(a - b) + 1); }});
KILN_BINARY(hypot, kFloatingPromoted, kNoCast,
            {"HypotBackward0", true, true, true,
             [](T g, T a, T, T result) { return g * a / result; },
             [](T g, T, T b, T result) { return g * b / result; }});
KILN_BINARY(copysign, kTrueDivide, kNoCast,
            {"CopysignBackward0", true, false, true,
             [](T g, T a, T, T result) { return where(eq(a, 0), zeros_like(g), g * (result / a)); },
             // zero, as a function of g so that a second derivative is defined
             [](T g, T, T, T) { return g * 0; }});
KILN_BINARY(xlogy, kTrueDivide, kNoCast,
            {"XlogyBackward0", true, true, false,
             [](T g, T a, T b, T) { return g * xlogy(ne(a, 0), b); },
             [](T g, T a, T b, T) { return g * a / b; }});
#undef KILN_ALPHA

Tensor wrap_for(const Tensor& a, const Scalar& s) {
  return wrap_scalar(s, scalar_result_type(a, s), a.device());
}

}  // namespace detail

using detail::wrap_for;

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return detail::add_op(a, b, alpha);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return detail::add_op(a, wrap_for(a, b), alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return detail::sub_op(a, b, alpha);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return detail::sub_op(a, wrap_for(a, b), alpha);
}
Tensor mul(const Tensor& a, const Tensor& b) { return detail::mul_op(a, b); }
Tensor mul(const Tensor& a, const Scalar& b) { return detail::mul_op(a, wrap_for(a, b)); }
Tensor div(const Tensor& a, const Tensor& b) { return detail::div_op(a, b); }
Tensor div(const Tensor& a, const Scalar& b) { return detail::div_op(a, wrap_for(a, b)); }
Tensor floor_divide(const Tensor& a, const Tensor& b) { return detail::floor_divide_op(a, b); }
Tensor floor_divide(const Tensor& a, const Scalar& b) {
  return detail::floor_divide_op(a, wrap_for(a, b));
}
Tensor remainder(const Tensor& a, const Tensor& b) { return detail::remainder_op(a, b); }
Tensor remainder(const Tensor& a, const Scalar& b) {
  return detail::remainder_op(a, wrap_for(a, b));
}
Tensor fmod(const Tensor& a, const Tensor& b) { return detail::fmod_op(a, b); }
Tensor fmod(const Tensor& a, const Scalar& b) { return detail::fmod_op(a, wrap_for(a, b)); }
Tensor pow(const Tensor& a, const Tensor& b) { return detail::pow_op(a, b); }
Tensor pow(const Tensor& a, const Scalar& b) { return detail::pow_op(a, wrap_for(a, b)); }
Tensor pow(const Scalar& a, const Tensor& b) { return detail::pow_op(wrap_for(b, a), b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return detail::maximum_op(a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return detail::minimum_op(a, b); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return detail::bitwise_and_op(a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return detail::bitwise_or_op(a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return detail::bitwise_xor_op(a, b); }
Tensor atan2(const Tensor& a, const Tensor& b) { return detail::atan2_op(a, b); }
Tensor logaddexp(const Tensor& a, const Tensor& b) { return detail::logaddexp_op(a, b); }
Tensor logaddexp2(const Tensor& a, const Tensor& b) { return detail::logaddexp2_op(a, b); }
Tensor hypot(const Tensor& a, const Tensor& b) { return detail::hypot_op(a, b); }
Tensor copysign(const Tensor& a, const Tensor& b) { return detail::copysign_op(a, b); }
Tensor copysign(const Tensor& a, const Scalar& b) { return detail::copysign_op(a, wrap_for(a, b)); }
Tensor xlogy(const Tensor& a, const Tensor& b) { return detail::xlogy_op(a, b); }
Tensor xlogy(const Tensor& a, const Scalar& b) { return detail::xlogy_op(a, wrap_for(a, b)); }
Tensor xlogy(const Scalar& a, const Tensor& b) { return detail::xlogy_op(wrap_for(b, a), b); }

// --- in-place methods ---------------------------------------------------------------------------
const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const {
  detail::add__op(*this, other, alpha);
  return *this;
}
const Tensor& Tensor::add_(const Scalar& other, const Scalar& alpha) const {
  detail::add__op(*this, wrap_for(*this, other), alpha);
  return *this;
}
const Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) const {
  detail::sub__op(*this, other, alpha);
  return *this;
}
const Tensor& Tensor::sub_(const Scalar& other, const Scalar& alpha) const {
  detail::sub__op(*this, wrap_for(*this, other), alpha);
  return *this;
}
const Tensor& Tensor::mul_(const Tensor& other) const {
  detail::mul__op(*this, other);
  return *this;
}
const Tensor& Tensor::mul_(const Scalar& other) const {
  detail::mul__op(*this, wrap_for(*this, other));
  return *this;
}
const Tensor& Tensor::div_(const Tensor& other) const {
  detail::div__op(*this, other);
  return *this;
}
const Tensor& Tensor::div_(const Scalar& other) const {
  detail::div__op(*this, wrap_for(*this, other));
  return *this;
}
const Tensor& Tensor::pow_(const Scalar& exponent) const {
  detail::pow__op(*this, wrap_for(*this, exponent));
  return *this;
}
const Tensor& Tensor::atan2_(const Tensor& other) const {
  detail::atan2__op(*this, other);
  return *this;
}
const Tensor& Tensor::hypot_(const Tensor& other) const {
  detail::hypot__op(*this, other);
  return *this;
}
const Tensor& Tensor::copysign_(const Tensor& other) const {
  detail::copysign__op(*this, other);
  return *this;
}
const Tensor& Tensor::copysign_(const Scalar& other) const {
  detail::copysign__op(*this, wrap_for(*this, other));
  return *this;
}
const Tensor& Tensor::xlogy_(const Tensor& other) const {
  detail::xlogy__op(*this, other);
  return *this;
}
const Tensor& Tensor::xlogy_(const Scalar& other) const {
  detail::xlogy__op(*this, wrap_for(*this, other));
  return *this;
}

}  // namespace kiln
