// lerp(self, end, weight), addcmul and addcdiv(self, tensor1, tensor2, value): ternary
// elementwise primitives with one-pass kernels (Lerp, Addcmul<C>, Addcdiv<C> in
// kiln/sdk/pointwise_math.hpp), broadcasting all three operands, each with its gradient for every
// operand. One entry per operator (See Note [One entry per operator]).
#include "elementwise.h"
#include "operator_entry.h"

#include <kiln/autograd.h>

namespace kiln {
namespace detail {
namespace {

using T = const Tensor&;
using LerpSignature = Tensor(const Tensor&, const Tensor&, const Tensor&);
using AddcSignature = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&);
using LerpOp = Operator<LerpSignature>;
using AddcOp = Operator<AddcSignature>;
using autograd::detail::FunctionNode;
using autograd::detail::sum_to;

// Three tensors broadcast to one shape on one device, in one dtype.
struct Operands {
  Tensor a, b, c;
  DimVector sizes;
};

Operands broadcast3(const char* op, T a, T b, T c, ScalarType dtype) {
  Device device = common_device(op, {&a, &b, &c});
  DimVector sizes = broadcast_dims(broadcast_dims(a.sizes(), b.sizes()), c.sizes());
  return {prepare_input(a, dtype, device, sizes), prepare_input(b, dtype, device, sizes),
          prepare_input(c, dtype, device, sizes), sizes};
}

// --- lerp ------------------------------------------------------------------------------------
// A number weight (lerp(self, end, 0.3)) arrives as a wrapped 0-dim tensor: the kernel gets it as
// its F64 attribute `weight` and only self and end as inputs, so 16-bit tensors interpolate with
// the weight in float32, as PyTorch's lerp.Scalar.
bool is_number(T t) { return t.impl().wrapped_number; }

ScalarType lerp_dtype(const char* op, T self, T end, T weight) {
  KILN_CHECK_TYPE(is_floating_point(self.dtype()), op, ": expected a floating point tensor, but ",
                  "got self of sizes ", self.sizes(), " and dtype ", dtype_name(self.dtype()));
  KILN_CHECK_TYPE(end.dtype() == self.dtype(), op, ": expected dtype ", dtype_name(self.dtype()),
                  " for `end` but got dtype ", dtype_name(end.dtype()), " (self ", self.sizes(),
                  ", end ", end.sizes(), "); convert end to self's dtype");
  KILN_CHECK_TYPE(is_number(weight) || weight.dtype() == self.dtype(), op, ": expected dtype ",
                  dtype_name(self.dtype()), " for `weight` but got dtype ",
                  dtype_name(weight.dtype()), " (self ", self.sizes(), ", weight ", weight.sizes(),
                  "); convert weight to self's dtype");
  return self.dtype();
}

void run_lerp(const LerpOp& op, T self, T end, T weight, const Tensor& out, ScalarType dtype) {
  if (is_number(weight)) {
    const double w = weight.to(kDouble).item<double>();
    Device device = common_device(op.name(), {&self, &end});
    Tensor a = prepare_input(self, dtype, device, out.sizes());
    Tensor b = prepare_input(end, dtype, device, out.sizes());
    run_kernel(*op.functional(), {&a, &b}, {&out}, Attrs().f64("weight", w));
  } else {
    Operands o = broadcast3(op.name(), self, end, weight, dtype);
    run_kernel(*op.functional(), {&o.a, &o.b, &o.c}, {&out});
  }
}

Tensor lerp_backend(const LerpOp& op, T self, T end, T weight) {
  ScalarType dtype = lerp_dtype(op.name(), self, end, weight);
  DimVector sizes = broadcast_dims(broadcast_dims(self.sizes(), end.sizes()),
                                   is_number(weight) ? IntArrayRef{} : weight.sizes());
  Tensor out = empty_tensor(sizes, dtype, common_device(op.name(), {&self, &end, &weight}));
  run_lerp(op, self, end, weight, out, dtype);
  return out;
}

Tensor lerp_inplace_backend(const LerpOp& op, T self, T end, T weight) {
  ScalarType dtype = lerp_dtype(op.name(), self, end, weight);
  DimVector sizes = broadcast_dims(broadcast_dims(self.sizes(), end.sizes()),
                                   is_number(weight) ? IntArrayRef{} : weight.sizes());
  check_inplace(op.name(), self, dtype, sizes);
  run_lerp(op, self, end, weight, self, dtype);
  bump_version(self);
  return self;
}

Tensor lerp_autograd(const LerpOp& op, T self, T end, T weight) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(self, end, weight);
  }
  DimVector s0(self.sizes()), s1(end.sizes()), s2(weight.sizes());
  auto node = autograd::detail::record("LerpBackward1", {&self, &end, &weight}, {&out},
                                       [s0, s1, s2](FunctionNode& n, const std::vector<Tensor>& g) {
                                         Tensor a = n.saved(0), b = n.saved(1), w = n.saved(2);
                                         std::vector<Tensor> grads(3);
                                         if (n.needs_input_grad(0))
                                           grads[0] = sum_to(g[0] * (1 - w), s0);
                                         if (n.needs_input_grad(1)) grads[1] = sum_to(g[0] * w, s1);
                                         if (n.needs_input_grad(2))
                                           grads[2] = sum_to(g[0] * (b - a), s2);
                                         return grads;
                                       });
  if (node) {
    node->save(self);
    node->save(end);
    node->save(weight);
  }
  return out;
}

