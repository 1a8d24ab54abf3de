// The dropout family: dropout with options, channel dropout (dropout1d/2d/3d) and alpha dropout,
// after ATen's Dropout.cpp (the same masks, scales and affine correction).
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/dropout.h>

#include <cmath>

namespace kiln::nn::functional {
namespace {

void check_p(const char* op, double p) {
  KILN_CHECK_VALUE(p >= 0.0 && p <= 1.0, op, ": dropout probability has to be between 0 and 1, ",
                   "but got ", p);
}

// out written into input when inplace (the input returned), else out.
Tensor finish(Tensor& input, const Tensor& out, bool inplace) {
  if (!inplace || out.is_same(input)) return out;
  return input.copy_(out);
}

// The keep mask of ATen's _dropout_impl: 1 with probability 1 - p, of input's shape or, for
// feature dropout, of [N, C, 1, ...] (one draw per channel).
Tensor keep_mask(const char* op, const Tensor& input, double p, bool feature) {
  TensorOptions options = TensorOptions().dtype(input.dtype()).device(input.device());
  if (!feature) return lt(rand(input.sizes(), options), 1.0 - p).to(input.dtype());
  KILN_CHECK_VALUE(input.dim() >= 2, op, ": feature dropout requires at least 2 dimensions in ",
                   "the input, but got input of size ", input.sizes());
  DimVector sizes(static_cast<size_t>(input.dim()), 1);
  sizes[0] = input.size(0);
  sizes[1] = input.size(1);
  return lt(rand(sizes, options), 1.0 - p).to(input.dtype());
}

// ATen's _dropout_impl<feature, alpha>.
Tensor dropout_impl(const char* op, Tensor input, double p, bool training, bool inplace,
                    bool feature, bool alpha) {
  check_p(op, p);
  if (p == 0.0 || !training || input.numel() == 0) return input;
  KILN_CHECK_TYPE(input.is_floating_point(), op, ": expected a floating point input, but got ",
                  dtype_name(input.dtype()));
  if (p == 1.0) return finish(input, input * zeros_like(input), inplace);
  Tensor noise = keep_mask(op, input, p, feature);
  if (!alpha) return finish(input, input * (noise * (1.0 / (1.0 - p))), inplace);
  // SELU's negative saturation, -scale * alpha, as ATen writes it
  constexpr double kAlpha = 1.7580993408473766;
  double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1.0) * (1.0 - p));
  Tensor b = (noise - 1.0) * (kAlpha * a) + kAlpha * a * p;
  return finish(input, input * (noise * a) + b, inplace);
}

// Channel dropout of an input of `spatial` spatial dims, batched or not (libtorch's
// _dropout_nd_helper).
Tensor dropout_nd(const char* op, int64_t spatial, Tensor input, const DropoutFuncOptions& o) {
  check_p(op, o.p());
  int64_t dim = input.dim();
  KILN_CHECK_VALUE(dim == spatial + 1 || dim == spatial + 2, op, ": expected ", spatial + 1,
                   "-D or ", spatial + 2, "-D input (unbatched or batched), but got input of size ",
                   input.sizes());
  bool batched = dim == spatial + 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor out = dropout_impl(op, x, o.p(), o.training(), false, true, false);
  if (!batched) out = out.squeeze(0);
  return finish(input, out, o.inplace());
}

}  // namespace

Tensor dropout(Tensor input, const DropoutFuncOptions& options) {
  return detail::dropout(std::move(input), options.p(), options.training(), options.inplace());
}

Tensor dropout1d(Tensor input, const Dropout1dFuncOptions& options) {
  return dropout_nd("dropout1d", 1, std::move(input), options);
}

Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& options) {
  return dropout_nd("dropout2d", 2, std::move(input), options);
}

Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& options) {
  return dropout_nd("dropout3d", 3, std::move(input), options);
}

Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& options) {
  return detail::alpha_dropout(std::move(input), options.p(), options.training(),
                               options.inplace());
}

Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& options) {
  return detail::feature_alpha_dropout(std::move(input), options.p(), options.training(),
                                       options.inplace());
}

namespace detail {

Tensor dropout(Tensor input, double p, bool training, bool inplace) {
  return dropout_impl("dropout", std::move(input), p, training, inplace, false, false);
}

Tensor alpha_dropout(Tensor input, double p, bool training, bool inplace) {
  return dropout_impl("alpha_dropout", std::move(input), p, training, inplace, false, true);
}

Tensor feature_alpha_dropout(Tensor input, double p, bool training, bool inplace) {
  return dropout_impl("feature_alpha_dropout", std::move(input), p, training, inplace, true, true);
}

}  // namespace detail
}  // namespace kiln::nn::functional
