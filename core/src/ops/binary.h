// The binary elementwise family (binary.cpp, compare.cpp): dtype rules, the out-of-place and
// in-place backends they plug into, and KILN_BINARY, which declares one operator (See Note [One
// entry per operator]).
#pragma once

#include "elementwise.h"
#include "operator_entry.h"

namespace kiln::detail {

using BinaryOp = Operator<Tensor(const Tensor&, const Tensor&)>;

// A family's dtype rule: the dtype the inputs are converted to, given the promoted dtype; and
// whether the output is bool (comparisons, logical) or that dtype.
struct Rule {
  ScalarType (*compute)(const char* op, ScalarType promoted);
  bool bool_output;
};

inline ScalarType same_as_promoted(const char*, ScalarType t) { return t; }
inline ScalarType no_bool(const char* op, ScalarType t) {
  if (t == kBool) throw_dtype_unsupported(op, t);
  return t;
}
inline ScalarType to_floating(const char*, ScalarType t) {
  return is_floating_point(t) ? t : default_float_dtype();
}
inline ScalarType integral_only(const char* op, ScalarType t) {
  KILN_CHECK_TYPE(is_integral(t, true), op, ": only integral and bool tensors are supported ",
                  "(got ", dtype_name(t), ")");
  return t;
}

inline constexpr Rule kArithmetic{same_as_promoted, false};
inline constexpr Rule kArithmeticNoBool{no_bool, false};
inline constexpr Rule kTrueDivide{to_floating, false};
inline constexpr Rule kCompare{same_as_promoted, true};
inline constexpr Rule kBitwise{integral_only, false};

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

// Fills p for op(a, b): the promoted dtype, the common device and the broadcast shape.
void prepare(Prepared& p, const char* op, const Rule& rule, const Tensor& a, const Tensor& b);

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

// `a op number`: the number becomes a 0-dim tensor of the promoted dtype on a's device.
Tensor wrap_for(const Tensor& a, const Scalar& s);

// name_op, name__op (in-place) and their entry: `rule` a Rule, `autocast` an AutocastPolicy, then
// the BackwardFormula (name, saves a, saves b, saves result, d/da, d/db) or no_backward.
#define KILN_BINARY(name, rule, autocast, ...)                                                    \
  BinaryOp name##_op(#name, #name "(Tensor self, Tensor other) -> Tensor", binary_backend<rule>); \
  BinaryOp name##__op(#name "_", #name "_(Tensor(a!) self, Tensor other) -> Tensor(a!)",          \
                      binary_inplace_backend<rule>, true, &name##_op);                            \
  const OperatorEntry<Tensor(const Tensor&, const Tensor&)> name##_entry(name##_op, &name##__op,  \
                                                                         autocast, __VA_ARGS__)

}  // namespace kiln::detail