// --- addcmul, addcdiv ------------------------------------------------------------------------
template <bool Divide>
ScalarType addc_dtype(const char* op, T self, T t1, T t2) {
  if (Divide) {
    KILN_CHECK_TYPE(!is_integral(t1.dtype(), true) || !is_integral(t2.dtype(), true), op,
                    ": Integer division with addcdiv is no longer supported, and in a future ",
                    "release addcdiv will perform a true division of tensor1 and tensor2 (got ",
                    dtype_name(t1.dtype()), " ", t1.sizes(), " and ", dtype_name(t2.dtype()), " ",
                    t2.sizes(), "). The historic addcdiv behavior can be implemented as (input + ",
                    "value * trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as ",
                    "(input + value * tensor1 / tensor2) for float inputs.");
  }
  ScalarType dtype = result_type_of({&self, &t1, &t2});
  if (dtype == kBool) throw_dtype_unsupported(op, dtype);
  return dtype;
}

template <bool Divide>
Tensor addc_backend(const AddcOp& op, T self, T t1, T t2, const Scalar& value) {
  Operands o = broadcast3(op.name(), self, t1, t2, addc_dtype<Divide>(op.name(), self, t1, t2));
  Tensor out = empty_tensor(o.sizes, o.a.dtype(), o.a.device());
  run_kernel(*op.functional(), {&o.a, &o.b, &o.c}, {&out}, Attrs().scalar("value", value));
  return out;
}

template <bool Divide>
Tensor addc_inplace_backend(const AddcOp& op, T self, T t1, T t2, const Scalar& value) {
  ScalarType dtype = addc_dtype<Divide>(op.name(), self, t1, t2);
  DimVector sizes = broadcast_dims(broadcast_dims(self.sizes(), t1.sizes()), t2.sizes());
  check_inplace(op.name(), self, dtype, sizes);
  if (dtype != self.dtype()) {
    const_cast<Tensor&>(self).copy_(addc_backend<Divide>(op, self, t1, t2, value));
  } else {
    Operands o = broadcast3(op.name(), self, t1, t2, dtype);
    run_kernel(*op.functional(), {&self, &o.b, &o.c}, {&self}, Attrs().scalar("value", value));
  }
  bump_version(self);
  return self;
}

