// BatchNorm2d and LayerNorm.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

#include <optional>
#include <vector>

namespace kiln::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  KILN_ARG(int64_t, num_features);
  KILN_ARG(double, eps) = 1e-5;
  // nullopt: a cumulative average of all batches instead of an exponential one.
  KILN_ARG(std::optional<double>, momentum) = 0.1;
  KILN_ARG(bool, affine) = true;
  KILN_ARG(bool, track_running_stats) = true;
};

// Batch normalization of [N, C, H, W] per channel, as PyTorch's BatchNorm2d. In training (or
// without running statistics) it normalizes with the batch's statistics and updates the buffers
// running_mean, running_var (unbiased) and num_batches_tracked; in evaluation it uses the
// running statistics. weight (ones) and bias (zeros) are parameters when affine.
class KILN_API BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNormOptions& options);

  // Running statistics to their initial values (mean 0, variance 1, no batches).
  void reset_running_stats();
  // reset_running_stats() and weight 1, bias 0.
  void reset_parameters();
  // The normalized input, [N, C, H, W].
  Tensor forward(const Tensor& input);
  // relu(forward(input)) through functional::batch_norm_relu: one pass over the data in
  // training where the device has the fused kernels. Sequential calls it for a BatchNorm2d
  // followed by a ReLU.
  Tensor forward_relu(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  BatchNormOptions options;
  Tensor weight, bias;                                    // undefined unless affine
  Tensor running_mean, running_var, num_batches_tracked;  // undefined unless tracking

 private:
  Tensor run(const Tensor& input, bool relu);
};
KILN_MODULE(BatchNorm2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  KILN_ARG(std::vector<int64_t>, normalized_shape);
  KILN_ARG(double, eps) = 1e-5;
  KILN_ARG(bool, elementwise_affine) = true;
};

// Normalizes over the trailing normalized_shape dimensions, then applies weight (ones) and bias
// (zeros) of that shape when elementwise_affine.
class KILN_API LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape)
      : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(const LayerNormOptions& options);

  // weight to 1, bias to 0.
  void reset_parameters();
  // layer_norm(input, normalized_shape, weight, bias, eps).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  LayerNormOptions options;
  Tensor weight, bias;  // undefined unless elementwise_affine
};
KILN_MODULE(LayerNorm);

}  // namespace kiln::nn
