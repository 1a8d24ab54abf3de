// BatchNorm2d, LayerNorm.
#include <kiln/autograd.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/normalization.h>

#include "repr.h"

namespace kiln::nn {

BatchNorm2dImpl::BatchNorm2dImpl(const BatchNormOptions& options) : options(options) {
  const int64_t c = options.num_features();
  KILN_CHECK_VALUE(c > 0, "BatchNorm2d: num_features must be positive (got ", c, ")");
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

void BatchNorm2dImpl::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void BatchNorm2dImpl::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm2dImpl::forward(const Tensor& input) { return run(input, /*relu=*/false); }

Tensor BatchNorm2dImpl::forward_relu(const Tensor& input) { return run(input, /*relu=*/true); }

Tensor BatchNorm2dImpl::run(const Tensor& input, bool relu) {
  KILN_CHECK_VALUE(input.dim() == 4, "BatchNorm2d: expected 4D input (got ", input.dim(),
                   "D input of size ", input.sizes(), ")");
  double factor = options.momentum().value_or(0.0);
  bool use_batch_stats = is_training() || !running_mean.defined();
  if (is_training() && running_mean.defined()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    if (!options.momentum()) factor = 1.0 / num_batches_tracked.item<double>();
  }
  // running_mean/var are undefined when not tracking: then they are neither used nor updated
  auto normalize = relu ? functional::batch_norm_relu : functional::batch_norm;
  return normalize(input, running_mean, running_var, weight, bias, use_batch_stats, factor,
                   options.eps());
}

void BatchNorm2dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::BatchNorm2d(" << options.num_features() << ", eps=" << options.eps()
         << ", momentum=";
  if (options.momentum()) {
    stream << *options.momentum();
  } else {
    stream << "None";
  }
  stream << ", affine=" << detail::bool_str(options.affine())
         << ", track_running_stats=" << detail::bool_str(options.track_running_stats()) << ")";
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
