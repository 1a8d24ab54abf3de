// Options of the losses, shared by the loss modules (kiln/nn/modules/loss.h) and the functional
// losses (kiln/nn/functional.h), as libtorch's: `CrossEntropyLossOptions().ignore_index(0)`.
// Each names the type of its reduction `reduction_t`, as libtorch's variants do.
#pragma once

#include <kiln/nn/options.h>
#include <kiln/tensor.h>

#include <functional>
#include <optional>
#include <variant>

namespace kiln::nn {

struct MSELossOptions {
  using reduction_t = Reduction;
  MSELossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  KILN_ARG(Reduction, reduction);
};

// weight: a rescaling weight per class [C]; targets equal to ignore_index (class indices only)
// count for nothing; label_smoothing in [0, 1] mixes the target with the uniform distribution.
struct CrossEntropyLossOptions {
  using reduction_t = Reduction;
  CrossEntropyLossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(int64_t, ignore_index) = -100;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
  KILN_ARG(double, label_smoothing) = 0.0;
};

struct NLLLossOptions {
  using reduction_t = Reduction;
  NLLLossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(int64_t, ignore_index) = -100;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// weight: a rescaling weight broadcast to the input.
struct BCELossOptions {
  using reduction_t = Reduction;
  BCELossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// pos_weight: a weight of the positive examples, broadcast along the last dimension.
struct BCEWithLogitsLossOptions {
  using reduction_t = Reduction;
  BCEWithLogitsLossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
  KILN_ARG(Tensor, pos_weight);
};

// Options holding only a reduction are constructible from it, as libtorch's
// (`L1Loss(kiln::kSum)`, `F::soft_margin_loss(x, t, kiln::kNone)`).
struct L1LossOptions {
  using reduction_t = Reduction;
  L1LossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  KILN_ARG(Reduction, reduction);
};

struct SoftMarginLossOptions {
  using reduction_t = Reduction;
  SoftMarginLossOptions(Reduction reduction = Reduction::Mean)  // NOLINT
      : reduction_(reduction) {}
  KILN_ARG(Reduction, reduction);
};

struct MultiLabelMarginLossOptions {
  using reduction_t = Reduction;
  MultiLabelMarginLossOptions(Reduction reduction = Reduction::Mean)  // NOLINT
      : reduction_(reduction) {}
  KILN_ARG(Reduction, reduction);
};

// beta: where the loss turns from quadratic to linear (1 when unset; 0 is the L1 loss).
struct SmoothL1LossOptions {
  using reduction_t = Reduction;
  SmoothL1LossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  KILN_ARG(Reduction, reduction);
  KILN_ARG(std::optional<double>, beta);
};

// delta (> 0): where the loss turns from quadratic to linear.
struct HuberLossOptions {
  using reduction_t = Reduction;
  HuberLossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  KILN_ARG(Reduction, reduction);
  KILN_ARG(double, delta) = 1.0;
};

// kl_div's reduction: one of Reduction's, or kiln::kBatchMean (the sum divided by the batch
// size, the mathematical KL divergence), as libtorch's variant.
struct BatchMean {};
using KLDivReduction = std::variant<Reduction, BatchMean>;

// log_target: the target is given as log-probabilities.
struct KLDivLossOptions {
  using reduction_t = KLDivReduction;
  KLDivLossOptions(KLDivReduction reduction = Reduction::Mean)  // NOLINT
      : reduction_(reduction) {}
  KILN_ARG(KLDivReduction, reduction);
  KILN_ARG(bool, log_target) = false;
};

// margin: how far a negative pair's input must stay below the margin to cost nothing.
struct HingeEmbeddingLossOptions {
  using reduction_t = Reduction;
  HingeEmbeddingLossOptions() = default;
  KILN_ARG(double, margin) = 1.0;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// p (1 or 2): the power of each hinge; weight [C]: a weight per class of the target.
struct MultiMarginLossOptions {
  using reduction_t = Reduction;
  MultiMarginLossOptions() = default;
  KILN_ARG(int64_t, p) = 1;
  KILN_ARG(double, margin) = 1.0;
  KILN_ARG(Tensor, weight);
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// margin: the cosine a negative pair must stay below (from -1 to 1).
struct CosineEmbeddingLossOptions {
  using reduction_t = Reduction;
  CosineEmbeddingLossOptions() = default;
  KILN_ARG(double, margin) = 0.0;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// weight [C]: a weight per class.
struct MultiLabelSoftMarginLossOptions {
  using reduction_t = Reduction;
  MultiLabelSoftMarginLossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// The distances are pairwise_distance(., ., p, eps); swap also compares the positive with the
// negative and keeps the smaller distance (Balntas et al., "Learning shallow convolutional
// feature descriptors with triplet losses").
struct TripletMarginLossOptions {
  using reduction_t = Reduction;
  TripletMarginLossOptions() = default;
  KILN_ARG(double, margin) = 1.0;
  KILN_ARG(double, p) = 2.0;
  KILN_ARG(double, eps) = 1e-6;
  KILN_ARG(bool, swap) = false;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// distance_function: a nonnegative distance of two batches of vectors (pairwise_distance when
// unset).
struct TripletMarginWithDistanceLossOptions {
  using reduction_t = Reduction;
  using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
  TripletMarginWithDistanceLossOptions() = default;
  KILN_ARG(std::optional<distance_function_t>, distance_function);
  KILN_ARG(double, margin) = 1.0;
  KILN_ARG(bool, swap) = false;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// blank: the class of the blank label; zero_infinity: impossible alignments (infinite losses)
// count as zero, with a zero gradient.
struct CTCLossOptions {
  using reduction_t = Reduction;
  CTCLossOptions() = default;
  KILN_ARG(int64_t, blank) = 0;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
  KILN_ARG(bool, zero_infinity) = false;
};

// log_input: the input is the log of the rate (exp(input) - target * input) rather than the rate
// (input - target * log(input + eps)); full adds Stirling's approximation of log(target!).
struct PoissonNLLLossOptions {
  using reduction_t = Reduction;
  PoissonNLLLossOptions() = default;
  KILN_ARG(bool, log_input) = true;
  KILN_ARG(bool, full) = false;
  KILN_ARG(double, eps) = 1e-8;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// full adds the constant 0.5 * log(2 pi); variances below eps count as eps.
struct GaussianNLLLossOptions {
  using reduction_t = Reduction;
  GaussianNLLLossOptions() = default;
  KILN_ARG(bool, full) = false;
  KILN_ARG(double, eps) = 1e-6;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// margin: the required difference between the ranked pair.
struct MarginRankingLossOptions {
  using reduction_t = Reduction;
  MarginRankingLossOptions() = default;
  KILN_ARG(double, margin) = 0.0;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// Options of the distances (torch/nn/options/distance.h): dim to reduce, eps against a zero norm.
struct CosineSimilarityOptions {
  CosineSimilarityOptions() = default;
  KILN_ARG(int64_t, dim) = 1;
  KILN_ARG(double, eps) = 1e-8;
};

// p: the order of the norm of (x1 - x2 + eps) over the last dimension.
struct PairwiseDistanceOptions {
  PairwiseDistanceOptions(double p = 2.0) : p_(p) {}  // NOLINT
  KILN_ARG(double, p);
  KILN_ARG(double, eps) = 1e-6;
  KILN_ARG(bool, keepdim) = false;
};

}  // namespace kiln::nn

namespace kiln {
// libtorch's spelling of kl_div's batchmean reduction: `KLDivLossOptions(kiln::kBatchMean)`.
inline constexpr nn::BatchMean kBatchMean{};
}  // namespace kiln
