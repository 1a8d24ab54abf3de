// Binary elementwise operators: arithmetic, comparisons, logical and bitwise. Each family is a
// dtype rule plugged into one out-of-place and one in-place backend; each operator is one entry
// (See Note [One entry per operator]).
#include "elementwise.h"
#include "operator_entry.h"

namespace kiln {
namespace detail {
namespace {

using BinaryOp = Operator<Tensor(const Tensor&, const Tensor&)>;
using AlphaOp = Operator<Tensor(const Tensor&, const Tensor&, const Scalar&)>;

// A family's dtype rule: the dtype the inputs are converted to, given the promoted dtype; and
// whether the output is bool (comparisons, logical) or that dtype.
struct Rule {
  ScalarType (*compute)(const char* op, ScalarType promoted);
  bool bool_output;
};

ScalarType same_as_promoted(const char*, ScalarType t) { return t; }
ScalarType no_bool(const char* op, ScalarType t) {
  if (t == kBool) throw_dtype_unsupported(op, t);
  return t;
}
ScalarType to_floating(const char*, ScalarType t) {
  return is_floating_point(t) ? t : default_float_dtype();
}
ScalarType integral_only(const char* op, ScalarType t) {
  KILN_CHECK_TYPE(is_integral(t, true), op, ": only integral and bool tensors are supported ",
                  "(got ", dtype_name(t), ")");
  return t;
}

constexpr Rule kArithmetic{same_as_promoted, false};
constexpr Rule kArithmeticNoBool{no_bool, false};
constexpr Rule kTrueDivide{to_floating, false};
constexpr Rule kCompare{same_as_promoted, true};
constexpr Rule kBitwise{integral_only, false};

// Inputs converted and broadcast, and the output allocated, for one call. x and y point at the
// caller's tensors when those need no conversion, else at x_slot and y_slot.
struct Prepared {
  const Tensor* x;
  const Tensor* y;
  Tensor out, x_slot, y_slot;
  Prepared() = default;
  Prepared(const Prepared&) = delete;  // x and y may point into the object
  Prepared& operator=(const Prepared&) = delete;
};

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

template <const Rule& R>
Tensor binary_backend(const BinaryOp& op, const Tensor& a, const Tensor& b) {
  Prepared p;
  prepare(p, op.name(), R, a, b);
  run_kernel(*op.functional(), {p.x, p.y}, {&p.out});
  return std::move(p.out);
}

// Writes op(self, b) into self: directly when the dtypes agree, through a temporary otherwise.
template <const Rule& R>
Tensor binary_inplace_backend(const BinaryOp& op, const Tensor& self, const Tensor& b) {
  ScalarType compute = R.compute(op.name(), result_type_of({&self, &b}));
  ScalarType out_dtype = R.bool_output ? kBool : compute;
  DimVector sizes = broadcast_dims(self.sizes(), b.sizes());
  check_inplace(op.name(), self, out_dtype, sizes);
  Device device = common_device(op.name(), {&self, &b});
  if (out_dtype == self.dtype() && compute == self.dtype()) {
    Tensor slot;
    const Tensor& y = prepared_input(b, compute, device, sizes, slot);
    run_kernel(*op.functional(), {&self, &y}, {&self});
  } else {
    Prepared p;
    prepare(p, op.name(), R, self, b);
    run_kernel(*op.functional(), {p.x, p.y}, {&p.out});
    const_cast<Tensor&>(self).copy_(p.out);
  }
  bump_version(self);
  return self;
}

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

// name_op, name__op (in-place) and their entry: `rule` a Rule, `autocast` an AutocastPolicy, then
// the BackwardFormula (name, saves a, saves b, saves result, d/da, d/db) or no_backward.
#define KILN_BINARY(name, rule, autocast, ...)                                                  \
  BinaryOp name##_op(#name, #name "(Tensor self, Tensor other) -> Tensor",                     \
                     binary_backend<rule>);                                                    \
  BinaryOp name##__op(#name "_", #name "_(Tensor(a!) self, Tensor other) -> Tensor(a!)",       \
                      binary_inplace_backend<rule>, true, &name##_op);                         \
  const OperatorEntry<Tensor(const Tensor&, const Tensor&)> name##_entry(                      \
      name##_op, &name##__op, autocast, __VA_ARGS__)

// The same for `self op alpha * other` (add, sub), whose d/dother the family kernel scales by
// alpha.
#define KILN_ALPHA(name, subtract, autocast, ...)                                               \
  AlphaOp name##_op(#name, #name "(Tensor self, Tensor other, Scalar alpha=1) -> Tensor",      \
                    alpha_backend<subtract>);                                                  \
  AlphaOp name##__op(#name "_",                                                                \
                     #name "_(Tensor(a!) self, Tensor other, Scalar alpha=1) -> Tensor(a!)",   \
                     alpha_inplace_backend<subtract>, true, &name##_op);                       \
  const OperatorEntry<Tensor(const Tensor&, const Tensor&, const Scalar&)> name##_entry(       \
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
KILN_BINARY(eq, kCompare, kNoCast, no_backward);
KILN_BINARY(ne, kCompare, kNoCast, no_backward);
KILN_BINARY(lt, kCompare, kNoCast, no_backward);
KILN_BINARY(le, kCompare, kNoCast, no_backward);
KILN_BINARY(gt, kCompare, kNoCast, no_backward);
KILN_BINARY(ge, kCompare, kNoCast, no_backward);
KILN_BINARY(logical_and, kCompare, kNoCast, no_backward);
KILN_BINARY(logical_or, kCompare, kNoCast, no_backward);
KILN_BINARY(logical_xor, kCompare, kNoCast, no_backward);
KILN_BINARY(bitwise_and, kBitwise, kNoCast, no_backward);
KILN_BINARY(bitwise_or, kBitwise, kNoCast, no_backward);
KILN_BINARY(bitwise_xor, kBitwise, kNoCast, no_backward);
#undef KILN_ALPHA
#undef KILN_BINARY

// `a op number`: the number becomes a 0-dim tensor of the promoted dtype on a's device.
Tensor wrap_for(const Tensor& a, const Scalar& s) {
  return wrap_scalar(s, scalar_result_type(a, s), a.device());
}

}  // namespace detail

