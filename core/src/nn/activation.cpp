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
  stream << "ReLU(";
  if (options.inplace()) stream << "inplace=" << detail::py_bool(true);
  stream << ")";
}

Tensor SigmoidImpl::forward(const Tensor& input) { return kiln::sigmoid(input); }

Tensor TanhImpl::forward(const Tensor& input) { return kiln::tanh(input); }

Tensor SoftplusImpl::forward(const Tensor& input) {
  return functional::softplus(input, options.beta(), options.threshold());
}

void SoftplusImpl::pretty_print(std::ostream& stream) const {
  stream << "Softplus(beta=" << detail::py_number(options.beta())
         << ", threshold=" << detail::py_number(options.threshold()) << ")";
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
  stream << "Dropout(p=" << detail::py_float(options.p())
         << ", inplace=" << detail::py_bool(options.inplace()) << ")";
}

}  // namespace kiln::nn
