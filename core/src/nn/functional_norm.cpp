// kiln::nn::functional normalizations: layer_norm, batch_norm, instance_norm, group_norm,
// local_response_norm and normalize. batch_norm in training mode runs the fused primitives of
// ops/norm.h where the device has them; otherwise all are composites. Statistics are computed in
// two passes (mean, then the mean of squared deviations), which stays accurate where
// E[x^2] - E[x]^2 would cancel.
#include "../ops/norm.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/normalization.h>

namespace kiln::nn::functional {

namespace {

using LayerNormOp =
    Operator<Tensor(const Tensor&, IntArrayRef, const Tensor&, const Tensor&, double)>;

// A composite operator, so that autocast can list it (float32 on CUDA, as PyTorch).
Tensor layer_norm_composite(const LayerNormOp&, const Tensor& input, IntArrayRef normalized_shape,
                            const Tensor& weight, const Tensor& bias, double eps) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool matches = k >= 1 && input.dim() >= k;
  for (int64_t i = 0; matches && i < k; ++i) {
    matches = input.size(input.dim() - k + i) == normalized_shape[i];
  }
  KILN_CHECK_VALUE(matches, "layer_norm: given normalized_shape=", normalized_shape,
                   ", expected input with shape [*, ", IntArrayRef(normalized_shape), "], but got ",
                   "input of size", input.sizes());
  KILN_CHECK_TYPE(input.is_floating_point(), "layer_norm: expected a floating point input, but ",
                  "got ", dtype_name(input.dtype()));
  for (const Tensor* t : {&weight, &bias}) {
    KILN_CHECK_VALUE(!t->defined() || t->sizes().equals(normalized_shape), "layer_norm: expected ",
                     t == &weight ? "weight" : "bias", " of size ", normalized_shape, ", but got ",
                     t->sizes());
  }
  DimVector dims;
  for (int64_t i = 0; i < k; ++i) dims.push_back(input.dim() - k + i);
  Tensor mean = kiln::mean(input, dims, /*keepdim=*/true);
  Tensor centred = input - mean;
  Tensor var = kiln::mean(centred * centred, dims, /*keepdim=*/true);
  Tensor out = centred * rsqrt(var + eps);
  if (weight.defined()) out = out * weight;
  if (bias.defined()) out = out + bias;
  return out;
}

LayerNormOp layer_norm_op("layer_norm",
                          "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, "
                          "Tensor? bias=None, float eps=1e-05) -> Tensor",
                          layer_norm_composite, /*primitive=*/false);

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  return layer_norm_op(input, normalized_shape, weight, bias, eps);
}

namespace {

void check_channel_vector(const char* what, const Tensor& t, int64_t channels) {
  KILN_CHECK_VALUE(!t.defined() || t.numel() == channels, "batch_norm: expected ", what,
                   " to have ", channels, " elements (one per channel), but got ", t.sizes());
}

// Updates running statistics in place, outside the graph.
void update_running(const Tensor& running_mean, const Tensor& running_var, const Tensor& mean,
                    const Tensor& var, int64_t count, double momentum) {
  NoGradGuard no_grad;
  if (running_mean.defined()) {
    Tensor m = mean.detach().reshape({-1}).to(running_mean.dtype());
    const_cast<Tensor&>(running_mean).mul_(1.0 - momentum).add_(m, momentum);
  }
  if (running_var.defined()) {
    double unbiased = static_cast<double>(count) / static_cast<double>(count - 1);
    Tensor v = (var.detach().reshape({-1}) * unbiased).to(running_var.dtype());
    const_cast<Tensor&>(running_var).mul_(1.0 - momentum).add_(v, momentum);
  }
}

// batch_norm's checks; returns the number of values per channel.
int64_t check_batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                         const Tensor& weight, const Tensor& bias, bool training) {
  KILN_CHECK_VALUE(input.dim() >= 2, "batch_norm: expected an input [N, C, ...] of at least 2 ",
                   "dimensions, but got input of size ", input.sizes());
  KILN_CHECK_TYPE(input.is_floating_point(), "batch_norm: expected a floating point input, but ",
                  "got ", dtype_name(input.dtype()));
  const int64_t channels = input.size(1);
  check_channel_vector("running_mean", running_mean, channels);
  check_channel_vector("running_var", running_var, channels);
  check_channel_vector("weight", weight, channels);
  check_channel_vector("bias", bias, channels);
  const int64_t count = input.numel() / std::max<int64_t>(channels, 1);
  KILN_CHECK_VALUE(!training || count > 1, "batch_norm: expected more than 1 value per channel ",
                   "when training, got input size ", input.sizes());
  return count;
}

