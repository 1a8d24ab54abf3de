// ReLU, Sigmoid, Tanh, Softplus, Dropout; the activations of issue 15 and their functional forms.
#include <kiln/nn/functional.h>
#include <kiln/nn/modules/activation.h>
#include <kiln/nn/modules/dropout.h>

#include "repr.h"

#include <kiln/ops.h>

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

namespace functional {
Tensor gelu(const Tensor& input, const GELUFuncOptions& options) {
  return kiln::gelu(input, options.approximate());
}
Tensor silu(const Tensor& input) { return kiln::silu(input); }
Tensor mish(const Tensor& input) { return kiln::mish(input); }
Tensor leaky_relu(Tensor input, const LeakyReLUFuncOptions& options) {
  if (options.inplace()) return kiln::leaky_relu_(input, options.negative_slope());
  return kiln::leaky_relu(input, options.negative_slope());
}
Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options) {
  return kiln::hardshrink(input, options.lambda());
}
Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options) {
  return kiln::softshrink(input, options.lambda());
}
Tensor logsigmoid(const Tensor& input) { return kiln::logsigmoid(input); }
Tensor softsign(const Tensor& input) { return kiln::softsign(input); }
Tensor tanhshrink(const Tensor& input) { return kiln::tanhshrink(input); }
}  // namespace functional

Tensor GELUImpl::forward(const Tensor& input) { return functional::gelu(input, options); }
void GELUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::GELU(";
  if (options.approximate() != "none") stream << "approximate=" << options.approximate();
  stream << ")";
}

Tensor LeakyReLUImpl::forward(const Tensor& input) {
  return functional::leaky_relu(input, options);
}
void LeakyReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::LeakyReLU(negative_slope=" << options.negative_slope();
  if (options.inplace()) stream << ", inplace=" << detail::bool_str(true);
  stream << ")";
}

Tensor HardshrinkImpl::forward(const Tensor& input) {
  return functional::hardshrink(input, options);
}
void HardshrinkImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Hardshrink(" << options.lambda() << ")";
}

Tensor SoftshrinkImpl::forward(const Tensor& input) {
  return functional::softshrink(input, options);
}
void SoftshrinkImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Softshrink(" << options.lambda() << ")";
}

#define KILN_PLAIN_ACTIVATION(Name, function)                                             \
  Tensor Name##Impl::forward(const Tensor& input) { return functional::function(input); } \
  void Name##Impl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::" #Name "()"; }
KILN_PLAIN_ACTIVATION(SiLU, silu)
KILN_PLAIN_ACTIVATION(Mish, mish)
KILN_PLAIN_ACTIVATION(LogSigmoid, logsigmoid)
KILN_PLAIN_ACTIVATION(Softsign, softsign)
KILN_PLAIN_ACTIVATION(Tanhshrink, tanhshrink)
#undef KILN_PLAIN_ACTIVATION

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
