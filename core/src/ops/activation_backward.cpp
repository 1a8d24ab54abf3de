// elu_backward, hardswish_backward and threshold_backward, the optional primitives of Note
// [Fused activation gradients] (activation_backward.h).
#include "activation_backward.h"

#include "elementwise.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>

namespace kiln::detail {
namespace {

using EluBackwardOp = Operator<Tensor(const Tensor&, const Tensor&, double, double, double)>;
using HardswishBackwardOp = Operator<Tensor(const Tensor&, const Tensor&)>;
using ThresholdBackwardOp = Operator<Tensor(const Tensor&, const Tensor&, double)>;

void check_operands(const char* op, const Tensor& grad, const Tensor& x) {
  KILN_CHECK_TYPE(is_floating_point(x.dtype()) && grad.dtype() == x.dtype(), op,
                  ": expected a floating point self and a grad_output of its dtype, but got ",
                  dtype_name(grad.dtype()), " and ", dtype_name(x.dtype()));
  KILN_CHECK_VALUE(grad.sizes() == x.sizes(), op, ": grad_output of size ", grad.sizes(),
                   " does not match self of size ", x.sizes());
  common_device(op, {&grad, &x});
}

Tensor elu_backward_backend(const EluBackwardOp& op, const Tensor& grad, const Tensor& x,
                            double alpha, double scale, double input_scale) {
  check_operands(op.name(), grad, x);
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  run_kernel(op, {&grad, &x}, {&out},
             Attrs().f64("alpha", alpha).f64("scale", scale).f64("input_scale", input_scale));
  return out;
}

Tensor hardswish_backward_backend(const HardswishBackwardOp& op, const Tensor& grad,
                                  const Tensor& x) {
  check_operands(op.name(), grad, x);
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  run_kernel(op, {&grad, &x}, {&out}, Attrs());
  return out;
}

Tensor threshold_backward_backend(const ThresholdBackwardOp& op, const Tensor& grad,
                                  const Tensor& x, double threshold) {
  check_operands(op.name(), grad, x);
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  run_kernel(op, {&grad, &x}, {&out}, Attrs().f64("threshold", threshold));
  return out;
}

EluBackwardOp elu_backward_op("elu_backward",
                              "elu_backward(Tensor grad_output, Tensor self, float alpha, "
                              "float scale, float input_scale) -> Tensor",
                              elu_backward_backend);
HardswishBackwardOp hardswish_backward_op(
    "hardswish_backward", "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
    hardswish_backward_backend);
ThresholdBackwardOp threshold_backward_op(
    "threshold_backward",
    "threshold_backward(Tensor grad_output, Tensor self, float threshold) -> Tensor",
    threshold_backward_backend);
const bool activation_backward_registered = [] {
  elu_backward_op.set_optional();
  hardswish_backward_op.set_optional();
  threshold_backward_op.set_optional();
  return true;
}();

// Whether op runs for (grad, x): the device has it, no gradient graph is being built, and the
// operands match.
bool fused(const OperatorBase& op, const Tensor& grad, const Tensor& x) {
  return !autograd::GradMode::is_enabled() && op.has_plugin_kernel(x.device().type()) &&
         grad.dtype() == x.dtype() && is_floating_point(x.dtype()) && grad.sizes() == x.sizes() &&
         grad.device() == x.device();
}

}  // namespace

Tensor fused_elu_backward(const Tensor& grad, const Tensor& self, double alpha, double scale,
                          double input_scale) {
  if (!fused(elu_backward_op, grad, self)) return Tensor();
  return elu_backward_op(grad, self, alpha, scale, input_scale);
}

Tensor fused_hardswish_backward(const Tensor& grad, const Tensor& self) {
  if (!fused(hardswish_backward_op, grad, self)) return Tensor();
  return hardswish_backward_op(grad, self);
}

Tensor threshold_backward(const Tensor& grad, const Tensor& self, double threshold) {
  if (fused(threshold_backward_op, grad, self)) return threshold_backward_op(grad, self, threshold);
  return where(le(self, threshold), zeros_like(grad), grad);
}

}  // namespace kiln::detail
