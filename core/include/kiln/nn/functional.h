// kiln::nn::functional — the stateless forms of the layers and the losses, as
// torch::nn::functional (`namespace F = kiln::nn::functional;`). Every function is a composite of
// kiln operators, so it runs on every device and autograd differentiates it; each is written to
// stay finite where the naive formula overflows (softmax of [1000, 0] is [1, 0]).
//
// Shapes: N is the batch, C the channels or classes; `d...` are extra dimensions.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/functional/conv.h>
#include <kiln/nn/functional/normalization.h>
#include <kiln/nn/functional/pooling.h>
#include <kiln/nn/loss_options.h>
#include <kiln/nn/options.h>
#include <kiln/ops.h>
#include <kiln/tensor.h>

#include <optional>

namespace kiln::nn::functional {

// --- layers ------------------------------------------------------------------------------------
// input [..., in] @ weight[out, in]^T + bias [out] -> [..., out].
KILN_API Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
// max(input, 0).
KILN_API Tensor relu(const Tensor& input);
// log(1 + exp(beta * input)) / beta, smooth ReLU; the input itself where beta * input exceeds
// threshold (the two agree there within float32's precision).
KILN_API Tensor softplus(const Tensor& input, double beta = 1.0, double threshold = 20.0);
// exp(input) / sum(exp(input)) along dim, computed after subtracting the maximum; the input is
// first converted to dtype when given.
KILN_API Tensor softmax(const Tensor& input, int64_t dim,
                        std::optional<ScalarType> dtype = std::nullopt);
// log(softmax(input)) as input - logsumexp(input): finite for any finite input.
KILN_API Tensor log_softmax(const Tensor& input, int64_t dim,
                            std::optional<ScalarType> dtype = std::nullopt);
// log(sum(exp(input))) over dims, stably (kiln::logsumexp).
KILN_API Tensor logsumexp(const Tensor& input, IntArrayRef dims, bool keepdim = false);
// In training, zeroes each element with probability p and scales the others by 1 / (1 - p);
// the identity otherwise.
KILN_API Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);
// Normalizes over the trailing dimensions normalized_shape (biased variance), then scales by
// weight and shifts by bias (both of normalized_shape, optional).
KILN_API Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                           const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);
// Batch normalization of input [N, C, d...] per channel. In training: normalizes with the
// batch's mean and biased variance and, when running_mean/var are given, updates them in place
// (running = (1 - momentum) * running + momentum * batch, with the unbiased variance). Otherwise
// normalizes with running_mean and running_var. weight and bias [C] are optional.
KILN_API Tensor batch_norm(const Tensor& input, const Tensor& running_mean,
                           const Tensor& running_var, const Tensor& weight = {},
                           const Tensor& bias = {}, bool training = false, double momentum = 0.1,
                           double eps = 1e-5);
// relu(batch_norm(...)), in one pass over the data in training mode where the device has the
// fused kernels (the CPU has): what nn::Sequential runs for a BatchNorm followed by a ReLU.
KILN_API Tensor batch_norm_relu(const Tensor& input, const Tensor& running_mean,
                                const Tensor& running_var, const Tensor& weight = {},
                                const Tensor& bias = {}, bool training = false,
                                double momentum = 0.1, double eps = 1e-5);
// Rows of weight [num, dim] picked by integer indices [...]: [..., dim]. The row padding_idx
// gets no gradient.
KILN_API Tensor embedding(const Tensor& input, const Tensor& weight,
                          std::optional<int64_t> padding_idx = std::nullopt);
// kiln::conv2d, also taking an unbatched input [C, H, W].
KILN_API Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                       IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
                       int64_t groups = 1);

// --- losses ------------------------------------------------------------------------------------
// Each takes `reduction`: None keeps the elementwise losses, Mean averages them, Sum adds them.

// (input - target)^2, target broadcast to input.
KILN_API Tensor mse_loss(const Tensor& input, const Tensor& target,
                         Reduction reduction = Reduction::Mean);
// Cross entropy of logits input [C], [N, C] or [N, C, d...] and a target that is either class
// indices (int64 [], [N], [N, d...]) or class probabilities (input's shape):
//   indices:       -weight[t] * log_softmax(input)[t], Mean divides by the sum of weight[t];
//   probabilities: -sum_c weight[c] * target[c] * log_softmax(input)[c], Mean divides by N*d...
// Targets equal to ignore_index (indices only) count for nothing. An index outside [0, C)
// raises IndexError.
KILN_API Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                              int64_t ignore_index = -100, Reduction reduction = Reduction::Mean);
// -weight[t] * input[t] for log-probabilities input and class indices target (as cross_entropy).
KILN_API Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                         int64_t ignore_index = -100, Reduction reduction = Reduction::Mean);
// -weight * (target * log(input) + (1 - target) * log(1 - input)) for probabilities input in
// [0, 1] of target's shape; each log is clamped to >= -100 as PyTorch's.
KILN_API Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                                     const Tensor& weight = {},
                                     Reduction reduction = Reduction::Mean);
// binary_cross_entropy(sigmoid(input), target) computed from the logits without overflow;
// pos_weight multiplies the positive term.
KILN_API Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                                 const Tensor& weight = {},
                                                 Reduction reduction = Reduction::Mean,
                                                 const Tensor& pos_weight = {});

// libtorch's option forms: F::cross_entropy(x, t, F::CrossEntropyFuncOptions().ignore_index(0)).
using MSELossFuncOptions = MSELossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
// The losses above with their options.
KILN_API Tensor mse_loss(const Tensor& input, const Tensor& target,
                         const MSELossFuncOptions& options);
KILN_API Tensor cross_entropy(const Tensor& input, const Tensor& target,
                              const CrossEntropyFuncOptions& options);
KILN_API Tensor nll_loss(const Tensor& input, const Tensor& target,
                         const NLLLossFuncOptions& options);
KILN_API Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                                     const BinaryCrossEntropyFuncOptions& options);
KILN_API Tensor binary_cross_entropy_with_logits(
    const Tensor& input, const Tensor& target,
    const BinaryCrossEntropyWithLogitsFuncOptions& options);

}  // namespace kiln::nn::functional
