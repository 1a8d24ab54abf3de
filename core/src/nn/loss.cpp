// Loss modules.
#include <kiln/nn/functional.h>
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
                                   options.reduction());
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
