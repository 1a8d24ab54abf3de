// Normalization functions with libtorch's options (torch/nn/functional/{batchnorm,instancenorm,
// normalization}.h): F::group_norm(x, F::GroupNormFuncOptions(2).weight(w)). All are composites
// of kiln operators (batch_norm's training mode uses the fused primitives where the device has
// them), so autograd differentiates them; under autocast they run in float32 as PyTorch's.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options/normalization.h>
#include <kiln/tensor.h>

namespace kiln::nn::functional {

// batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps) of
// kiln/nn/functional.h; momentum must be given.
KILN_API Tensor batch_norm(const Tensor& input, const Tensor& running_mean,
                           const Tensor& running_var, const BatchNormFuncOptions& options);
// Normalizes each instance's channel [d...] of input [N, C, d...] by its own mean and biased
// variance (use_input_stats) and updates running_mean/var [C] with their average over the batch;
// or normalizes with running_mean/var. weight and bias [C] are optional.
KILN_API Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});
// layer_norm(input, normalized_shape, weight, bias, eps) of kiln/nn/functional.h.
KILN_API Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);
// Normalizes input [N, C, d...] over each of num_groups groups of C / num_groups channels (and
// all of d...), then scales by weight [C] and shifts by bias [C] (both optional).
KILN_API Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);
// input / (k + alpha / size * sum of input^2 over `size` neighbouring channels)^beta, channels
// past either end counting as 0; input [N, C, d...] with at least 3 dimensions.
KILN_API Tensor local_response_norm(const Tensor& input,
                                    const LocalResponseNormFuncOptions& options);
// input / max(p-norm of input along dim, eps).
KILN_API Tensor normalize(const Tensor& input, NormalizeFuncOptions options = {});

}  // namespace kiln::nn::functional

namespace kiln {
// ATen's form, as torch::layer_norm: functional::layer_norm (cudnn_enable has no effect).
KILN_API Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                           const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5,
                           bool cudnn_enable = true);
// ATen's form, as torch::group_norm: functional::group_norm with these options.
KILN_API Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {},
                           const Tensor& bias = {}, double eps = 1e-5);
}  // namespace kiln
