// Loss modules: MSELoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss, and the rest of
// libtorch's (L1Loss, SmoothL1Loss, ..., CTCLoss) with GaussianNLLLoss. Each forwards its inputs to
// its kiln::nn::functional counterpart with its options; class weights are registered as buffers
// ("weight", "pos_weight"), so to() moves them. The modules after BCEWithLogitsLoss print as
// libtorch's (`kiln::nn::HingeEmbeddingLoss(margin=4)`).
#pragma once

#include <kiln/nn/loss_options.h>
#include <kiln/nn/module.h>

namespace kiln::nn {

class KILN_API MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : options(options) {}
  // mse_loss(input, target, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  MSELossOptions options;
};
KILN_MODULE(MSELoss);

class KILN_API CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  // cross_entropy(input, target, weight, ignore_index, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  CrossEntropyLossOptions options;
  Tensor weight;
};
KILN_MODULE(CrossEntropyLoss);

class KILN_API NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  // nll_loss(input, target, weight, ignore_index, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  NLLLossOptions options;
  Tensor weight;
};
KILN_MODULE(NLLLoss);

class KILN_API BCELossImpl : public Module {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  // binary_cross_entropy(input, target, weight, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  BCELossOptions options;
  Tensor weight;
};
KILN_MODULE(BCELoss);

class KILN_API BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  // binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  BCEWithLogitsLossOptions options;
  Tensor weight, pos_weight;
};
KILN_MODULE(BCEWithLogitsLoss);

class KILN_API L1LossImpl : public Module {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : options(options) {}
  // l1_loss(input, target, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  L1LossOptions options;
};
KILN_MODULE(L1Loss);

class KILN_API SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {}) : options(options) {}
  // smooth_l1_loss(input, target, reduction, beta).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  SmoothL1LossOptions options;
};
KILN_MODULE(SmoothL1Loss);

class KILN_API HuberLossImpl : public Module {
 public:
  explicit HuberLossImpl(const HuberLossOptions& options = {}) : options(options) {}
  // huber_loss(input, target, reduction, delta).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  HuberLossOptions options;
};
KILN_MODULE(HuberLoss);

class KILN_API KLDivLossImpl : public Module {
 public:
  explicit KLDivLossImpl(const KLDivLossOptions& options = {}) : options(options) {}
  // kl_div(input, target, reduction, log_target).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  KLDivLossOptions options;
};
KILN_MODULE(KLDivLoss);

class KILN_API MarginRankingLossImpl : public Module {
 public:
  explicit MarginRankingLossImpl(const MarginRankingLossOptions& options = {}) : options(options) {}
  // margin_ranking_loss(input1, input2, target, margin, reduction).
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  MarginRankingLossOptions options;
};
KILN_MODULE(MarginRankingLoss);

class KILN_API HingeEmbeddingLossImpl : public Module {
 public:
  explicit HingeEmbeddingLossImpl(const HingeEmbeddingLossOptions& options = {})
      : options(options) {}
  // hinge_embedding_loss(input, target, margin, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  HingeEmbeddingLossOptions options;
};
KILN_MODULE(HingeEmbeddingLoss);

class KILN_API MultiMarginLossImpl : public Module {
 public:
  // Checks p (1 or 2) and that a weight is 1-D.
  explicit MultiMarginLossImpl(const MultiMarginLossOptions& options = {});
  // multi_margin_loss(input, target, p, margin, weight, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  MultiMarginLossOptions options;
  Tensor weight;
};
KILN_MODULE(MultiMarginLoss);

class KILN_API MultiLabelMarginLossImpl : public Module {
 public:
  explicit MultiLabelMarginLossImpl(const MultiLabelMarginLossOptions& options = {})
      : options(options) {}
  // multilabel_margin_loss(input, target, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  MultiLabelMarginLossOptions options;
};
KILN_MODULE(MultiLabelMarginLoss);

class KILN_API SoftMarginLossImpl : public Module {
 public:
  explicit SoftMarginLossImpl(const SoftMarginLossOptions& options = {}) : options(options) {}
  // soft_margin_loss(input, target, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  SoftMarginLossOptions options;
};
KILN_MODULE(SoftMarginLoss);

class KILN_API MultiLabelSoftMarginLossImpl : public Module {
 public:
  explicit MultiLabelSoftMarginLossImpl(const MultiLabelSoftMarginLossOptions& options = {});
  // multilabel_soft_margin_loss(input, target, weight, reduction).
  Tensor forward(const Tensor& input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  MultiLabelSoftMarginLossOptions options;
  Tensor weight;
};
KILN_MODULE(MultiLabelSoftMarginLoss);

class KILN_API CosineEmbeddingLossImpl : public Module {
 public:
  explicit CosineEmbeddingLossImpl(const CosineEmbeddingLossOptions& options = {})
      : options(options) {}
  // cosine_embedding_loss(input1, input2, target, margin, reduction).
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  CosineEmbeddingLossOptions options;
};
KILN_MODULE(CosineEmbeddingLoss);

class KILN_API TripletMarginLossImpl : public Module {
 public:
  explicit TripletMarginLossImpl(const TripletMarginLossOptions& options = {}) : options(options) {}
  // triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction).
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  void pretty_print(std::ostream& stream) const override;
  TripletMarginLossOptions options;
};
KILN_MODULE(TripletMarginLoss);

class KILN_API TripletMarginWithDistanceLossImpl : public Module {
 public:
  explicit TripletMarginWithDistanceLossImpl(
      const TripletMarginWithDistanceLossOptions& options = {})
      : options(options) {}
  // triplet_margin_with_distance_loss(anchor, positive, negative, options).
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  void pretty_print(std::ostream& stream) const override;
  TripletMarginWithDistanceLossOptions options;
};
KILN_MODULE(TripletMarginWithDistanceLoss);

class KILN_API PoissonNLLLossImpl : public Module {
 public:
  explicit PoissonNLLLossImpl(const PoissonNLLLossOptions& options = {}) : options(options) {}
  // poisson_nll_loss(log_input, target, log_input, full, eps, reduction).
  Tensor forward(const Tensor& log_input, const Tensor& target);
  void pretty_print(std::ostream& stream) const override;
  PoissonNLLLossOptions options;
};
KILN_MODULE(PoissonNLLLoss);

class KILN_API GaussianNLLLossImpl : public Module {
 public:
  explicit GaussianNLLLossImpl(const GaussianNLLLossOptions& options = {}) : options(options) {}
  // gaussian_nll_loss(input, target, var, full, eps, reduction).
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var);
  void pretty_print(std::ostream& stream) const override;
  GaussianNLLLossOptions options;
};
KILN_MODULE(GaussianNLLLoss);

class KILN_API CTCLossImpl : public Module {
 public:
  explicit CTCLossImpl(const CTCLossOptions& options = {}) : options(options) {}
  // ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
  // zero_infinity).
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths);
  void pretty_print(std::ostream& stream) const override;
  CTCLossOptions options;
};
KILN_MODULE(CTCLoss);

}  // namespace kiln::nn
