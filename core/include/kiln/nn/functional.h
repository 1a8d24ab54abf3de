// kiln::nn::functional — the stateless forms of the layers and the losses, as
// torch::nn::functional (`namespace F = kiln::nn::functional;`). Every function is a composite of
// kiln operators, so it runs on every device and autograd differentiates it; each is written to
// stay finite where the naive formula overflows (softmax of [1000, 0] is [1, 0]).
//
// Shapes: N is the batch, C the channels or classes; `d...` are extra dimensions.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/functional/attention.h>
#include <kiln/nn/functional/conv.h>
#include <kiln/nn/functional/distance.h>
#include <kiln/nn/functional/dropout.h>
#include <kiln/nn/functional/embedding.h>
#include <kiln/nn/functional/fractional_pooling.h>
#include <kiln/nn/functional/gumbel_softmax.h>
#include <kiln/nn/functional/linear.h>
#include <kiln/nn/functional/normalization.h>
#include <kiln/nn/functional/padding.h>
#include <kiln/nn/functional/pooling.h>
#include <kiln/nn/functional/upsampling.h>
#include <kiln/nn/functional/vision.h>
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
// raises IndexError. label_smoothing (in [0, 1]) mixes the target with the uniform distribution:
// (1 - s) * loss + s * (the loss of the uniform target).
KILN_API Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                              int64_t ignore_index = -100, Reduction reduction = Reduction::Mean,
                              double label_smoothing = 0.0);
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

// --- more losses (functional_loss_*.cpp), as torch::nn::functional's ---------------------------
// Each takes `reduction` as the losses above; targets broadcast to the input where noted.

// |input - target|, target broadcast to input.
KILN_API Tensor l1_loss(const Tensor& input, const Tensor& target,
                        Reduction reduction = Reduction::Mean);
// With d = |input - target|: 0.5 * d^2 / beta where d < beta, else d - 0.5 * beta; beta >= 0
// (0 gives l1_loss).
KILN_API Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                               Reduction reduction = Reduction::Mean, double beta = 1.0);
// With d = |input - target|: 0.5 * d^2 where d < delta, else delta * (d - 0.5 * delta); delta > 0.
KILN_API Tensor huber_loss(const Tensor& input, const Tensor& target,
                           Reduction reduction = Reduction::Mean, double delta = 1.0);
// KL divergence of log-probabilities input from target: target * (log(target) - input), 0 where
// target is 0 (log_target: exp(target) * (target - input)). kBatchMean divides the sum by the
// batch size input.size(0).
KILN_API Tensor kl_div(const Tensor& input, const Tensor& target,
                       KLDivReduction reduction = Reduction::Mean, bool log_target = false);
// max(0, -target * (input1 - input2) + margin) for targets of 1 or -1; the three of one rank.
KILN_API Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2,
                                    const Tensor& target, double margin = 0.0,
                                    Reduction reduction = Reduction::Mean);
// input where target is 1, max(0, margin - input) where target is -1 (other targets: both).
KILN_API Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                                     Reduction reduction = Reduction::Mean);
// Multi-class hinge of input [N, C] or [C] and class indices target [N] or []: per sample,
// sum over j != y of weight[y] * max(0, margin - input[y] + input[j])^p / C, p in {1, 2}.
KILN_API Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p = 1,
                                  double margin = 1.0, const Tensor& weight = {},
                                  Reduction reduction = Reduction::Mean);
// Multi-label hinge of input [N, C] or [C] and target class indices of the same shape, read up to
// the first -1: per sample, sum over targets y and non-targets j of max(0, 1 - (input[y] -
// input[j])) / C. Computed on [N, C, C] intermediates.
KILN_API Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                                       Reduction reduction = Reduction::Mean);
// log(1 + exp(-target * input)), computed without overflow; targets are 1 or -1.
KILN_API Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                                 Reduction reduction = Reduction::Mean);
// Per sample of input [N, C]: the mean over classes of the binary cross entropy of the logits
// with target [N, C] in [0, 1], each class scaled by weight [C].
KILN_API Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                            const Tensor& weight = {},
                                            Reduction reduction = Reduction::Mean);
// 1 - cos(input1, input2) where target is 1, max(0, cos - margin) where target is -1; inputs
// [N, D] with target [N], or [D] with target [].
KILN_API Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2,
                                      const Tensor& target, double margin = 0.0,
                                      Reduction reduction = Reduction::Mean);
