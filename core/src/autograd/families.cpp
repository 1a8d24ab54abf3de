#include "families.h"

namespace kiln::autograd::detail {

void rebase_history(const Tensor& self, const Tensor& out) {
  Tensor base = view_base_of(self);  // See Note [In-place on views]
  AutogradMeta& from = meta(out);
  AutogradMeta& to = meta(self);
  to.grad_fn = from.grad_fn;
  to.output_nr = from.output_nr;
  self.impl().requires_grad = out.requires_grad();
  hook_retained_grad(self);
  rebase_view(self, base);
}

namespace {

// Records op(x) = out with the unary formula b; out may be x itself (in place).
void record_unary(const UnaryBackward* b, const Tensor& x, const Tensor& out) {
  auto node = record(b->name, {&x}, {&out}, [b](FunctionNode& n, const std::vector<Tensor>& g) {
    Tensor self = b->save_self ? n.saved(0) : Tensor();
    Tensor result = b->save_result ? n.saved(1) : Tensor();
    return std::vector<Tensor>{b->formula(g[0], self, result)};
  });
  if (node) {
    node->save(b->save_self ? x : Tensor());
    node->save(b->save_result ? out : Tensor(), /*is_output=*/true);
  }
}

}  // namespace

Tensor family_autograd(const UnaryOp& op, const Tensor& x) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x);
  }
  record_unary(op.backward_formula(), x, out);
  return out;
}

namespace {

std::vector<Tensor> binary_grads(const BinaryBackward* b, FunctionNode& n,
                                 const std::vector<Tensor>& g, const DimVector& a_sizes,
                                 const DimVector& b_sizes) {
  Tensor a = b->save_a ? n.saved(0) : Tensor();
  Tensor bb = b->save_b ? n.saved(1) : Tensor();
  Tensor result = b->save_result ? n.saved(2) : Tensor();
  std::vector<Tensor> out(2);
  if (n.needs_input_grad(0)) out[0] = sum_to(b->grad_a(g[0], a, bb, result), a_sizes);
  if (n.needs_input_grad(1)) out[1] = sum_to(b->grad_b(g[0], a, bb, result), b_sizes);
  return out;
}

std::shared_ptr<FunctionNode> record_binary(const BinaryBackward* b, const Tensor& x,
                                            const Tensor& y, const Tensor& out,
                                            FunctionNode::Formula formula) {
  auto node = record(b->name, {&x, &y}, {&out}, std::move(formula));
  if (node) {
    node->save(b->save_a ? x : Tensor());
    node->save(b->save_b ? y : Tensor());
    node->save(b->save_result ? out : Tensor(), /*is_output=*/true);
  }
  return node;
}

// Records op(x, y) = out with the binary formula b, scaling d/dy by alpha (add, sub); out may
// be x itself (in place).
void record_alpha(const BinaryBackward* b, const Tensor& x, const Tensor& y, const Tensor& out,
                  const Scalar& alpha) {
  DimVector xs(x.sizes()), ys(y.sizes());
  record_binary(b, x, y, out, [b, xs, ys, alpha](FunctionNode& n, const std::vector<Tensor>& g) {
    std::vector<Tensor> grads = binary_grads(b, n, g, xs, ys);
    if (grads[1].defined() && alpha.to_double() != 1.0) grads[1] = grads[1] * alpha;
    return grads;
  });
}

}  // namespace

Tensor family_autograd(const BinaryOp& op, const Tensor& x, const Tensor& y) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, y);
  }
  record_alpha(op.backward_formula(), x, y, out, 1);
  return out;
}

Tensor family_autograd(const AlphaOp& op, const Tensor& x, const Tensor& y, const Scalar& alpha) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, y, alpha);
  }
  record_alpha(op.backward_formula(), x, y, out, alpha);
  return out;
}

// Note [In-place without a copy]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An in-place call under autograd (y.relu_(), y.add_(shortcut): the end of every residual block)
// may run in place when its formula does not need self's old value: relu's gradient needs the
// result, which is self after the call, and add's needs neither operand. It then records the
// functional formula with self as both the input (its edge is self's grad_fn before the call)
// and the output (saved as an output, at its new version, as PyTorch's in-place nodes save
// `result`). Otherwise (mul_, exp_ from its input, sin_), and when self is a view (whose base
// is rebased, Note [In-place on views]), an operand is self, or an operand's dtype or device
// differs from self's (the functional result would be cast back), inplace_kernel runs the
// functional operator on a copy of self and copies the result into self: three passes over self
// instead of one, and two allocations.

namespace {

bool runs_in_place(const Tensor& self) {
  AutogradMeta* m = meta_if(self);
  return m == nullptr || !m->is_view;
}

bool runs_in_place(const Tensor& self, const Tensor& other) {
  return runs_in_place(self) && !other.is_same(self) && other.dtype() == self.dtype() &&
         other.device() == self.device();
}

}  // namespace

Tensor family_inplace(const UnaryOp& op, const Tensor& self) {
  const auto& functional = static_cast<const UnaryOp&>(*op.functional());
  const UnaryBackward* b = functional.backward_formula();
  if (!any_requires_grad({&self}) || b->save_self || !runs_in_place(self)) {
    return inplace_kernel(op, self);
  }
  check_inplace(self, op.name(), /*rebases_views=*/true);
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    op(self);
  }
  record_unary(b, self, self);
  return self;
}

Tensor family_inplace(const BinaryOp& op, const Tensor& self, const Tensor& other) {
  const auto& functional = static_cast<const BinaryOp&>(*op.functional());
  const BinaryBackward* b = functional.backward_formula();
  if (!any_requires_grad({&self, &other}) || b->save_a || !runs_in_place(self, other)) {
    return inplace_kernel(op, self, other);
  }
  check_inplace(self, op.name(), /*rebases_views=*/true);
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    op(self, other);
  }
  record_alpha(b, self, other, self, 1);
  return self;
}

Tensor family_inplace(const AlphaOp& op, const Tensor& self, const Tensor& other,
                      const Scalar& alpha) {
  const auto& functional = static_cast<const AlphaOp&>(*op.functional());
  const BinaryBackward* b = functional.backward_formula();
  if (!any_requires_grad({&self, &other}) || b->save_a || !runs_in_place(self, other)) {
    return inplace_kernel(op, self, other, alpha);
  }
  check_inplace(self, op.name(), /*rebases_views=*/true);
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    op(self, other, alpha);
  }
  record_alpha(b, self, other, self, alpha);
  return self;
}

}  // namespace kiln::autograd::detail
