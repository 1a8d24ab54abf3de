// where, clamp and masked_fill.
#include "elementwise.h"
#include "operator_entry.h"

namespace kiln {
namespace detail {
namespace {

using WhereSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
using ClampSignature = Tensor(const Tensor&, const std::optional<Scalar>&,
                              const std::optional<Scalar>&);
using WhereOp = Operator<WhereSignature>;
using ClampOp = Operator<ClampSignature>;

Tensor where_backend(const WhereOp& op, const Tensor& cond, const Tensor& a, const Tensor& b) {
  KILN_CHECK_TYPE(cond.dtype() == kBool, op.name(), ": expected condition to be a bool tensor, ",
                  "but got a tensor with dtype ", dtype_name(cond.dtype()));
  Device device = common_device(op.name(), {&cond, &a, &b});
  ScalarType compute = result_type_of({&a, &b});
  DimVector sizes = broadcast_dims(broadcast_dims(cond.sizes(), a.sizes()), b.sizes());
  Tensor c = prepare_input(cond, kBool, device, sizes);
  Tensor x = prepare_input(a, compute, device, sizes);
  Tensor y = prepare_input(b, compute, device, sizes);
  Tensor out = empty_tensor(sizes, compute, device);
  run_kernel(op, {&c, &x, &y}, {&out});
  return out;
}

Attrs clamp_attrs(const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  Attrs attrs;
  if (min) {
    attrs.scalar("min", *min);
  } else {
    attrs.none("min");
  }
  if (max) {
    attrs.scalar("max", *max);
  } else {
    attrs.none("max");
  }
  return attrs;
}

ScalarType clamp_dtype(const char* op, const Tensor& x, const std::optional<Scalar>& min,
                       const std::optional<Scalar>& max) {
  KILN_CHECK_VALUE(min || max, op, ": at least one of 'min' or 'max' must not be None");
  ScalarType t = x.dtype();
  if (min) t = promote_types(t, scalar_result_type(x, *min));
  if (max) t = promote_types(t, scalar_result_type(x, *max));
  if (t == kBool) throw_dtype_unsupported(op, t);
  return t;
}

Tensor clamp_backend(const ClampOp& op, const Tensor& x, const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max) {
  ScalarType t = clamp_dtype(op.name(), x, min, max);
  Tensor in = x.dtype() == t ? x : x.to(t);
  Tensor out = empty_tensor(x.sizes(), t, x.device());
  run_kernel(*op.functional(), {&in}, {&out}, clamp_attrs(min, max));
  return out;
}

Tensor clamp_inplace_backend(const ClampOp& op, const Tensor& self,
                             const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  ScalarType t = clamp_dtype(op.name(), self, min, max);
  check_inplace(op.name(), self, t, self.sizes());
  if (t == self.dtype()) {
    run_kernel(*op.functional(), {&self}, {&self}, clamp_attrs(min, max));
  } else {
    const_cast<Tensor&>(self).copy_(clamp_backend(op, self, min, max));
  }
  bump_version(self);
  return self;
}

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
using autograd::detail::FunctionNode;
using autograd::detail::sum_to;

Tensor where_autograd(const WhereOp& op, const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(cond, a, b);
  }
  DimVector as(a.sizes()), bs(b.sizes());
  auto node = autograd::detail::record("WhereBackward0", {&a, &b}, {&out},
                                       [as, bs](FunctionNode& n, const std::vector<Tensor>& g) {
                                         Tensor c = n.saved(0);
                                         Tensor zero = zeros_like(g[0]);
                                         std::vector<Tensor> grads(2);
                                         if (n.needs_input_grad(0))
                                           grads[0] = sum_to(where(c, g[0], zero), as);
                                         if (n.needs_input_grad(1))
                                           grads[1] = sum_to(where(c, zero, g[0]), bs);
                                         return grads;
                                       });
  if (node) node->save(cond);
  return out;
}

Tensor clamp_autograd(const ClampOp& op, const Tensor& x, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, min, max);
  }
  auto node = autograd::detail::record("ClampBackward1", {&x}, {&out},
                                       [min, max](FunctionNode& n, const std::vector<Tensor>& g) {
                                         Tensor self = n.saved(0);
                                         Tensor inside =
                                             ones_like(self, TensorOptions().dtype(kBool));
                                         if (min) inside = logical_and(inside, ge(self, *min));
                                         if (max) inside = logical_and(inside, le(self, *max));
                                         return std::vector<Tensor>{g[0] * inside};
                                       });
  if (node) node->save(x);
  return out;
}

}  // namespace

// One entry per operator (See Note [One entry per operator]); their Autograd kernels are above.
WhereOp where_op("where", "where(Tensor condition, Tensor self, Tensor other) -> Tensor",
                 where_backend);
ClampOp clamp_op("clamp", "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
                 clamp_backend);
ClampOp clamp__op("clamp_",
                  "clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
                  clamp_inplace_backend, true, &clamp_op);
const OperatorEntry<WhereSignature> where_entry(where_op, nullptr, kNoCast, where_autograd);
const OperatorEntry<ClampSignature> clamp_entry(clamp_op, &clamp__op, kNoCast, clamp_autograd);

}  // namespace detail

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  return detail::where_op(condition, a, b);
}
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b) {
  return detail::where_op(condition, a,
                          detail::wrap_scalar(b, detail::scalar_result_type(a, b), a.device()));
}
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b) {
  return detail::where_op(condition,
                          detail::wrap_scalar(a, detail::scalar_result_type(b, a), b.device()), b);
}

// x where mask is false, value where it is true; keeps x's dtype.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  KILN_CHECK_TYPE(mask.dtype() == kBool, "masked_fill: expected a bool mask, but got ",
                  dtype_name(mask.dtype()));
  Tensor v = detail::wrap_scalar(value, x.dtype(), x.device());
  v.impl().wrapped_number = false;  // the result keeps x's dtype
  Tensor out = detail::where_op(mask, v, x);
  KILN_CHECK_VALUE(out.sizes().equals(x.sizes()), "masked_fill: mask of shape ", mask.sizes(),
                   " does not broadcast to the input's shape ", x.sizes());
  return out;
}

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  return detail::clamp_op(x, min, max);
}
Tensor clamp_min(const Tensor& x, const Scalar& min) {
  return detail::clamp_op(x, min, std::nullopt);
}
Tensor clamp_max(const Tensor& x, const Scalar& max) {
  return detail::clamp_op(x, std::nullopt, max);
}

const Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) const {
  detail::clamp__op(*this, min, max);
  return *this;
}

const Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  detail::check_no_internal_overlap("masked_fill_", *this);
  copy_(kiln::masked_fill(*this, mask, value));
  return *this;
}

}  // namespace kiln