bool records_gradient(std::initializer_list<const Tensor*> ts) {
  if (!autograd::GradMode::is_enabled()) return false;
  for (const Tensor* t : ts) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

// Batch normalization with the running statistics: out = relu?(x * a + b) with a = weight /
// sqrt(var + eps), b = bias - mean * a, all per channel. One pass of the fused channel_affine
// where the device has it and no gradient is recorded (a float32 input gets the composite's bits).
Tensor batch_norm_eval(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, double eps, bool relu) {
  KILN_CHECK_VALUE(running_mean.defined() && running_var.defined(), "batch_norm: running_mean ",
                   "and running_var must be defined in evaluation mode");
  DimVector shape(static_cast<size_t>(input.dim()), 1);
  shape[1] = input.size(1);
  Tensor a = rsqrt(running_var.reshape(shape) + eps);
  if (weight.defined()) a = a * weight.reshape(shape);
  Tensor b = -running_mean.reshape(shape) * a;
  if (bias.defined()) b = b + bias.reshape(shape);
  if (kiln::detail::channel_affine_available(input) &&
      !records_gradient({&input, &running_mean, &running_var, &weight, &bias})) {
    return kiln::detail::channel_affine(input, a, b, relu);
  }
  Tensor out = input * a.to(input.dtype()) + b.to(input.dtype());
  return relu ? kiln::relu(out) : out;
}

}  // namespace

Tensor batch_norm_relu(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, bool training, double momentum,
                       double eps) {
  const int64_t count = check_batch_norm(input, running_mean, running_var, weight, bias, training);
  if (training && kiln::detail::fused_batch_norm_available(input, weight, bias)) {
    auto [out, mean, var] = kiln::detail::batch_norm_train(input, weight, bias, eps, /*relu=*/true);
    update_running(running_mean, running_var, mean, var, count, momentum);
    return out;
  }
  if (!training) {
    return batch_norm_eval(input, running_mean, running_var, weight, bias, eps, /*relu=*/true);
  }
  return kiln::relu(batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                               eps));
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  const int64_t count = check_batch_norm(input, running_mean, running_var, weight, bias, training);
  const int64_t channels = input.size(1);
  DimVector shape(static_cast<size_t>(input.dim()), 1), dims;
  shape[1] = channels;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (d != 1) dims.push_back(d);
  }
  Tensor scale = weight.defined() ? weight.reshape(shape) : Tensor();
  Tensor shift = bias.defined() ? bias.reshape(shape) : Tensor();
  if (training) {
    if (kiln::detail::fused_batch_norm_available(input, weight, bias)) {
      auto [out, mean, var] =
          kiln::detail::batch_norm_train(input, weight, bias, eps, /*relu=*/false);
      update_running(running_mean, running_var, mean, var, count, momentum);
      return out;
    }
    if (input.dtype() == kBFloat16 || input.dtype() == kHalf) {
      // Note [Batch norm in 16-bit floats]: as PyTorch's kernels, statistics in float32 and the
      // output in the input's dtype (what autocast leaves between convolutions); the per-channel
      // factor and shift are rounded once, so the output stays 16-bit. This is the composite for
      // devices without the fused kernels (ops/norm.h).
      Tensor mean = kiln::mean(input, dims, /*keepdim=*/true, kFloat);
      Tensor deviation = input.to(kFloat) - mean;  // not rounded to 16 bits before squaring
      Tensor var = kiln::mean(deviation * deviation, dims, /*keepdim=*/true);
      Tensor centred = input - mean.to(input.dtype());
      update_running(running_mean, running_var, mean, var, count, momentum);
      Tensor factor = rsqrt(var + eps);
      if (scale.defined()) factor = factor * scale;
      Tensor out = centred * factor.to(input.dtype());
      return shift.defined() ? out + shift.to(input.dtype()) : out;
    }
    Tensor mean = kiln::mean(input, dims, /*keepdim=*/true);
    Tensor centred = input - mean;
    Tensor var = kiln::mean(centred * centred, dims, /*keepdim=*/true);
    update_running(running_mean, running_var, mean, var, count, momentum);
    // one [1, C, 1, ...] factor, so the full-size tensor is multiplied once
    Tensor factor = rsqrt(var + eps);
    if (scale.defined()) factor = factor * scale;
    Tensor out = centred * factor;
    return shift.defined() ? out + shift : out;
  }
  return batch_norm_eval(input, running_mean, running_var, weight, bias, eps, /*relu=*/false);
}

}  // namespace kiln::nn::functional

