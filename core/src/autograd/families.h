// Note [Gradients next to operators]: each differentiable operator's backward formula sits in
// the file that declares the operator, as a small struct for its family (unary, binary, ...)
// registered with register_backward(). The family's autograd kernel below runs the operator
// below the Autograd layer, then records a FunctionNode that applies the formula. In-place
// variants run their functional operator (recorded) and copy the result into self, so their
// gradients need no formula of their own.
#pragma once

#include "function.h"

#include <kiln/dispatch.h>

namespace kiln {

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

Tensor unary_autograd(const UnaryOp& op, const Tensor& x);
Tensor binary_autograd(const BinaryOp& op, const Tensor& a, const Tensor& b);
Tensor alpha_autograd(const AlphaOp& op, const Tensor& a, const Tensor& b, const Scalar& alpha);

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

// Installs `formula` and the family's autograd kernel on op, and the in-place kernel on its
// in-place variant (when given).
void register_backward(UnaryOp& op, const UnaryBackward& formula, UnaryOp* inplace = nullptr);
void register_backward(BinaryOp& op, const BinaryBackward& formula, BinaryOp* inplace = nullptr);
void register_backward(AlphaOp& op, const AlphaBackward& formula, AlphaOp* inplace = nullptr);

}  // namespace kiln::autograd::detail
