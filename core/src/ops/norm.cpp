// Fused batch normalization in training mode (norm.h): the optional primitives batch_norm_train
// and batch_norm_backward, and the autograd formula that joins them.
#include "norm.h"

#include "elementwise.h"

#include "../autograd/function.h"

#include <kiln/autograd.h>

namespace kiln::detail {
namespace {

using TrainOp = Operator<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&,
                                                            const Tensor&, double, bool)>;
using BackwardOp =
    Operator<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&,
                                                const Tensor&, const Tensor&, const Tensor&, bool)>;

// The dtype of statistics, weight and bias for an input of dtype d.
ScalarType stats_dtype(ScalarType d) { return d == kDouble ? kDouble : kFloat; }

// Checks x [N, C, ...] and a per-channel vector v of the statistics' dtype.
void check_channel_vector(const char* op, const char* what, const Tensor& v, const Tensor& x) {
  KILN_CHECK_VALUE(v.dim() == 1 && v.size(0) == x.size(1), op, ": expected ", what, " of size [",
                   x.size(1), "] for input of size ", x.sizes(), ", but got ", v.sizes());
  KILN_CHECK_TYPE(v.dtype() == stats_dtype(x.dtype()), op, ": expected ", what, " of dtype ",
                  dtype_name(stats_dtype(x.dtype())), " for a ", dtype_name(x.dtype()),
                  " input, but got ", dtype_name(v.dtype()));
}

void check_input(const char* op, const Tensor& x) {
  KILN_CHECK_VALUE(x.dim() >= 2, op, ": expected an input [N, C, ...] of at least 2 dimensions, ",
                   "but got input of size ", x.sizes());
  KILN_CHECK_TYPE(x.is_floating_point(), op, ": expected a floating point input, but got ",
                  dtype_name(x.dtype()));
}

std::tuple<Tensor, Tensor, Tensor> train_backend(const TrainOp& op, const Tensor& input,
                                                 const Tensor& weight, const Tensor& bias,
                                                 double eps, bool relu) {
  check_input(op.name(), input);
  check_channel_vector(op.name(), "weight", weight, input);
  check_channel_vector(op.name(), "bias", bias, input);
  common_device(op.name(), {&input, &weight, &bias});
  const Tensor x = input.contiguous(), w = weight.contiguous(), b = bias.contiguous();
  const ScalarType acc = stats_dtype(x.dtype());
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  Tensor mean = empty_tensor({x.size(1)}, acc, x.device());
  Tensor var = empty_tensor({x.size(1)}, acc, x.device());
  run_kernel(op, {&x, &w, &b}, {&out, &mean, &var},
             Attrs().f64("eps", eps).i64("relu", relu ? 1 : 0));
  return {out, mean, var};
}

// (grad_out, input, mean, invstd, weight, out or undefined, relu) -> (grad_input, grad_weight,
// grad_bias)
std::tuple<Tensor, Tensor, Tensor> backward_backend(const BackwardOp& op, const Tensor& grad_out,
                                                    const Tensor& input, const Tensor& mean,
                                                    const Tensor& invstd, const Tensor& weight,
                                                    const Tensor& out, bool relu) {
  check_input(op.name(), input);
  KILN_CHECK_VALUE(grad_out.sizes().equals(input.sizes()) && grad_out.dtype() == input.dtype(),
                   op.name(), ": expected grad_out of size ", input.sizes(), " and dtype ",
                   dtype_name(input.dtype()), ", but got ", grad_out.sizes(), " ",
                   dtype_name(grad_out.dtype()));
  KILN_CHECK_VALUE(!relu || (out.defined() && out.sizes().equals(input.sizes()) &&
                             out.dtype() == input.dtype()),
                   op.name(), ": relu needs the forward output, of the input's size and dtype");
  check_channel_vector(op.name(), "mean", mean, input);
  check_channel_vector(op.name(), "invstd", invstd, input);
  check_channel_vector(op.name(), "weight", weight, input);
  common_device(op.name(), {&grad_out, &input, &mean, &invstd, &weight});
  const Tensor g = grad_out.contiguous(), x = input.contiguous(), m = mean.contiguous(),
               s = invstd.contiguous(), w = weight.contiguous();
  const ScalarType acc = stats_dtype(x.dtype());
  Tensor grad_input = empty_tensor(x.sizes(), x.dtype(), x.device());
  Tensor grad_weight = empty_tensor({x.size(1)}, acc, x.device());
  Tensor grad_bias = empty_tensor({x.size(1)}, acc, x.device());
  const Attrs attrs = Attrs().i64("relu", relu ? 1 : 0);
  if (relu) {
    const Tensor y = out.contiguous();
    run_kernel(op, {&g, &x, &m, &s, &w, &y}, {&grad_input, &grad_weight, &grad_bias}, attrs);
  } else {
    run_kernel(op, {&g, &x, &m, &s, &w}, {&grad_input, &grad_weight, &grad_bias}, attrs);
  }
  return {grad_input, grad_weight, grad_bias};
}

TrainOp batch_norm_train_op("batch_norm_train",
                            "batch_norm_train(Tensor input, Tensor weight, Tensor bias, float eps, "
                            "bool relu) -> (Tensor, Tensor, Tensor)",
                            train_backend);
BackwardOp batch_norm_backward_op(
    "batch_norm_backward",
    "batch_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor invstd, "
    "Tensor weight, Tensor? out, bool relu) -> (Tensor, Tensor, Tensor)",
    backward_backend);