// --- the options forms, instance, group and local response normalization ----------------------
namespace kiln::nn::functional {

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options) {
  KILN_CHECK_VALUE(options.momentum().has_value(), "batch_norm: momentum must be a number; ",
                   "the cumulative average (momentum=None) is the modules' (BatchNorm1d/2d/3d)");
  return batch_norm(input, running_mean, running_var, options.weight(), options.bias(),
                    options.training(), *options.momentum(), options.eps());
}

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options) {
  return functional::layer_norm(input, options.normalized_shape(), options.weight(), options.bias(),
                                options.eps());
}

// As PyTorch's: batch_norm of input viewed as [1, N * C, d...], with the running statistics and
// the affine parameters repeated per instance; the running statistics then take the average of
// their N updated copies.
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options) {
  KILN_CHECK_VALUE(input.dim() >= 3, "instance_norm: expected an input [N, C, d...] of at least ",
                   "3 dimensions, but got input of size ", input.sizes());
  const int64_t n = input.size(0), c = input.size(1);
  KILN_CHECK_VALUE(!options.use_input_stats() || input.numel() == 0 || input.numel() / (n * c) > 1,
                   "instance_norm: expected more than 1 spatial element when using the input's ",
                   "statistics, got input of size ", input.sizes());
  int64_t planes = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(n, c, &planes), "instance_norm: input of size ",
                   input.sizes(), " has more than int64 planes");
  DimVector shape(input.sizes());
  shape[0] = 1;
  shape[1] = planes;
  auto per_instance = [n](const Tensor& t) { return t.defined() ? t.repeat({n}) : Tensor(); };
  Tensor running_mean = per_instance(options.running_mean());
  Tensor running_var = per_instance(options.running_var());
  Tensor out = batch_norm(input.reshape(shape), running_mean, running_var,
                          per_instance(options.weight()), per_instance(options.bias()),
                          options.use_input_stats(), options.momentum(), options.eps());
  if (options.use_input_stats()) {
    NoGradGuard no_grad;
    for (auto [target, copies] : {std::pair{options.running_mean(), running_mean},
                                  std::pair{options.running_var(), running_var}}) {
      if (target.defined()) const_cast<Tensor&>(target).copy_(copies.view({n, c}).mean({0}));
    }
  }
  return out.view(input.sizes());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options) {
  const int64_t groups = options.num_groups();
  KILN_CHECK_VALUE(input.dim() >= 2, "group_norm: expected an input [N, C, d...] of at least 2 ",
                   "dimensions, but got input of size ", input.sizes());
  KILN_CHECK_TYPE(input.is_floating_point(), "group_norm: expected a floating point input, but ",
                  "got ", dtype_name(input.dtype()));
  const int64_t c = input.size(1);
  KILN_CHECK_VALUE(groups > 0 && c % groups == 0, "group_norm: expected number of channels in ",
                   "input to be divisible by num_groups, but got input of size ", input.sizes(),
                   " and num_groups=", groups);
  for (const Tensor* t : {&options.weight(), &options.bias()}) {
    KILN_CHECK_VALUE(!t->defined() || (t->dim() == 1 && t->numel() == c), "group_norm: expected ",
                     t == &options.weight() ? "weight" : "bias", " of size [", c, "], but got ",
                     t->sizes());
  }
  const int64_t n = input.size(0);
  if (input.numel() == 0) return input.clone();
  Tensor x = input.reshape({n, groups, -1});
  Tensor mean = kiln::mean(x, {2}, /*keepdim=*/true);
  Tensor centred = x - mean;
  Tensor var = kiln::mean(centred * centred, {2}, /*keepdim=*/true);
  Tensor out = (centred * rsqrt(var + options.eps())).view(input.sizes());
  DimVector shape(static_cast<size_t>(input.dim()), 1);
  shape[1] = c;
  if (options.weight().defined()) out = out * options.weight().reshape(shape);
  if (options.bias().defined()) out = out + options.bias().reshape(shape);
  return out;
}

