// Linear, Bilinear, Flatten, Unflatten.
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

BilinearImpl::BilinearImpl(const BilinearOptions& options) : options(options) {
  KILN_CHECK_VALUE(options.in1_features() >= 0 && options.in2_features() >= 0 &&
                       options.out_features() >= 0,
                   "Bilinear: in1_features, in2_features and out_features must be non-negative ",
                   "(got ", options.in1_features(), ", ", options.in2_features(), " and ",
                   options.out_features(), ")");
  weight = register_parameter("weight", empty({options.out_features(), options.in1_features(),
                                               options.in2_features()}));
  bias = register_parameter("bias", options.bias() ? empty({options.out_features()}) : Tensor(),
                            options.bias());
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  int64_t fan_in = options.in1_features();
  double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::bilinear(input1, input2, weight, bias);
}

void BilinearImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Bilinear(in1_features=" << options.in1_features()
         << ", in2_features=" << options.in2_features()
         << ", out_features=" << options.out_features()
         << ", bias=" << detail::bool_str(options.bias()) << ")";
}

UnflattenImpl::UnflattenImpl(UnflattenOptions options_) : options(std::move(options_)) {}

Tensor UnflattenImpl::forward(const Tensor& input) {
  if (!options.dimname().empty()) {
    throw NotImplementedError(kiln::detail::str(
        "Unflatten: the named form (dim=\"", options.dimname(),
        "\") needs named tensors, which kiln does not have; give the dimension's index and sizes"));
  }
  int64_t dim = options.dim() < 0 ? options.dim() + input.dim() : options.dim();
  KILN_CHECK_INDEX(dim >= 0 && dim < input.dim(), "Unflatten: dimension ", options.dim(),
                   " is out of range for input of size ", input.sizes());
  const std::vector<int64_t>& parts = options.sizes();
  KILN_CHECK_VALUE(!parts.empty(), "Unflatten: unflattened_size must be non-empty");
  std::vector<int64_t> sizes(input.sizes().begin(), input.sizes().begin() + dim);
  sizes.insert(sizes.end(), parts.begin(), parts.end());
  sizes.insert(sizes.end(), input.sizes().begin() + dim + 1, input.sizes().end());
  return input.view(sizes);
}

void UnflattenImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Unflatten(dim=";
  if (options.dimname().empty()) {
    stream << options.dim() << ", unflattened_size={";
    for (size_t i = 0; i < options.sizes().size(); ++i) {
      stream << (i ? ", " : "") << options.sizes()[i];
    }
  } else {
    stream << '"' << options.dimname() << "\", unflattened_size={";
    for (size_t i = 0; i < options.namedshape().size(); ++i) {
      const auto& [name, size] = options.namedshape()[i];
      stream << (i ? ", " : "") << "{\"" << name << "\", " << size << "}";
    }
  }
  stream << "})";
}

}  // namespace kiln::nn
