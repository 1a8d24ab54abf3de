// Note [One entry per operator]: an elementwise operator is declared once, by one entry in the
// file of its family (KILN_UNARY in unary.cpp, KILN_BINARY and KILN_ALPHA in binary.cpp,
// KILN_BINARY in compare.cpp, the entries of ternary.cpp): its name, which names the operator
// objects `name_op` and `name__op` (its in-place variant) and their schemas; its dtype rule; its
// autocast policy on the CPU and on every other device type; and its backward formula (or
// no_backward). The entry's OperatorEntry installs the formula with its family's Autograd kernel
// (the in-place variant gets the in-place kernel, See Note [Gradients next to operators]) and the
// policy with the Autocast kernel (See Note [Autocast policies]). A unary entry also defines the
// public function (kiln::exp); binary public functions have Scalar overloads and stay one line
// each beside the entries, as do Tensor methods (Tensor::exp_), which a new operator may skip.
//
// An activation with one scalar parameter (gelu, leaky_relu, hardshrink, softshrink) is one
// KILN_UNARY_PARAM entry in activation_ops.cpp: its parameter's name, autocast policy and a
// ParamFormula (backward name and formula of grad, self and the parameter), installed through
// the entry form with an Autograd kernel (param_autograd); its kernel gets the parameter as the
// F64 attribute 0, and its functor (Gelu<C>, LeakyRelu<C>, ...) holds it as a member.
//
// A new unary operator with a gradient, in core and its tests (the plugins' side is a functor in
// sdk/include/kiln/sdk/pointwise.hpp and a registration line per plugin):
//   core/include/kiln/ops.h               its declaration
//   core/src/ops/unary.cpp                KILN_UNARY(name, ...)
//   tools/conformance/cases_unary.cpp     its case, marked kGradient (test_gradcheck also checks
//                                         that gradient against finite differences)
// The coverage tests (tests/conformance/runner.cpp, test_gradcheck) fail until each is there.
// docs/primitives.md's row and the PyTorch golden case are not edits: the build writes the row
// (Note [Generated primitive rows]), and tests/golden/make_unary_golden.py NAME appends the
// records, which register_unary_goldens (tools/conformance/cases_unary.cpp) reads.
#pragma once

#include "../amp/policy.h"
#include "../autograd/families.h"

namespace kiln::detail {

using amp::detail::AutocastPolicy;
using amp::detail::kFp32OffCpu;
using amp::detail::kNoCast;

// The backward of an operator that has no gradient (comparisons, bitwise, floor_divide, ...).
struct NoBackward {};
inline constexpr NoBackward no_backward{};

// Records an operator's row of docs/primitives.md: `columns` is the row after the operator's
// name ("x | out | — | floating | "), shared by the operators of one rule. See Note [Generated
// primitive rows] (primitive_docs.cpp).
class PrimitiveRow {
 public:
  PrimitiveRow(const OperatorBase& op, const char* columns);
  PrimitiveRow(const PrimitiveRow&) = delete;
  PrimitiveRow& operator=(const PrimitiveRow&) = delete;
};

template <class Signature>
class OperatorEntry {
 public:
  using Op = Operator<Signature>;

  // `inplace`: the in-place variant, or null when the operator has none.
  OperatorEntry(Op& op, Op* inplace, AutocastPolicy autocast, BackwardFormula<Signature> backward)
      : backward_(backward) {
    autograd::detail::register_backward(op, backward_, inplace);
    amp::detail::declare_policy(op, autocast);
  }
  OperatorEntry(Op& op, Op*, AutocastPolicy autocast, NoBackward) {
    amp::detail::declare_policy(op, autocast);
  }
  // An operator whose Autograd kernel records its own node (where, clamp).
  OperatorEntry(Op& op, Op* inplace, AutocastPolicy autocast, typename Op::Kernel autograd_kernel) {
    autograd::detail::register_autograd(op, autograd_kernel, inplace);
    amp::detail::declare_policy(op, autocast);
  }
  OperatorEntry(const OperatorEntry&) = delete;
  OperatorEntry& operator=(const OperatorEntry&) = delete;

 private:
  // installed on the operator, which keeps a pointer to it: never moves
  const BackwardFormula<Signature> backward_{};
};

}  // namespace kiln::detail