using detail::wrap_for;

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return detail::add_op(a, b, alpha); }
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return detail::add_op(a, wrap_for(a, b), alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return detail::sub_op(a, b, alpha); }
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
Tensor eq(const Tensor& a, const Tensor& b) { return detail::eq_op(a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return detail::ne_op(a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return detail::lt_op(a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return detail::le_op(a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return detail::gt_op(a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return detail::ge_op(a, b); }
Tensor eq(const Tensor& a, const Scalar& b) { return detail::eq_op(a, wrap_for(a, b)); }
Tensor ne(const Tensor& a, const Scalar& b) { return detail::ne_op(a, wrap_for(a, b)); }
Tensor lt(const Tensor& a, const Scalar& b) { return detail::lt_op(a, wrap_for(a, b)); }
Tensor le(const Tensor& a, const Scalar& b) { return detail::le_op(a, wrap_for(a, b)); }
Tensor gt(const Tensor& a, const Scalar& b) { return detail::gt_op(a, wrap_for(a, b)); }
Tensor ge(const Tensor& a, const Scalar& b) { return detail::ge_op(a, wrap_for(a, b)); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return detail::logical_and_op(a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return detail::logical_or_op(a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return detail::logical_xor_op(a, b); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return detail::bitwise_and_op(a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return detail::bitwise_or_op(a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return detail::bitwise_xor_op(a, b); }

// --- in-place methods ---------------------------------------------------------------------------
Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  detail::add__op(*this, other, alpha);
  return *this;
}
Tensor& Tensor::add_(const Scalar& other, const Scalar& alpha) {
  detail::add__op(*this, wrap_for(*this, other), alpha);
  return *this;
}
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  detail::sub__op(*this, other, alpha);
  return *this;
}
Tensor& Tensor::sub_(const Scalar& other, const Scalar& alpha) {
  detail::sub__op(*this, wrap_for(*this, other), alpha);
  return *this;
}
Tensor& Tensor::mul_(const Tensor& other) {
  detail::mul__op(*this, other);
  return *this;
}
Tensor& Tensor::mul_(const Scalar& other) {
  detail::mul__op(*this, wrap_for(*this, other));
  return *this;
}
Tensor& Tensor::div_(const Tensor& other) {
  detail::div__op(*this, other);
  return *this;
}
Tensor& Tensor::div_(const Scalar& other) {
  detail::div__op(*this, wrap_for(*this, other));
  return *this;
}
Tensor& Tensor::pow_(const Scalar& exponent) {
  detail::pow__op(*this, wrap_for(*this, exponent));
  return *this;
}

}  // namespace kiln
