// Options of the normalization layers and functions, as libtorch's
// (torch/nn/options/{batchnorm,instancenorm,normalization}.h): BatchNormOptions(64).momentum(
// std::nullopt), GroupNormOptions(2, 8).eps(1e-3), F::BatchNormFuncOptions().training(true).
#pragma once

#include <kiln/nn/options.h>
#include <kiln/tensor.h>

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

using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

// BatchNormOptions with InstanceNorm's defaults: no affine parameters, no running statistics.
struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  KILN_ARG(int64_t, num_features);
  KILN_ARG(double, eps) = 1e-5;
  KILN_ARG(double, momentum) = 0.1;
  KILN_ARG(bool, affine) = false;
  KILN_ARG(bool, track_running_stats) = false;
};

using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  KILN_ARG(std::vector<int64_t>, normalized_shape);
  KILN_ARG(double, eps) = 1e-5;
  KILN_ARG(bool, elementwise_affine) = true;
};

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  KILN_ARG(int64_t, num_groups);
  KILN_ARG(int64_t, num_channels);
  KILN_ARG(double, eps) = 1e-5;
  KILN_ARG(bool, affine) = true;
};

struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT
  // how many neighbouring channels (the channel itself included) each normalization covers
  KILN_ARG(int64_t, size);
  KILN_ARG(double, alpha) = 1e-4;
  KILN_ARG(double, beta) = 0.75;
  KILN_ARG(double, k) = 1.;
};

namespace functional {

struct BatchNormFuncOptions {
  KILN_ARG(Tensor, weight) = {};
  KILN_ARG(Tensor, bias) = {};
  KILN_ARG(bool, training) = false;
  // required: the cumulative average needs a module's num_batches_tracked
  KILN_ARG(std::optional<double>, momentum) = 0.1;
  KILN_ARG(double, eps) = 1e-5;
};

struct InstanceNormFuncOptions {
  KILN_ARG(Tensor, running_mean) = {};
  KILN_ARG(Tensor, running_var) = {};
  KILN_ARG(Tensor, weight) = {};
  KILN_ARG(Tensor, bias) = {};
  // false: normalize with running_mean and running_var instead of each instance's statistics
  KILN_ARG(bool, use_input_stats) = true;
  KILN_ARG(double, momentum) = 0.1;
  KILN_ARG(double, eps) = 1e-5;
};

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  KILN_ARG(std::vector<int64_t>, normalized_shape);
  KILN_ARG(Tensor, weight) = {};
  KILN_ARG(Tensor, bias) = {};
  KILN_ARG(double, eps) = 1e-5;
};

struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  KILN_ARG(int64_t, num_groups);
  KILN_ARG(Tensor, weight) = {};
  KILN_ARG(Tensor, bias) = {};
  KILN_ARG(double, eps) = 1e-5;
};

using LocalResponseNormFuncOptions = LocalResponseNormOptions;

struct NormalizeFuncOptions {
  KILN_ARG(double, p) = 2.0;
  KILN_ARG(int64_t, dim) = 1;
  KILN_ARG(double, eps) = 1e-12;
  // Where the result is also written (resized to the input's sizes first when they differ).
  KILN_ARG(std::optional<Tensor>, out) = std::nullopt;
};

}  // namespace functional
}  // namespace kiln::nn