// The gradients of out = relu?((x - mean(x)) * rsqrt(var(x) + eps) * w + b) written in
// differentiable operators, the statistics recomputed from x: what create_graph needs.
std::vector<Tensor> differentiable_gradients(const Tensor& g, const Tensor& x, const Tensor& w,
                                             const Tensor& out, double eps, bool relu) {
  const ScalarType acc = stats_dtype(x.dtype());
  DimVector dims, shape(static_cast<size_t>(x.dim()), 1);
  shape[1] = x.size(1);
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d != 1) dims.push_back(d);
  }
  const double count = static_cast<double>(x.numel() / x.size(1));
  Tensor xa = x.to(acc);
  Tensor centred = xa - mean(xa, dims, /*keepdim=*/true);
  Tensor invstd = rsqrt(mean(centred * centred, dims, /*keepdim=*/true) + eps);
  Tensor xhat = centred * invstd;
  Tensor ga = g.to(acc);
  if (relu) ga = ga * gt(out, 0).to(acc);
  Tensor sum_g = sum(ga, dims, /*keepdim=*/true);
  Tensor sum_gxhat = sum(ga * xhat, dims, /*keepdim=*/true);
  Tensor grad_x = w.reshape(shape) * invstd * (ga - sum_g / count - xhat * (sum_gxhat / count));
  return {grad_x.to(x.dtype()), sum_gxhat.reshape({x.size(1)}), sum_g.reshape({x.size(1)})};
}

std::tuple<Tensor, Tensor, Tensor> train_autograd(const TrainOp& op, const Tensor& input,
                                                  const Tensor& weight, const Tensor& bias,
                                                  double eps, bool relu) {
  Tensor out, mean, var;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    std::tie(out, mean, var) = op(input, weight, bias, eps, relu);
  }
  auto node = autograd::detail::record(
      "NativeBatchNormBackward0", {&input, &weight, &bias}, {&out},
      [eps, relu](autograd::detail::FunctionNode& n, const std::vector<Tensor>& g) {
        Tensor x = n.saved(0), w = n.saved(1), y = relu ? n.saved(4) : Tensor();
        std::vector<Tensor> grads;
        if (autograd::GradMode::is_enabled()) {
          grads = differentiable_gradients(g[0], x, w, y, eps, relu);
        } else {
          auto [gx, gw, gb] = batch_norm_backward_op(g[0], x, n.saved(2), n.saved(3), w, y, relu);
          grads = {gx, gw, gb};
        }
        for (size_t i = 0; i < grads.size(); ++i) {
          if (!n.needs_input_grad(i)) grads[i] = Tensor();
        }
        return grads;
      });
  if (node) {
    NoGradGuard no_grad;
    node->save(input);
    node->save(weight);
    node->save(mean);
    node->save(rsqrt(var + eps));
    node->save(relu ? out : Tensor(), /*is_output=*/true);
  }
  return {out, mean, var};
}

using AffineOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, bool)>;

Tensor affine_backend(const AffineOp& op, const Tensor& input, const Tensor& scale,
                      const Tensor& shift, bool relu) {
  check_input(op.name(), input);
  check_channel_vector(op.name(), "scale", scale, input);
  check_channel_vector(op.name(), "shift", shift, input);
  common_device(op.name(), {&input, &scale, &shift});
  const Tensor x = input.contiguous(), a = scale.contiguous(), b = shift.contiguous();
  Tensor out = empty_tensor(x.sizes(), x.dtype(), x.device());
  if (x.numel() == 0) return out;
  run_kernel(op, {&x, &a, &b}, {&out}, Attrs().i64("relu", relu ? 1 : 0));
  return out;
}

AffineOp channel_affine_op("channel_affine",
                           "channel_affine(Tensor input, Tensor scale, Tensor shift, bool relu) "
                           "-> Tensor",
                           affine_backend);

const bool batch_norm_autograd_registered = [] {
  channel_affine_op.set_optional();
  batch_norm_train_op.set_optional();
  batch_norm_backward_op.set_optional();
  batch_norm_train_op.set_kernel(DispatchKey::Autograd, train_autograd);
  return true;
}();

}  // namespace

bool fused_batch_norm_available(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input.dim() < 2 || !input.is_floating_point() || input.numel() == 0) return false;
  const DeviceType type = input.device().type();
  if (!batch_norm_train_op.has_plugin_kernel(type) ||
      !batch_norm_backward_op.has_plugin_kernel(type)) {
    return false;
  }
  if (input.numel() / input.size(1) < 2) return false;  // the composite raises PyTorch's error
  for (const Tensor* t : {&weight, &bias}) {
    if (t->defined() && (t->dim() != 1 || t->size(0) != input.size(1) ||
                         t->device() != input.device() || !t->is_floating_point())) {
      return false;  // the composite raises the error
    }
  }
  return true;
}

bool channel_affine_available(const Tensor& input) {
  return input.dim() >= 2 && input.is_floating_point() &&
         channel_affine_op.has_plugin_kernel(input.device().type());
}

Tensor channel_affine(const Tensor& input, const Tensor& scale, const Tensor& shift, bool relu) {
  const ScalarType acc = stats_dtype(input.dtype());
  return channel_affine_op(input, scale.reshape({-1}).to(acc), shift.reshape({-1}).to(acc), relu);
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_train(const Tensor& input, const Tensor& weight,
                                                    const Tensor& bias, double eps, bool relu) {
  const ScalarType acc = stats_dtype(input.dtype());
  const TensorOptions options = TensorOptions().dtype(acc).device(input.device());
  Tensor w = weight.defined() ? weight.to(acc) : ones({input.size(1)}, options);
  Tensor b = bias.defined() ? bias.to(acc) : zeros({input.size(1)}, options);
  return batch_norm_train_op(input, w, b, eps, relu);
}

}  // namespace kiln::detail
