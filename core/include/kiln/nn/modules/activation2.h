// More activation modules, as libtorch's: ELU, SELU, CELU, Hardtanh, ReLU6, Threshold, PReLU,
// RReLU, GLU, Softmax, Softmin, LogSoftmax, Softmax2d; and Hardswish and Hardsigmoid (which
// libtorch's C++ frontend lacks), with their options, pretty_print and functional forms
// (kiln::nn::functional::elu(x, F::ELUFuncOptions().alpha(0.5)) and so on).
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

#include <optional>

namespace kiln::nn {

struct ELUOptions {
  KILN_ARG(double, alpha) = 1.0;
  KILN_ARG(bool, inplace) = false;
};

struct SELUOptions {
  SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  KILN_ARG(bool, inplace);
};

struct CELUOptions {
  KILN_ARG(double, alpha) = 1.0;
  KILN_ARG(bool, inplace) = false;
};

struct HardtanhOptions {
  KILN_ARG(double, min_val) = -1.0;
  KILN_ARG(double, max_val) = 1.0;
  KILN_ARG(bool, inplace) = false;
};

struct ReLU6Options {
  ReLU6Options(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  KILN_ARG(bool, inplace);
};

struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  KILN_ARG(double, threshold);
  KILN_ARG(double, value);
  KILN_ARG(bool, inplace) = false;
};

struct PReLUOptions {
  // the number of weights: 1, or the input's channels (its dimension 1)
  KILN_ARG(int64_t, num_parameters) = 1;
  // their initial value
  KILN_ARG(double, init) = 0.25;
};

struct RReLUOptions {
  KILN_ARG(double, lower) = 1.0 / 8.0;
  KILN_ARG(double, upper) = 1.0 / 3.0;
  KILN_ARG(bool, inplace) = false;
};

struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT
  KILN_ARG(int64_t, dim);
};

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  KILN_ARG(int64_t, dim);
};
using SoftminOptions = SoftmaxOptions;
using LogSoftmaxOptions = SoftmaxOptions;

namespace functional {
using ELUFuncOptions = ELUOptions;
using SELUFuncOptions = SELUOptions;
using CELUFuncOptions = CELUOptions;
using HardtanhFuncOptions = HardtanhOptions;
using ReLU6FuncOptions = ReLU6Options;
using ThresholdFuncOptions = ThresholdOptions;
using GLUFuncOptions = GLUOptions;

struct RReLUFuncOptions {
  KILN_ARG(double, lower) = 1.0 / 8.0;
  KILN_ARG(double, upper) = 1.0 / 3.0;
  KILN_ARG(bool, training) = false;
  KILN_ARG(bool, inplace) = false;
};

// The softmax family's options: the dimension, and the dtype the input is first converted to.
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  KILN_ARG(int64_t, dim);
  KILN_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
using SoftminFuncOptions = SoftmaxFuncOptions;
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;

// Each is in place on the input when options.inplace() (and returns it).
KILN_API Tensor elu(Tensor input, const ELUFuncOptions& options = {});
KILN_API Tensor selu(Tensor input, const SELUFuncOptions& options = {});
KILN_API Tensor celu(Tensor input, const CELUFuncOptions& options = {});
KILN_API Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options = {});
KILN_API Tensor relu6(Tensor input, const ReLU6FuncOptions& options = {});
KILN_API Tensor threshold(Tensor input, const ThresholdFuncOptions& options);
// Eval mode (the default): leaky_relu with slope (lower + upper) / 2; training: random slopes.
KILN_API Tensor rrelu(Tensor input, const RReLUFuncOptions& options = {});
KILN_API Tensor hardswish(const Tensor& input);
KILN_API Tensor hardsigmoid(const Tensor& input);
// input for input > 0, weight * input otherwise; weight [1] or [input.size(1)].
KILN_API Tensor prelu(const Tensor& input, const Tensor& weight);
KILN_API Tensor glu(const Tensor& input, const GLUFuncOptions& options = {});
KILN_API Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
// softmax(-input).
KILN_API Tensor softmin(const Tensor& input, int64_t dim,
                        std::optional<ScalarType> dtype = std::nullopt);
