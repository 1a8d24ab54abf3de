// ReLU, Sigmoid, Tanh, Softplus, Dropout.
#include <kiln/nn/functional.h>
#include <kiln/nn/modules/activation.h>
#include <kiln/nn/modules/dropout.h>

#include "repr.h"

namespace kiln::nn {

Tensor ReLUImpl::forward(Tensor input) {
  if (options.inplace()) return input.relu_();
  return kiln::relu(input);
}

void ReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ReLU(";
  if (options.inplace()) stream << "inplace=" << detail::bool_str(true);
  stream << ")";
}

Tensor SigmoidImpl::forward(const Tensor& input) { return kiln::sigmoid(input); }

void SigmoidImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::Sigmoid()"; }

Tensor TanhImpl::forward(const Tensor& input) { return kiln::tanh(input); }

void TanhImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::Tanh()"; }

Tensor SoftplusImpl::forward(const Tensor& input) {
  return functional::softplus(input, options.beta(), options.threshold());
}

void SoftplusImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Softplus(beta=" << options.beta() << ", threshold=" << options.threshold()
         << ")";
}

DropoutImpl::DropoutImpl(const DropoutOptions& options) : options(options) {
  KILN_CHECK_VALUE(options.p() >= 0.0 && options.p() <= 1.0, "Dropout: probability has to be ",
                   "between 0 and 1, but got ", options.p());
}

Tensor DropoutImpl::forward(Tensor input) {
  Tensor out = functional::dropout(input, options.p(), is_training());
  if (options.inplace() && !out.is_same(input)) return input.copy_(out);
  return out;
}

void DropoutImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Dropout(p=" << options.p()
         << ", inplace=" << detail::bool_str(options.inplace()) << ")";
}

}  // namespace kiln::nn