// max(0, margin + d(anchor, positive) - d(anchor, negative)), d = pairwise_distance(., ., p,
// eps); swap takes the smaller of d(anchor, negative) and d(positive, negative).
KILN_API Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive,
                                    const Tensor& negative, double margin = 1.0, double p = 2.0,
                                    double eps = 1e-6, bool swap = false,
                                    Reduction reduction = Reduction::Mean);
// Negative log-likelihood of target under a Poisson distribution of rate exp(input) (log_input)
// or input; full adds Stirling's term target * log(target) - target + 0.5 * log(2 pi target)
// where target > 1.
KILN_API Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true,
                                 bool full = false, double eps = 1e-8,
                                 Reduction reduction = Reduction::Mean);
// Negative log-likelihood of target under a Gaussian of mean input and variance var:
// 0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 * log(2 pi) if full).
// var has input's shape, or input's without its last dimension (or with it as 1).
KILN_API Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                                  bool full = false, double eps = 1e-6,
                                  Reduction reduction = Reduction::Mean);
// Connectionist temporal classification of log_probs [T, N, C] (or [T, C]) against targets,
// padded [N, S] or concatenated [sum(target_lengths)], with per-sample lengths (int64/int32 [N]):
// -log of the total probability of the alignments. Mean divides each loss by its target length
// before averaging over the batch.
KILN_API Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets,
                         const Tensor& input_lengths, const Tensor& target_lengths,
                         int64_t blank = 0, Reduction reduction = Reduction::Mean,
                         bool zero_infinity = false);
KILN_API Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                         IntArrayRef target_lengths, int64_t blank = 0,
                         Reduction reduction = Reduction::Mean, bool zero_infinity = false);

// --- distances (functional_distance.cpp) -------------------------------------------------------
// sum(x1 * x2) / sqrt(max(|x1|^2, eps^2) * max(|x2|^2, eps^2)) along dim, inputs broadcast.
KILN_API Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1,
                                  double eps = 1e-8);
// The p-norm of x1 - x2 + eps over the last dimension (kept as 1 when keepdim).
KILN_API Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0,
                                  double eps = 1e-6, bool keepdim = false);

// libtorch's option forms of the losses and distances above.
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using GaussianNLLLossFuncOptions = GaussianNLLLossOptions;
using CTCLossFuncOptions = CTCLossOptions;
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
KILN_API Tensor l1_loss(const Tensor& input, const Tensor& target,
                        const L1LossFuncOptions& options);
// beta given here or in options (not both); 1 when neither.
KILN_API Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                               const SmoothL1LossFuncOptions& options,
                               std::optional<double> beta = std::nullopt);
KILN_API Tensor huber_loss(const Tensor& input, const Tensor& target,
                           const HuberLossFuncOptions& options);
KILN_API Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options);
KILN_API Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2,
                                    const Tensor& target,
                                    const MarginRankingLossFuncOptions& options);
KILN_API Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                                     const HingeEmbeddingLossFuncOptions& options);
KILN_API Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                                  const MultiMarginLossFuncOptions& options);
KILN_API Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                                       const MultilabelMarginLossFuncOptions& options);
KILN_API Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                                 const SoftMarginLossFuncOptions& options);
KILN_API Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                            const MultilabelSoftMarginLossFuncOptions& options);
KILN_API Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2,
                                      const Tensor& target,
                                      const CosineEmbeddingLossFuncOptions& options);
KILN_API Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive,
                                    const Tensor& negative,
                                    const TripletMarginLossFuncOptions& options);
// max(0, margin + d(anchor, positive) - d(anchor, negative)) with the options' distance d
// (pairwise_distance when unset); swap as triplet_margin_loss's.
KILN_API Tensor triplet_margin_with_distance_loss(
    const Tensor& anchor, const Tensor& positive, const Tensor& negative,
    const TripletMarginWithDistanceLossFuncOptions& options = {});
KILN_API Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                                 const PoissonNLLLossFuncOptions& options);
KILN_API Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                                  const GaussianNLLLossFuncOptions& options);
KILN_API Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets,
                         const Tensor& input_lengths, const Tensor& target_lengths,
                         const CTCLossFuncOptions& options);
KILN_API Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                                  const CosineSimilarityFuncOptions& options);
KILN_API Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                                  const PairwiseDistanceFuncOptions& options);

}  // namespace kiln::nn::functional

namespace kiln {
// As torch::cosine_similarity and torch::pairwise_distance.
using nn::functional::cosine_similarity;
using nn::functional::pairwise_distance;
}  // namespace kiln
