// Activation modules: ReLU, Sigmoid, Tanh, Softplus.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

namespace kiln::nn {

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  KILN_ARG(bool, inplace);
};

// max(x, 0); in place on the input when options.inplace.
class KILN_API ReLUImpl : public Module {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : options(options) {}
  // relu(input).
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;

  ReLUOptions options;
};
KILN_MODULE(ReLU);

// 1 / (1 + exp(-x)).
class KILN_API SigmoidImpl : public Module {
 public:
  // sigmoid(input).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(Sigmoid);

// tanh(x).
class KILN_API TanhImpl : public Module {
 public:
  // tanh(input).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(Tanh);

struct SoftplusOptions {
  KILN_ARG(double, beta) = 1.0;
  KILN_ARG(double, threshold) = 20.0;
};

// log(1 + exp(beta * x)) / beta; x where beta * x > threshold (functional::softplus).
class KILN_API SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {}) : options(options) {}
  // softplus(input, beta, threshold).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  SoftplusOptions options;
};
KILN_MODULE(Softplus);

}  // namespace kiln::nn