// d/dself = grad; d/dtensor1 and d/dtensor2 as PyTorch's AddcmulBackward0 / AddcdivBackward0.
template <bool Divide>
Tensor addc_autograd(const AddcOp& op, T self, T t1, T t2, const Scalar& value) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(self, t1, t2, value);
  }
  DimVector s0(self.sizes()), s1(t1.sizes()), s2(t2.sizes());
  auto node =
      autograd::detail::record(Divide ? "AddcdivBackward0" : "AddcmulBackward0", {&self, &t1, &t2},
                               {&out},
                               [s0, s1, s2, value](FunctionNode& n, const std::vector<Tensor>& g) {
                                 Tensor a = n.saved(0), b = n.saved(1);
                                 std::vector<Tensor> grads(3);
                                 if (n.needs_input_grad(0)) grads[0] = sum_to(g[0], s0);
                                 if (Divide) {
                                   if (n.needs_input_grad(1))
                                     grads[1] = sum_to(g[0] * value / b, s1);
                                   if (n.needs_input_grad(2))
                                     grads[2] = sum_to(-g[0] * value * a / (b * b), s2);
                                 } else {
                                   if (n.needs_input_grad(1))
                                     grads[1] = sum_to(g[0] * b * value, s1);
                                   if (n.needs_input_grad(2))
                                     grads[2] = sum_to(g[0] * a * value, s2);
                                 }
                                 return grads;
                               });
  if (node) {
    node->save(t1);
    node->save(t2);
  }
  return out;
}

// PyTorch's CUDA autocast list promotes addcmul and addcdiv to the widest input; its CPU list
// leaves them alone.
constexpr AutocastPolicy kPromoteOffCpu{amp::detail::CastPolicy::none,
                                        amp::detail::CastPolicy::promote};

}  // namespace

LerpOp lerp_op("lerp", "lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", lerp_backend);
LerpOp lerp__op("lerp_", "lerp_(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)",
                lerp_inplace_backend, true, &lerp_op);
const OperatorEntry<LerpSignature> lerp_entry(lerp_op, &lerp__op, kNoCast, lerp_autograd);
AddcOp addcmul_op("addcmul",
                  "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, Scalar value=1) -> Tensor",
                  addc_backend<false>);
AddcOp addcmul__op("addcmul_",
                   "addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, Scalar value=1) -> "
                   "Tensor(a!)",
                   addc_inplace_backend<false>, true, &addcmul_op);
const OperatorEntry<AddcSignature> addcmul_entry(addcmul_op, &addcmul__op, kPromoteOffCpu,
                                                 addc_autograd<false>);
AddcOp addcdiv_op("addcdiv",
                  "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, Scalar value=1) -> Tensor",
                  addc_backend<true>);
AddcOp addcdiv__op("addcdiv_",
                   "addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, Scalar value=1) -> "
                   "Tensor(a!)",
                   addc_inplace_backend<true>, true, &addcdiv_op);
const OperatorEntry<AddcSignature> addcdiv_entry(addcdiv_op, &addcdiv__op, kPromoteOffCpu,
                                                 addc_autograd<true>);

}  // namespace detail

namespace {
Tensor number_weight(const Tensor& self, const Scalar& weight) {
  return detail::wrap_scalar(weight, kDouble, self.device());
}
}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  return detail::lerp_op(self, end, weight);
}
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  return detail::lerp_op(self, end, number_weight(self, weight));
}
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value) {
  return detail::addcmul_op(self, tensor1, tensor2, value);
}
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value) {
  return detail::addcdiv_op(self, tensor1, tensor2, value);
}

Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  return kiln::lerp(*this, end, weight);
}
Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const {
  return kiln::lerp(*this, end, weight);
}
const Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) const {
  detail::lerp__op(*this, end, weight);
  return *this;
}
const Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) const {
  detail::lerp__op(*this, end, number_weight(*this, weight));
  return *this;
}
Tensor Tensor::addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  return kiln::addcmul(*this, tensor1, tensor2, value);
}
const Tensor& Tensor::addcmul_(const Tensor& tensor1, const Tensor& tensor2,
                               const Scalar& value) const {
  detail::addcmul__op(*this, tensor1, tensor2, value);
  return *this;
}
Tensor Tensor::addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  return kiln::addcdiv(*this, tensor1, tensor2, value);
}
const Tensor& Tensor::addcdiv_(const Tensor& tensor1, const Tensor& tensor2,
                               const Scalar& value) const {
  detail::addcdiv__op(*this, tensor1, tensor2, value);
  return *this;
}

}  // namespace kiln
