// Activation modules: ReLU, Sigmoid, Tanh, Softplus; GELU, SiLU, Mish, LeakyReLU, Hardshrink,
// Softshrink, LogSigmoid, Softsign, Tanhshrink (libtorch's options, pretty_print and functional
// forms, kiln::nn::functional::gelu and so on).
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

#include <string>

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

struct GELUOptions {
  // "none": x * Phi(x), Phi the normal CDF; "tanh": its tanh approximation.
  KILN_ARG(std::string, approximate) = "none";
};

struct LeakyReLUOptions {
  KILN_ARG(double, negative_slope) = 1e-2;
  KILN_ARG(bool, inplace) = false;
};

struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  KILN_ARG(double, lambda);
};

struct SoftshrinkOptions {
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  KILN_ARG(double, lambda);
};

namespace functional {
using GELUFuncOptions = GELUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
KILN_API Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {});
KILN_API Tensor silu(const Tensor& input);
KILN_API Tensor mish(const Tensor& input);
// In place on the input when options.inplace().
KILN_API Tensor leaky_relu(Tensor input, const LeakyReLUFuncOptions& options = {});
KILN_API Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options = {});
KILN_API Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options = {});
KILN_API Tensor logsigmoid(const Tensor& input);
KILN_API Tensor softsign(const Tensor& input);
KILN_API Tensor tanhshrink(const Tensor& input);
}  // namespace functional

// An activation module of one function of the input and options (pretty_print: libtorch's).
#define KILN_ACTIVATION_MODULE(Name, Options)                              \
  class KILN_API Name##Impl : public Module {                              \
   public:                                                                 \
    explicit Name##Impl(const Options& options = {}) : options(options) {} \
    Tensor forward(const Tensor& input);                                   \
    void pretty_print(std::ostream& stream) const override;                \
                                                                           \
    Options options;                                                       \
  };                                                                       \
  KILN_MODULE(Name)

// An activation without options.
#define KILN_PLAIN_ACTIVATION_MODULE(Name)                  \
  class KILN_API Name##Impl : public Module {               \
   public:                                                  \
    Tensor forward(const Tensor& input);                    \
    void pretty_print(std::ostream& stream) const override; \
  };                                                        \
  KILN_MODULE(Name)

KILN_ACTIVATION_MODULE(GELU, GELUOptions);
KILN_ACTIVATION_MODULE(LeakyReLU, LeakyReLUOptions);
KILN_ACTIVATION_MODULE(Hardshrink, HardshrinkOptions);
KILN_ACTIVATION_MODULE(Softshrink, SoftshrinkOptions);
KILN_PLAIN_ACTIVATION_MODULE(SiLU);
KILN_PLAIN_ACTIVATION_MODULE(Mish);
KILN_PLAIN_ACTIVATION_MODULE(LogSigmoid);
KILN_PLAIN_ACTIVATION_MODULE(Softsign);
KILN_PLAIN_ACTIVATION_MODULE(Tanhshrink);
#undef KILN_ACTIVATION_MODULE
#undef KILN_PLAIN_ACTIVATION_MODULE

namespace functional {
using ReLUFuncOptions = ReLUOptions;
using SoftplusFuncOptions = SoftplusOptions;
// relu, in place on the input when options.inplace() (and returning it).
KILN_API Tensor relu(Tensor input, const ReLUFuncOptions& options);
KILN_API Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options);
}  // namespace functional

}  // namespace kiln::nn

#include <kiln/nn/modules/activation2.h>  // ELU, SELU, Hardtanh, PReLU, Softmax, ...