KILN_API Tensor softmin(const Tensor& input, const SoftminFuncOptions& options);
KILN_API Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);
}  // namespace functional

// An activation module of one function of the input and options (pretty_print: libtorch's); the
// input is taken by value, since the in-place ones return it.
#define KILN_ACTIVATION2_MODULE(Name, Options)                             \
  class KILN_API Name##Impl : public Module {                              \
   public:                                                                 \
    explicit Name##Impl(const Options& options = {}) : options(options) {} \
    Tensor forward(Tensor input);                                          \
    void pretty_print(std::ostream& stream) const override;                \
                                                                           \
    Options options;                                                       \
  };                                                                       \
  KILN_MODULE(Name)

KILN_ACTIVATION2_MODULE(ELU, ELUOptions);
KILN_ACTIVATION2_MODULE(SELU, SELUOptions);
KILN_ACTIVATION2_MODULE(CELU, CELUOptions);
KILN_ACTIVATION2_MODULE(ReLU6, ReLU6Options);
KILN_ACTIVATION2_MODULE(RReLU, RReLUOptions);
KILN_ACTIVATION2_MODULE(GLU, GLUOptions);
#undef KILN_ACTIVATION2_MODULE

// clamp to [min_val, max_val] (max_val > min_val), gradient 0 at the bounds.
class KILN_API HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;

  HardtanhOptions options;
};
KILN_MODULE(Hardtanh);

// value where input <= threshold, input otherwise.
class KILN_API ThresholdImpl : public Module {
 public:
  ThresholdImpl(double threshold, double value)
      : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  explicit ThresholdImpl(const ThresholdOptions& options) : options(options) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;

  ThresholdOptions options;
};
KILN_MODULE(Threshold);

// prelu with a learned weight [num_parameters], initialised to options.init().
class KILN_API PReLUImpl : public Module {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  // prelu(input, weight).
  Tensor forward(const Tensor& input);
  // Fills the weight with options.init().
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  PReLUOptions options;
  Tensor weight;
};
KILN_MODULE(PReLU);

// The softmax family along options.dim(); Softmax2d along the channels (dim -3) of a 3-D or 4-D
// input.
#define KILN_SOFTMAX_MODULE(Name)                                           \
  class KILN_API Name##Impl : public Module {                               \
   public:                                                                  \
    explicit Name##Impl(int64_t dim) : options(dim) {}                      \
    explicit Name##Impl(const Name##Options& options) : options(options) {} \
    Tensor forward(const Tensor& input);                                    \
    void pretty_print(std::ostream& stream) const override;                 \
                                                                            \
    Name##Options options;                                                  \
  };                                                                        \
  KILN_MODULE(Name)
KILN_SOFTMAX_MODULE(Softmax);
KILN_SOFTMAX_MODULE(Softmin);
KILN_SOFTMAX_MODULE(LogSoftmax);
#undef KILN_SOFTMAX_MODULE

// Modules of one function without options.
#define KILN_PLAIN_ACTIVATION2_MODULE(Name)                 \
  class KILN_API Name##Impl : public Module {               \
   public:                                                  \
    Tensor forward(const Tensor& input);                    \
    void pretty_print(std::ostream& stream) const override; \
  };                                                        \
  KILN_MODULE(Name)
KILN_PLAIN_ACTIVATION2_MODULE(Softmax2d);
KILN_PLAIN_ACTIVATION2_MODULE(Hardswish);
KILN_PLAIN_ACTIVATION2_MODULE(Hardsigmoid);
#undef KILN_PLAIN_ACTIVATION2_MODULE

}  // namespace kiln::nn
