// Linear, Flatten.
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/linear.h>

#include "repr.h"

#include <cmath>

namespace kiln::nn {

LinearImpl::LinearImpl(const LinearOptions& options) : options(options) {
  KILN_CHECK_VALUE(options.in_features() >= 0 && options.out_features() >= 0,
                   "Linear: ", "in_features and out_features must be non-negative (got ",
                   options.in_features(), " and ", options.out_features(), ")");
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  bias = register_parameter("bias", options.bias() ? empty({options.out_features()}) : Tensor(),
                            options.bias());
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = options.in_features();
    double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Linear(in_features=" << options.in_features()
         << ", out_features=" << options.out_features()
         << ", bias=" << detail::bool_str(options.bias()) << ")";
}

void IdentityImpl::pretty_print(std::ostream& stream) const { stream << "kiln::nn::Identity()"; }

FlattenImpl::FlattenImpl(const FlattenOptions& options) : options(options) {}

Tensor FlattenImpl::forward(const Tensor& input) {
  return input.flatten(options.start_dim(), options.end_dim());
}

void FlattenImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Flatten(start_dim=" << options.start_dim()
         << ", end_dim=" << options.end_dim() << ")";
}

}  // namespace kiln::nn
