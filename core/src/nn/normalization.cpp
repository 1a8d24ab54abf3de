// BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm, LocalResponseNorm.
#include <kiln/autograd.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/normalization.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/normalization.h>

#include "repr.h"

#include <sstream>

namespace kiln::nn {

BatchNormImplBase::BatchNormImplBase(const BatchNormOptions& options, std::vector<int64_t> dims,
                                     const char* kind)
    : options(options), dims_(std::move(dims)), kind_(kind) {
  const int64_t c = options.num_features();
  KILN_CHECK_VALUE(c > 0, kind, ": num_features must be positive (got ", c, ")");
  if (options.affine()) {
    weight = register_parameter("weight", empty({c}));
    bias = register_parameter("bias", empty({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({c}));
    running_var = register_buffer("running_var", ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kLong));
  }
  reset_parameters();
}

void BatchNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNormImplBase::run(const Tensor& input, bool relu) {
  bool accepted = false;
  for (int64_t d : dims_) accepted = accepted || input.dim() == d;
  KILN_CHECK_VALUE(accepted, kind_, ": expected ", dims_[0], "D",
                   dims_.size() > 1 ? " or " + std::to_string(dims_[1]) + "D" : std::string(),
                   " input (got ", input.dim(), "D input of size ", input.sizes(), ")");
  double factor = options.momentum().value_or(0.0);
  bool use_batch_stats = is_training() || !running_mean.defined();
  if (is_training() && running_mean.defined()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    if (!options.momentum()) factor = 1.0 / num_batches_tracked.item<double>();
  }
  // running_mean/var are undefined when not tracking: then they are neither used nor updated
  if (relu) {
    return functional::batch_norm_relu(input, running_mean, running_var, weight, bias,
                                       use_batch_stats, factor, options.eps());
  }
  return functional::batch_norm(input, running_mean, running_var, weight, bias, use_batch_stats,
                                factor, options.eps());
}

// As libtorch prints it (the form module.h describes).
void BatchNormImplBase::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::" << kind_ << "(" << options.num_features() << ", eps=" << options.eps()
         << ", momentum=";
  if (options.momentum()) {
    stream << *options.momentum();
  } else {
    stream << "None";
  }
  stream << ", affine=" << detail::bool_str(options.affine())
         << ", track_running_stats=" << detail::bool_str(options.track_running_stats()) << ")";
}

BatchNorm1dImpl::BatchNorm1dImpl(const BatchNormOptions& options)
    : BatchNormImplBase(options, {2, 3}, "BatchNorm1d") {}
Tensor BatchNorm1dImpl::forward(const Tensor& input) { return run(input, /*relu=*/false); }

BatchNorm2dImpl::BatchNorm2dImpl(const BatchNormOptions& options)
    : BatchNormImplBase(options, {4}, "BatchNorm2d") {}
Tensor BatchNorm2dImpl::forward(const Tensor& input) { return run(input, /*relu=*/false); }
Tensor BatchNorm2dImpl::forward_relu(const Tensor& input) { return run(input, /*relu=*/true); }

BatchNorm3dImpl::BatchNorm3dImpl(const BatchNormOptions& options)
    : BatchNormImplBase(options, {5}, "BatchNorm3d") {}
Tensor BatchNorm3dImpl::forward(const Tensor& input) { return run(input, /*relu=*/false); }

InstanceNormImplBase::InstanceNormImplBase(const InstanceNormOptions& options, int64_t spatial)
    : options(options), spatial_(spatial) {
  const int64_t c = options.num_features();
  KILN_CHECK_VALUE(c > 0, "InstanceNorm", spatial, "d: num_features must be positive (got ", c,
                   ")");
  if (options.affine()) {
    weight = register_parameter("weight", empty({c}));
    bias = register_parameter("bias", empty({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({c}));
    running_var = register_buffer("running_var", ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kLong));
  }
  reset_parameters();
}

void InstanceNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void InstanceNormImplBase::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor InstanceNormImplBase::forward(const Tensor& input) {
  KILN_CHECK_VALUE(input.dim() == spatial_ + 1 || input.dim() == spatial_ + 2, "InstanceNorm",
                   spatial_, "d: expected ", spatial_ + 1, "D (unbatched) or ", spatial_ + 2,
                   "D (batched) input (got ", input.dim(), "D input of size ", input.sizes(), ")");
  const bool unbatched = input.dim() == spatial_ + 1;
  Tensor x = unbatched ? input.unsqueeze(0) : input;
  Tensor out = functional::instance_norm(x, functional::InstanceNormFuncOptions()
                                                .running_mean(running_mean)
                                                .running_var(running_var)
                                                .weight(weight)
                                                .bias(bias)
                                                .use_input_stats(is_training() ||
                                                                 !options.track_running_stats())
                                                .momentum(options.momentum())
                                                .eps(options.eps()));
  return unbatched ? out.squeeze(0) : out;
}

void InstanceNormImplBase::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::InstanceNorm" << spatial_ << "d(" << options.num_features()
         << ", eps=" << options.eps() << ", momentum=" << options.momentum()
         << ", affine=" << detail::bool_str(options.affine())
         << ", track_running_stats=" << detail::bool_str(options.track_running_stats()) << ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options) : options(options) {
  const int64_t g = options.num_groups(), c = options.num_channels();
  KILN_CHECK_VALUE(g > 0 && c % g == 0, "GroupNorm: num_channels must be divisible by ",
                   "num_groups (got num_groups=", g, ", num_channels=", c, ")");
  if (options.affine()) {
    weight = register_parameter("weight", empty({c}));
    bias = register_parameter("bias", empty({c}));
  }
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return functional::group_norm(input, functional::GroupNormFuncOptions(options.num_groups())
                                           .weight(weight)
                                           .bias(bias)
                                           .eps(options.eps()));
}

void GroupNormImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::GroupNorm(" << options.num_groups() << ", " << options.num_channels()
         << ", eps=" << options.eps() << ", affine=" << detail::bool_str(options.affine()) << ")";
}

LocalResponseNormImpl::LocalResponseNormImpl(const LocalResponseNormOptions& options)
    : options(options) {
  KILN_CHECK_VALUE(options.size() > 0, "LocalResponseNorm: size must be positive (got ",
                   options.size(), ")");
}

Tensor LocalResponseNormImpl::forward(const Tensor& input) {
  return functional::local_response_norm(input, options);
}

// As libtorch: the numbers as C++ streams print them (alpha=0.0001, k=1).
void LocalResponseNormImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::LocalResponseNorm(" << options.size() << ", alpha=" << options.alpha()
         << ", beta=" << options.beta() << ", k=" << options.k() << ")";
}

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options) : options(options) {
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", kiln::empty(options.normalized_shape()));
    bias = register_parameter("bias", kiln::empty(options.normalized_shape()));
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return functional::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::LayerNorm(";
  detail::print_list(stream, options.normalized_shape());
  stream << ", eps=" << options.eps()
         << ", elementwise_affine=" << detail::bool_str(options.elementwise_affine()) << ")";
}

}  // namespace kiln::nn
