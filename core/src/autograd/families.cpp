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

Tensor family_autograd(const UnaryOp& op, const Tensor& x) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x);
  }
  const UnaryBackward* b = op.backward_formula();
  auto node = record(b->name, {&x}, {&out}, [b](FunctionNode& n, const std::vector<Tensor>& g) {
    Tensor self = b->save_self ? n.saved(0) : Tensor();
    Tensor result = b->save_result ? n.saved(1) : Tensor();
    return std::vector<Tensor>{b->formula(g[0], self, result)};
  });
  if (node) {
    node->save(b->save_self ? x : Tensor());
    node->save(b->save_result ? out : Tensor(), /*is_output=*/true);
  }
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

}  // namespace

Tensor family_autograd(const BinaryOp& op, const Tensor& x, const Tensor& y) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, y);
  }
  const BinaryBackward* b = op.backward_formula();
  DimVector xs(x.sizes()), ys(y.sizes());
  record_binary(b, x, y, out, [b, xs, ys](FunctionNode& n, const std::vector<Tensor>& g) {
    return binary_grads(b, n, g, xs, ys);
  });
  return out;
}

Tensor family_autograd(const AlphaOp& op, const Tensor& x, const Tensor& y, const Scalar& alpha) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, y, alpha);
  }
  const BinaryBackward* b = op.backward_formula();
  DimVector xs(x.sizes()), ys(y.sizes());
  record_binary(b, x, y, out, [b, xs, ys, alpha](FunctionNode& n, const std::vector<Tensor>& g) {
    std::vector<Tensor> grads = binary_grads(b, n, g, xs, ys);
    if (grads[1].defined() && alpha.to_double() != 1.0) grads[1] = grads[1] * alpha;
    return grads;
  });
  return out;
}

}  // namespace kiln::autograd::detail