// The channel window's sum of squares as `size` shifted slices of the squares padded with
// size / 2 zero channels before and (size - 1) / 2 after, as PyTorch's. An integer input gives
// the default floating dtype, as PyTorch's.
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options) {
  const int64_t size = options.size();
  KILN_CHECK_VALUE(input.dim() >= 3, "local_response_norm: expected 3D or higher ",
                   "dimensionality input (got input of size ", input.sizes(), ")");
  KILN_CHECK_VALUE(size > 0, "local_response_norm: size must be positive (got ", size, ")");
  KILN_CHECK_TYPE(input.dtype() != kBool, "local_response_norm: expected a numeric input, but ",
                  "got bool");
  if (input.numel() == 0) return input.clone();
  const int64_t c = input.size(1);
  DimVector before(input.sizes()), after(input.sizes());
  before[1] = size / 2;
  after[1] = (size - 1) / 2;
  TensorOptions like = TensorOptions(input.dtype()).device(input.device());
  Tensor squares = cat({zeros(before, like), input * input, zeros(after, like)}, 1);
  Tensor window = squares.narrow(1, 0, c);
  for (int64_t j = 1; j < size; ++j) window = window + squares.narrow(1, j, c);
  // Integers average as PyTorch's integer avg_pool does (truncated), then turn floating.
  Tensor scaled = input.is_floating_point() ? window * (options.alpha() / static_cast<double>(size))
                                            : floor_divide(window, size) * options.alpha();
  Tensor divisor = pow(scaled + options.k(), options.beta());
  return input / divisor;
}

Tensor normalize(const Tensor& input, NormalizeFuncOptions options) {
  Tensor norm = kiln::norm(input, options.p(), {options.dim()}, /*keepdim=*/true);
  Tensor result = input / clamp_min(norm, options.eps());
  if (!options.out()) return result;
  const Tensor& out = *options.out();
  if (out.sizes() != result.sizes()) out.resize_(result.sizes());
  return out.copy_(result);
}

}  // namespace kiln::nn::functional

namespace kiln {
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps, bool /*cudnn_enable*/) {
  return nn::functional::layer_norm(input, normalized_shape, weight, bias, eps);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  return nn::functional::group_norm(
      input, nn::functional::GroupNormFuncOptions(num_groups).weight(weight).bias(bias).eps(eps));
}
}  // namespace kiln
