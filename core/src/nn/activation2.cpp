// The activations of kiln/nn/modules/activation2.h: functional forms and modules, printed as
// libtorch prints them.
#include <kiln/autograd.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/modules/activation.h>

#include "repr.h"

#include <kiln/ops.h>

namespace kiln::nn {

namespace functional {
Tensor elu(Tensor input, const ELUFuncOptions& options) {
  if (options.inplace()) return kiln::elu_(input, options.alpha());
  return kiln::elu(input, options.alpha());
}
Tensor selu(Tensor input, const SELUFuncOptions& options) {
  if (options.inplace()) return kiln::selu_(input);
  return kiln::selu(input);
}
Tensor celu(Tensor input, const CELUFuncOptions& options) {
  if (options.inplace()) return kiln::celu_(input, options.alpha());
  return kiln::celu(input, options.alpha());
}
Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options) {
  if (options.inplace()) return kiln::hardtanh_(input, options.min_val(), options.max_val());
  return kiln::hardtanh(input, options.min_val(), options.max_val());
}
Tensor relu(Tensor input, const ReLUFuncOptions& options) {
  if (options.inplace()) return input.relu_();
  return kiln::relu(input);
}
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options) {
  return softplus(input, options.beta(), options.threshold());
}
Tensor relu6(Tensor input, const ReLU6FuncOptions& options) {
  if (options.inplace()) return kiln::relu6_(input);
  return kiln::relu6(input);
}
Tensor threshold(Tensor input, const ThresholdFuncOptions& options) {
  if (options.inplace()) return kiln::threshold_(input, options.threshold(), options.value());
  return kiln::threshold(input, options.threshold(), options.value());
}
Tensor rrelu(Tensor input, const RReLUFuncOptions& options) {
  Tensor out = kiln::rrelu(input, options.lower(), options.upper(), options.training());
  if (!options.inplace()) return out;
  input.copy_(out);
  return input;
}
Tensor hardswish(const Tensor& input) { return kiln::hardswish(input); }
Tensor hardsigmoid(const Tensor& input) { return kiln::hardsigmoid(input); }
Tensor prelu(const Tensor& input, const Tensor& weight) { return kiln::prelu(input, weight); }
Tensor glu(const Tensor& input, const GLUFuncOptions& options) {
  return kiln::glu(input, options.dim());
}
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  return softmax(input, options.dim(), options.dtype());
}
Tensor softmin(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax(dtype ? -input.to(*dtype) : -input, dim);
}
Tensor softmin(const Tensor& input, const SoftminFuncOptions& options) {
  return softmin(input, options.dim(), options.dtype());
}
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  return log_softmax(input, options.dim(), options.dtype());
}
}  // namespace functional

namespace {
void print_inplace(std::ostream& stream, bool inplace, bool first) {
  if (inplace) stream << (first ? "" : ", ") << "inplace=" << detail::bool_str(true);
}
}  // namespace

Tensor ELUImpl::forward(Tensor input) { return functional::elu(input, options); }
void ELUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ELU(alpha=" << options.alpha();
  print_inplace(stream, options.inplace(), false);
  stream << ")";
}

Tensor SELUImpl::forward(Tensor input) { return functional::selu(input, options); }
void SELUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::SELU(";
  print_inplace(stream, options.inplace(), true);
  stream << ")";
}

Tensor CELUImpl::forward(Tensor input) { return functional::celu(input, options); }
void CELUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::CELU(alpha=" << options.alpha();
  print_inplace(stream, options.inplace(), false);
  stream << ")";
}

Tensor ReLU6Impl::forward(Tensor input) { return functional::relu6(input, options); }
void ReLU6Impl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ReLU6(";
  print_inplace(stream, options.inplace(), true);
  stream << ")";
}

// As libtorch's RReLU: random slopes in training, their mean in evaluation.
Tensor RReLUImpl::forward(Tensor input) {
  return functional::rrelu(input, functional::RReLUFuncOptions()
                                      .lower(options.lower())
                                      .upper(options.upper())
                                      .training(is_training())
                                      .inplace(options.inplace()));
}
void RReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::RReLU(lower=" << options.lower() << ", upper=" << options.upper();
  print_inplace(stream, options.inplace(), false);
  stream << ")";
}

Tensor GLUImpl::forward(Tensor input) { return functional::glu(input, options); }
void GLUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::GLU(dim=" << options.dim() << ")";
}

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options) : options(options) {
  KILN_CHECK_VALUE(options.max_val() > options.min_val(), "Hardtanh: max_val must be greater ",
                   "than min_val (got min_val=", options.min_val(), ", max_val=", options.max_val(),
                   ")");
}
Tensor HardtanhImpl::forward(Tensor input) { return functional::hardtanh(input, options); }
void HardtanhImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Hardtanh(min_val=" << options.min_val() << ", max_val=" << options.max_val();
  print_inplace(stream, options.inplace(), false);
  stream << ")";
}

Tensor ThresholdImpl::forward(Tensor input) { return functional::threshold(input, options); }
void ThresholdImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Threshold(threshold=" << options.threshold()
         << ", value=" << options.value();
  print_inplace(stream, options.inplace(), false);
  stream << ")";
}

PReLUImpl::PReLUImpl(const PReLUOptions& options) : options(options) {
  KILN_CHECK_VALUE(options.num_parameters() >= 1, "PReLU: num_parameters must be at least 1 (got ",
                   options.num_parameters(), ")");
  weight = register_parameter("weight", empty({options.num_parameters()}));
  reset_parameters();
}
void PReLUImpl::reset_parameters() {
  NoGradGuard no_grad;
  weight.fill_(options.init());
}
Tensor PReLUImpl::forward(const Tensor& input) { return functional::prelu(input, weight); }
void PReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::PReLU(num_parameters=" << options.num_parameters() << ")";
}

Tensor SoftmaxImpl::forward(const Tensor& input) {
  return functional::softmax(input, options.dim());
}
void SoftmaxImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Softmax(dim=" << options.dim() << ")";
}
Tensor SoftminImpl::forward(const Tensor& input) {
  return functional::softmin(input, options.dim());
}
void SoftminImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Softmin(dim=" << options.dim() << ")";
}
Tensor LogSoftmaxImpl::forward(const Tensor& input) {
  return functional::log_softmax(input, options.dim());
}
void LogSoftmaxImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::LogSoftmax(dim=" << options.dim() << ")";
}

Tensor Softmax2dImpl::forward(const Tensor& input) {
  KILN_CHECK_VALUE(input.dim() == 3 || input.dim() == 4, "Softmax2d: Softmax2d requires a 3D or ",
                   "4D tensor as input (got sizes ", input.sizes(), ")");
  return functional::softmax(input, -3);
}
void Softmax2dImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::Softmax2d()"; }

Tensor HardswishImpl::forward(const Tensor& input) { return functional::hardswish(input); }
void HardswishImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::Hardswish()"; }
Tensor HardsigmoidImpl::forward(const Tensor& input) { return functional::hardsigmoid(input); }
void HardsigmoidImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Hardsigmoid()";
}

}  // namespace kiln::nn
