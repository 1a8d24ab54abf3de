// Linear, Flatten and Identity modules.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

namespace kiln::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  KILN_ARG(int64_t, in_features);
  KILN_ARG(int64_t, out_features);
  KILN_ARG(bool, bias) = true;
};

// y = x @ weight^T + bias: input [..., in_features] -> [..., out_features]. weight
// [out_features, in_features] is kaiming_uniform_(a = sqrt(5)), bias uniform in
// +-1/sqrt(in_features), as PyTorch.
class KILN_API LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features)
      : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);

  // Re-initialises weight and bias.
  void reset_parameters();
  // linear(input, weight, bias).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias;  // undefined when options.bias() is false
};
KILN_MODULE(Linear);

struct FlattenOptions {
  FlattenOptions() = default;
  KILN_ARG(int64_t, start_dim) = 1;
  KILN_ARG(int64_t, end_dim) = -1;
};

// Flattens dimensions start_dim..end_dim into one: [N, C, H, W] -> [N, C*H*W] by default.
class KILN_API FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {});
  // input.flatten(start_dim, end_dim).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  FlattenOptions options;
};
KILN_MODULE(Flatten);

// Returns its input.
class KILN_API IdentityImpl : public Module {
 public:
  // input.
  Tensor forward(const Tensor& input) { return input; }
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(Identity);

}  // namespace kiln::nn
