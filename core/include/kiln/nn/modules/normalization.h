// Normalization layers, as libtorch's: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm,
// GroupNorm, LocalResponseNorm.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options/normalization.h>

#include <optional>
#include <vector>

namespace kiln::nn {

// The shared part of BatchNorm1d/2d/3d: batch normalization per channel of [N, C, d...], as
// PyTorch's. In training (or without running statistics) it normalizes with the batch's
// statistics and updates the buffers running_mean, running_var (unbiased) and
// num_batches_tracked; in evaluation it uses the running statistics. weight (ones) and bias
// (zeros) are parameters when affine.
class KILN_API BatchNormImplBase : public Module {
 public:
  // Running statistics to their initial values (mean 0, variance 1, no batches).
  void reset_running_stats();
  // reset_running_stats() and weight 1, bias 0.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  BatchNormOptions options;
  Tensor weight, bias;                                    // undefined unless affine
  Tensor running_mean, running_var, num_batches_tracked;  // undefined unless tracking

 protected:
  // `dims`: the input dimensions accepted (2 or 3 for BatchNorm1d); `kind`: "BatchNorm2d".
  BatchNormImplBase(const BatchNormOptions& options, std::vector<int64_t> dims, const char* kind);
  Tensor run(const Tensor& input, bool relu);

 private:
  std::vector<int64_t> dims_;
  const char* kind_;
};

// Batch normalization of [N, C] or [N, C, L].
class KILN_API BatchNorm1dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm1dImpl(int64_t num_features)
      : BatchNorm1dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm1dImpl(const BatchNormOptions& options);
  // The normalized input.
  Tensor forward(const Tensor& input);
};
KILN_MODULE(BatchNorm1d);

// Batch normalization of [N, C, H, W].
class KILN_API BatchNorm2dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm2dImpl(int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNormOptions& options);
  // The normalized input, [N, C, H, W].
  Tensor forward(const Tensor& input);
  // relu(forward(input)) through functional::batch_norm_relu: one pass over the data in
  // training where the device has the fused kernels. Sequential calls it for a BatchNorm2d
  // followed by a ReLU.
  Tensor forward_relu(const Tensor& input);
};
KILN_MODULE(BatchNorm2d);

// Batch normalization of [N, C, D, H, W].
class KILN_API BatchNorm3dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm3dImpl(int64_t num_features)
      : BatchNorm3dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm3dImpl(const BatchNormOptions& options);
  // The normalized input.
  Tensor forward(const Tensor& input);
};
KILN_MODULE(BatchNorm3d);

// The shared part of InstanceNorm1d/2d/3d: each instance's channel normalized by its own
// statistics (in training, or always without running statistics), as PyTorch's; with
// track_running_stats, the buffers running_mean and running_var follow the batch's average
// and evaluation uses them. weight (ones) and bias (zeros) are parameters when affine.
class KILN_API InstanceNormImplBase : public Module {
 public:
  // Running statistics to their initial values (mean 0, variance 1, no batches).
  void reset_running_stats();
  // reset_running_stats() and weight 1, bias 0.
  void reset_parameters();
  // functional::instance_norm with the module's state; input [N, C, d...] or unbatched.
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  InstanceNormOptions options;
  Tensor weight, bias;                                    // undefined unless affine
  Tensor running_mean, running_var, num_batches_tracked;  // undefined unless tracking

 protected:
  // `spatial`: the spatial dimensions (1, 2 or 3).
  InstanceNormImplBase(const InstanceNormOptions& options, int64_t spatial);

 private:
  int64_t spatial_;
};

class KILN_API InstanceNorm1dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm1dImpl(int64_t num_features)
      : InstanceNorm1dImpl(InstanceNormOptions(num_features)) {}
  explicit InstanceNorm1dImpl(const InstanceNormOptions& options)
      : InstanceNormImplBase(options, 1) {}
};
KILN_MODULE(InstanceNorm1d);

class KILN_API InstanceNorm2dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm2dImpl(int64_t num_features)
      : InstanceNorm2dImpl(InstanceNormOptions(num_features)) {}
  explicit InstanceNorm2dImpl(const InstanceNormOptions& options)
      : InstanceNormImplBase(options, 2) {}
};
KILN_MODULE(InstanceNorm2d);

class KILN_API InstanceNorm3dImpl : public InstanceNormImplBase {
 public:
  explicit InstanceNorm3dImpl(int64_t num_features)
      : InstanceNorm3dImpl(InstanceNormOptions(num_features)) {}
  explicit InstanceNorm3dImpl(const InstanceNormOptions& options)
      : InstanceNormImplBase(options, 3) {}
};
KILN_MODULE(InstanceNorm3d);

// group_norm of [N, C, d...] with num_groups groups and weight (ones) and bias (zeros) [C]
// when affine.
class KILN_API GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  // weight to 1, bias to 0.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  GroupNormOptions options;
  Tensor weight, bias;  // undefined unless affine
};
KILN_MODULE(GroupNorm);

// local_response_norm of [N, C, d...] over `size` neighbouring channels.
class KILN_API LocalResponseNormImpl : public Module {
 public:
  explicit LocalResponseNormImpl(int64_t size)
      : LocalResponseNormImpl(LocalResponseNormOptions(size)) {}
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  LocalResponseNormOptions options;
};
KILN_MODULE(LocalResponseNorm);

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
