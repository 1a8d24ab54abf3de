// Note [Gradients next to operators]: each differentiable operator's backward formula sits in
// the operator's entry (See Note [One entry per operator], core/src/ops/operator_entry.h), as
// the BackwardFormula of its signature (one per family: unary, binary, ...), which
// register_backward() installs. The family's autograd kernel below runs the operator
// below the Autograd layer, then records a FunctionNode that applies the formula. In-place
// variants need no formula of their own (Note [In-place without a copy], families.cpp): they run
// in place and record the functional formula on self when it does not need self's old value,
// else they run the functional operator on a copy of self and copy the result into self.
#pragma once

#include "function.h"

#include <kiln/dispatch.h>

namespace kiln {

// A signature without a family formula: its operators' Autograd kernels record their own nodes
// (where, clamp).
template <class Signature>
struct BackwardFormula {};

// d/dself of op(self): grad -> grad_self. self and result are given when saved.
template <>
struct BackwardFormula<Tensor(const Tensor&)> {
  const char* name;  // "SinBackward0"
  bool save_self;
  bool save_result;
  Tensor (*formula)(const Tensor& grad, const Tensor& self, const Tensor& result);
};

// d/da and d/db of op(a, b); each gradient is computed only when needed. Broadcasting is undone
// by the family kernel (sum_to).
template <>
struct BackwardFormula<Tensor(const Tensor&, const Tensor&)> {
  const char* name;
  bool save_a;
  bool save_b;
  bool save_result;
  Tensor (*grad_a)(const Tensor& grad, const Tensor& a, const Tensor& b, const Tensor& result);
  Tensor (*grad_b)(const Tensor& grad, const Tensor& a, const Tensor& b, const Tensor& result);
};

// op(a, b, alpha) = a op alpha * b (add, sub): the binary formula, whose d/db the family kernel
// scales by alpha.
template <>
struct BackwardFormula<Tensor(const Tensor&, const Tensor&, const Scalar&)>
    : BackwardFormula<Tensor(const Tensor&, const Tensor&)> {};

}  // namespace kiln

namespace kiln::autograd::detail {

using UnaryOp = Operator<Tensor(const Tensor&)>;
using BinaryOp = Operator<Tensor(const Tensor&, const Tensor&)>;
using AlphaOp = Operator<Tensor(const Tensor&, const Tensor&, const Scalar&)>;
using UnaryBackward = UnaryOp::Formula;
using BinaryBackward = BinaryOp::Formula;
using AlphaBackward = AlphaOp::Formula;

// The Autograd kernel of each family: runs op below the layer and records its formula.
Tensor family_autograd(const UnaryOp& op, const Tensor& x);
Tensor family_autograd(const BinaryOp& op, const Tensor& a, const Tensor& b);
Tensor family_autograd(const AlphaOp& op, const Tensor& a, const Tensor& b, const Scalar& alpha);

// The Autograd kernels of the families' in-place variants (Note [In-place without a copy]).
Tensor family_inplace(const UnaryOp& op, const Tensor& self);
Tensor family_inplace(const BinaryOp& op, const Tensor& self, const Tensor& other);
Tensor family_inplace(const AlphaOp& op, const Tensor& self, const Tensor& other,
                      const Scalar& alpha);

// Makes self take out's place in the graph after an in-place operation copied out into self.
void rebase_history(const Tensor& self, const Tensor& out);

inline bool arg_requires_grad(const Tensor& t) { return t.defined() && t.requires_grad(); }
template <class T>
bool arg_requires_grad(const T&) {
  return false;
}

// `arg`, or `replacement` when arg is the tensor `self` itself (x.mul_(x)).
inline const Tensor& same_or(const Tensor& arg, const Tensor& self, const Tensor& replacement) {
  return arg.defined() && arg.is_same(self) ? replacement : arg;
}
template <class T>
const T& same_or(const T& arg, const Tensor&, const Tensor&) {
  return arg;
}

// Autograd of an in-place variant (see the Note above): op(self, rest...) modifies self.
template <class Op, class... Rest>
Tensor inplace_kernel(const Op& op, const Tensor& self, Rest... rest) {
  bool record = GradMode::is_enabled() &&
                (arg_requires_grad(self) || (arg_requires_grad(rest) || ...));
  if (!record) {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    return op(self, rest...);
  }
  check_inplace(self, op.name(), /*rebases_views=*/true);
  const Op& functional = static_cast<const Op&>(*op.functional());
  // the functional formula may save self, which the copy below overwrites: give it a copy
  Tensor original = self.requires_grad() ? self.clone() : self;
  Tensor out = functional(original, same_or(rest, self, original)...);
  {
    NoGradGuard no_grad;
    const_cast<Tensor&>(self).copy_(out);
  }
  rebase_history(self, out);
  return self;
}

// inplace_kernel as the Autograd kernel of an in-place operator of signature `Signature`.
template <class Signature>
constexpr typename Operator<Signature>::Kernel inplace_autograd = nullptr;
template <class... Rest>
constexpr typename Operator<Tensor(const Tensor&, Rest...)>::Kernel
    inplace_autograd<Tensor(const Tensor&, Rest...)> =
        inplace_kernel<Operator<Tensor(const Tensor&, Rest...)>, Rest...>;

// Installs `autograd` on op and the in-place kernel on its in-place variant (when given).
template <class Signature>
void register_autograd(Operator<Signature>& op, typename Operator<Signature>::Kernel autograd,
                       Operator<Signature>* inplace) {
  op.set_kernel(DispatchKey::Autograd, autograd);
  if (inplace) inplace->set_kernel(DispatchKey::Autograd, inplace_autograd<Signature>);
}

// Installs `formula` (which must outlive op) and the family's autograd kernel on op, and the
// in-place kernel on its in-place variant (when given).
template <class Signature>
void register_backward(Operator<Signature>& op, const BackwardFormula<Signature>& formula,
                       Operator<Signature>* inplace) {
  op.set_backward_formula(&formula);
  op.set_kernel(DispatchKey::Autograd, &family_autograd);
  if (inplace) inplace->set_kernel(DispatchKey::Autograd, &family_inplace);
}

}  // namespace kiln::autograd::detail
