// Linear, Bilinear, Flatten, Unflatten and Identity modules.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

#include <string>
#include <utility>
#include <vector>

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

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  KILN_ARG(int64_t, in1_features);
  KILN_ARG(int64_t, in2_features);
  KILN_ARG(int64_t, out_features);
  KILN_ARG(bool, bias) = true;
};

// y = x1^T A x2 + b (F::bilinear): inputs [..., in1_features] and [..., in2_features] ->
// [..., out_features]. weight [out, in1, in2] and bias [out] are uniform in
// +-1/sqrt(in1_features), as PyTorch.
class KILN_API BilinearImpl : public Module {
 public:
  BilinearImpl(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : BilinearImpl(BilinearOptions(in1_features, in2_features, out_features)) {}
  explicit BilinearImpl(const BilinearOptions& options);

  void reset_parameters();
  // bilinear(input1, input2, weight, bias).
  Tensor forward(const Tensor& input1, const Tensor& input2);
  void pretty_print(std::ostream& stream) const override;

  BilinearOptions options;
  Tensor weight;
  Tensor bias;  // undefined when options.bias() is false
};
KILN_MODULE(Bilinear);

// Which dimension to unflatten and into what: UnflattenOptions(1, {2, 3}). The named form
// (UnflattenOptions("B", {{"B1", 2}, {"B2", 2}})) is accepted for libtorch's API, but kiln has
// no named tensors: forward refuses it.
struct UnflattenOptions {
  using namedshape_t = std::vector<std::pair<std::string, int64_t>>;
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  UnflattenOptions(const char* dimname, namedshape_t namedshape)
      : dimname_(dimname), namedshape_(std::move(namedshape)) {}
  UnflattenOptions(std::string dimname, namedshape_t namedshape)
      : dimname_(std::move(dimname)), namedshape_(std::move(namedshape)) {}
  KILN_ARG(int64_t, dim) = 0;
  KILN_ARG(std::string, dimname);
  KILN_ARG(std::vector<int64_t>, sizes);
  KILN_ARG(namedshape_t, namedshape);
};

// Expands dimension dim into sizes (one of them may be -1): [N, 6] -> [N, 2, 3] for dim 1.
class KILN_API UnflattenImpl : public Module {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes)
      : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  explicit UnflattenImpl(UnflattenOptions options);
  // input viewed with dim split into sizes.
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  UnflattenOptions options;
};
KILN_MODULE(Unflatten);

// Returns its input.
class KILN_API IdentityImpl : public Module {
 public:
  // input.
  Tensor forward(const Tensor& input) { return input; }
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(Identity);

}  // namespace kiln::nn
