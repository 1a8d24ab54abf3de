// Dropout2d, Dropout3d, AlphaDropout and FeatureAlphaDropout: the modules over the functional
// forms of nn/functional/dropout.h (Dropout itself is in activation.cpp).
#include <kiln/nn/functional/dropout.h>
#include <kiln/nn/modules/dropout.h>

#include "repr.h"

namespace kiln::nn {
namespace {

void check_options(const char* name, const DropoutOptions& options) {
  KILN_CHECK_VALUE(options.p() >= 0.0 && options.p() <= 1.0, name, ": dropout probability has ",
                   "to be between 0 and 1, but got ", options.p());
}

void print(std::ostream& stream, const char* name, const DropoutOptions& options) {
  stream << "kiln::nn::" << name << "(p=" << options.p()
         << ", inplace=" << detail::bool_str(options.inplace()) << ")";
}

functional::DropoutFuncOptions func_options(const DropoutOptions& o, bool training) {
  return functional::DropoutFuncOptions().p(o.p()).training(training).inplace(o.inplace());
}

functional::AlphaDropoutFuncOptions alpha_options(const DropoutOptions& o, bool training) {
  return functional::AlphaDropoutFuncOptions().p(o.p()).training(training).inplace(o.inplace());
}

}  // namespace

Dropout2dImpl::Dropout2dImpl(const DropoutOptions& options) : options(options) {
  check_options("Dropout2d", options);
}

Tensor Dropout2dImpl::forward(Tensor input) {
  return functional::dropout2d(std::move(input), func_options(options, is_training()));
}

void Dropout2dImpl::pretty_print(std::ostream& stream) const {
  print(stream, "Dropout2d", options);
}

Dropout3dImpl::Dropout3dImpl(const DropoutOptions& options) : options(options) {
  check_options("Dropout3d", options);
}

Tensor Dropout3dImpl::forward(Tensor input) {
  return functional::dropout3d(std::move(input), func_options(options, is_training()));
}

void Dropout3dImpl::pretty_print(std::ostream& stream) const {
  print(stream, "Dropout3d", options);
}

AlphaDropoutImpl::AlphaDropoutImpl(const DropoutOptions& options) : options(options) {
  check_options("AlphaDropout", options);
}

Tensor AlphaDropoutImpl::forward(Tensor input) {
  return functional::alpha_dropout(std::move(input), alpha_options(options, is_training()));
}

void AlphaDropoutImpl::pretty_print(std::ostream& stream) const {
  print(stream, "AlphaDropout", options);
}

FeatureAlphaDropoutImpl::FeatureAlphaDropoutImpl(const DropoutOptions& options) : options(options) {
  check_options("FeatureAlphaDropout", options);
}

Tensor FeatureAlphaDropoutImpl::forward(Tensor input) {
  return functional::feature_alpha_dropout(std::move(input), alpha_options(options, is_training()));
}

void FeatureAlphaDropoutImpl::pretty_print(std::ostream& stream) const {
  print(stream, "FeatureAlphaDropout", options);
}

}  // namespace kiln::nn
