// Loss modules: MSELoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss. Each forwards
// (input, target) to its kiln::nn::functional counterpart with its options; class weights are
// registered as buffers ("weight", "pos_weight"), so to() moves them.
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

}  // namespace kiln::nn
