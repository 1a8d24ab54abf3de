// Loss modules, and the distance modules (CosineSimilarity, PairwiseDistance).
#include <kiln/nn/functional.h>
#include <kiln/nn/modules/distance.h>
#include <kiln/nn/modules/loss.h>

namespace kiln::nn {

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::mse_loss(input, target, options.reduction());
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options)
    : options(options) {
  weight = register_buffer("weight", options.weight());
}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::cross_entropy(input, target, weight, options.ignore_index(),
                                   options.reduction(), options.label_smoothing());
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options) : options(options) {
  weight = register_buffer("weight", options.weight());
}

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::nll_loss(input, target, weight, options.ignore_index(), options.reduction());
}

BCELossImpl::BCELossImpl(const BCELossOptions& options) : options(options) {
  weight = register_buffer("weight", options.weight());
}

Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy(input, target, weight, options.reduction());
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options)
    : options(options) {
  weight = register_buffer("weight", options.weight());
  pos_weight = register_buffer("pos_weight", options.pos_weight());
}

Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy_with_logits(input, target, weight, options.reduction(),
                                                      pos_weight);
}

void MSELossImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::MSELoss()"; }
void CrossEntropyLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::CrossEntropyLoss()";
}
void NLLLossImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::NLLLoss()"; }
void BCELossImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::BCELoss()"; }
void BCEWithLogitsLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::BCEWithLogitsLoss()";
}

}  // namespace kiln::nn

// --- libtorch's other losses: they print as libtorch's modules do --------------------------------
namespace kiln::nn {
namespace {

const char* reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return "kNone";
    case Reduction::Mean: return "kMean";
    case Reduction::Sum: return "kSum";
  }
  return "?";
}

}  // namespace

Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::l1_loss(input, target, options.reduction());
}
void L1LossImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::L1Loss()"; }

Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::smooth_l1_loss(input, target, options.reduction(),
                                    options.beta().value_or(1.0));
}
// without parentheses, as libtorch's
void SmoothL1LossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::SmoothL1Loss";
}

Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::huber_loss(input, target, options.reduction(), options.delta());
}
void HuberLossImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::HuberLoss"; }

Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::kl_div(input, target, options.reduction(), options.log_target());
}
void KLDivLossImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::KLDivLoss()"; }

Tensor MarginRankingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                      const Tensor& target) {
  return functional::margin_ranking_loss(input1, input2, target, options.margin(),
                                         options.reduction());
}
void MarginRankingLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::MarginRankingLoss()";
}

Tensor HingeEmbeddingLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::hinge_embedding_loss(input, target, options.margin(), options.reduction());
}
void HingeEmbeddingLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::HingeEmbeddingLoss(margin=" << options.margin() << ")";
}

MultiMarginLossImpl::MultiMarginLossImpl(const MultiMarginLossOptions& options) : options(options) {
  KILN_CHECK_VALUE(options.p() == 1 || options.p() == 2, "MultiMarginLoss: only p == 1 and ",
                   "p == 2 are supported, but got p = ", options.p());
  KILN_CHECK_VALUE(!options.weight().defined() || options.weight().dim() == 1, "MultiMarginLoss: ",
                   "expected a 1-D weight (one per class), but got weight of size ",
                   options.weight().sizes());
  weight = register_buffer("weight", options.weight());
}
Tensor MultiMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::multi_margin_loss(input, target, options.p(), options.margin(), weight,
                                       options.reduction());
}
void MultiMarginLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::MultiMarginLoss(p=" << options.p() << ", margin=" << options.margin()
         << ", weight=" << weight << ", reduction=" << reduction_name(options.reduction()) << ")";
}

Tensor MultiLabelMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::multilabel_margin_loss(input, target, options.reduction());
}
void MultiLabelMarginLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::MultiLabelMarginLoss()";
}

Tensor SoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::soft_margin_loss(input, target, options.reduction());
}
void SoftMarginLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::SoftMarginLoss()";
}

MultiLabelSoftMarginLossImpl::MultiLabelSoftMarginLossImpl(
    const MultiLabelSoftMarginLossOptions& options)
    : options(options) {
  weight = register_buffer("weight", options.weight());
}
Tensor MultiLabelSoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return functional::multilabel_soft_margin_loss(input, target, weight, options.reduction());
}
void MultiLabelSoftMarginLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::MultiLabelSoftMarginLoss()";
}

Tensor CosineEmbeddingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                        const Tensor& target) {
  return functional::cosine_embedding_loss(input1, input2, target, options.margin(),
                                           options.reduction());
}
void CosineEmbeddingLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::CosineEmbeddingLoss(margin=" << options.margin() << ")";
}

Tensor TripletMarginLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                      const Tensor& negative) {
  return functional::triplet_margin_loss(anchor, positive, negative, options);
}
void TripletMarginLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::TripletMarginLoss(margin=" << options.margin() << ", p=" << options.p()
         << ", eps=" << options.eps() << ", swap=" << (options.swap() ? "true" : "false") << ")";
}

Tensor TripletMarginWithDistanceLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                                  const Tensor& negative) {
  return functional::triplet_margin_with_distance_loss(anchor, positive, negative, options);
}
void TripletMarginWithDistanceLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::TripletMarginWithDistanceLoss(margin=" << options.margin()
         << ", swap=" << (options.swap() ? "true" : "false") << ")";
}

Tensor PoissonNLLLossImpl::forward(const Tensor& log_input, const Tensor& target) {
  return functional::poisson_nll_loss(log_input, target, options);
}
void PoissonNLLLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::PoissonNLLLoss()";
}

Tensor GaussianNLLLossImpl::forward(const Tensor& input, const Tensor& target, const Tensor& var) {
  return functional::gaussian_nll_loss(input, target, var, options);
}
void GaussianNLLLossImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::GaussianNLLLoss()";
}

Tensor CTCLossImpl::forward(const Tensor& log_probs, const Tensor& targets,
                            const Tensor& input_lengths, const Tensor& target_lengths) {
  return functional::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}
void CTCLossImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::CTCLoss()"; }

// --- distances -------------------------------------------------------------------------------

Tensor CosineSimilarityImpl::forward(const Tensor& x1, const Tensor& x2) {
  return functional::cosine_similarity(x1, x2, options);
}
void CosineSimilarityImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::CosineSimilarity(dim=" << options.dim() << ", eps=" << options.eps() << ")";
}

Tensor PairwiseDistanceImpl::forward(const Tensor& x1, const Tensor& x2) {
  return functional::pairwise_distance(x1, x2, options);
}
void PairwiseDistanceImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::PairwiseDistance(p=" << options.p() << ", eps=" << options.eps()
         << ", keepdim=" << (options.keepdim() ? "true" : "false") << ")";
}

}  // namespace kiln::nn
