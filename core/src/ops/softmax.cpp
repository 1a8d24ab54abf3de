// Fused softmax (softmax.h): the optional primitives softmax_lastdim and
// softmax_lastdim_backward, and the autograd formula that joins them.
//
// Note [Fused softmax]: softmax and log_softmax are composites (amax, sub, exp, sum, div: five
// passes over memory, each rounding in a 16-bit dtype, and about as many again for the
// gradient). Over the last dimension, on a device that has both optional primitives, they run
// in one pass each way over contiguous rows instead, computing in float32 for the 16-bit floats
// and rounding once, as PyTorch's _softmax and _softmax_backward_data. The gradient,
// grad_x = y (g - sum(g y)) (softmax) or g - exp(y) sum(g) (log_softmax), comes from the saved
// output; under create_graph it is written in differentiable operators from the saved input, so
// that higher derivatives see how y depends on x.
#include "softmax.h"

#include "elementwise.h"

#include "../autograd/function.h"
#include "../kernel_call.h"
#include "../tensor_internal.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/ops.h>

namespace kiln::detail {
namespace {

using ForwardOp = Operator<Tensor(const Tensor&, bool)>;
using BackwardOp = Operator<Tensor(const Tensor&, const Tensor&, bool)>;

Attrs log_attr(bool log) { return Attrs().i64("log", log ? 1 : 0); }

Tensor forward_backend(const ForwardOp& op, const Tensor& input, bool log) {
  KILN_CHECK_TYPE(is_floating_point(input.dtype()), op.name(),
                  ": expected a floating point input, but got ", dtype_name(input.dtype()));
  KILN_CHECK_VALUE(input.dim() >= 1, op.name(),
                   ": expected an input with at least one dimension, but got a scalar");
  const Tensor x = input.contiguous();
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  if (x.numel() > 0) run_kernel(op, {&x}, {&out}, log_attr(log));
  return out;
}

Tensor backward_backend(const BackwardOp& op, const Tensor& grad_out, const Tensor& out, bool log) {
  KILN_CHECK_TYPE(is_floating_point(out.dtype()) && grad_out.dtype() == out.dtype(), op.name(),
                  ": expected a floating point output and a grad_output of its dtype, but got ",
                  dtype_name(grad_out.dtype()), " and ", dtype_name(out.dtype()));
  KILN_CHECK_VALUE(out.dim() >= 1 && grad_out.sizes() == out.sizes(), op.name(),
                   ": expected grad_output and output of one size with at least one dimension, ",
                   "but got ", grad_out.sizes(), " and ", out.sizes());
  common_device(op.name(), {&grad_out, &out});
  const Tensor g = grad_out.contiguous(), y = out.contiguous();
  Tensor grad_x = empty_tensor(y.sizes(), y.dtype(), y.device());
  if (y.numel() > 0) run_kernel(op, {&g, &y}, {&grad_x}, log_attr(log));
  return grad_x;
}

ForwardOp softmax_lastdim_op("softmax_lastdim", "softmax_lastdim(Tensor self, bool log) -> Tensor",
                             forward_backend);
BackwardOp softmax_lastdim_backward_op(
    "softmax_lastdim_backward",
    "softmax_lastdim_backward(Tensor grad_output, Tensor output, bool log) -> Tensor",
    backward_backend);

// The gradient written in differentiable operators (what create_graph needs), y recomputed from
// x by the composite.
Tensor differentiable_gradient(const Tensor& g, const Tensor& x, bool log) {
  if (log) {
    Tensor y = x - logsumexp(x, {-1}, /*keepdim=*/true);
    return g - exp(y) * sum(g, {-1}, /*keepdim=*/true);
  }
  Tensor e = exp(x - amax(x, {-1}, /*keepdim=*/true).detach());
  Tensor y = e / sum(e, {-1}, /*keepdim=*/true);
  return y * (g - sum(g * y, {-1}, /*keepdim=*/true));
}

Tensor forward_autograd(const ForwardOp& op, const Tensor& x, bool log) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, log);
  }
  auto node = autograd::detail::record(
      log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {&x}, {&out},
      [log](autograd::detail::FunctionNode& n, const std::vector<Tensor>& grads) {
        if (autograd::GradMode::is_enabled()) {
          return std::vector<Tensor>{differentiable_gradient(grads[0], n.saved(0), log)};
        }
        return std::vector<Tensor>{softmax_lastdim_backward_op(grads[0], n.saved(1), log)};
      });
  if (node) {
    NoGradGuard no_grad;
    node->save(x);
    node->save(out, /*is_output=*/true);
  }
  return out;
}

const bool softmax_lastdim_registered = [] {
  softmax_lastdim_op.set_optional();
  softmax_lastdim_backward_op.set_optional();
  softmax_lastdim_op.set_kernel(DispatchKey::Autograd, forward_autograd);
  return true;
}();

}  // namespace

Tensor fused_softmax(const Tensor& x, bool log) {
  const DeviceType type = x.device().type();
  if (!softmax_lastdim_op.has_plugin_kernel(type) ||
      !softmax_lastdim_backward_op.has_plugin_kernel(type)) {
    return Tensor();
  }
  if (!is_floating_point(x.dtype()) || x.dim() == 0 || x.numel() == 0) return Tensor();
  return softmax_lastdim_op(x, log);
}

}  // namespace kiln::detail
