// The dropout family with libtorch's options (torch/nn/functional/dropout.h):
// F::dropout(x, F::DropoutFuncOptions().p(0.2)), F::dropout2d/3d (whole channels),
// F::alpha_dropout and F::feature_alpha_dropout (SELU's self-normalising dropout). Composites of
// rand_like and arithmetic on the default generator, so they run on every device and autograd
// differentiates them; with inplace the result is written into the input and the input returned.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options.h>
#include <kiln/tensor.h>

namespace kiln::nn::functional {

struct DropoutFuncOptions {
  KILN_ARG(double, p) = 0.5;
  KILN_ARG(bool, training) = true;
  KILN_ARG(bool, inplace) = false;
};
using Dropout1dFuncOptions = DropoutFuncOptions;
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;

// alpha dropout is off unless training is asked for, as libtorch's.
struct AlphaDropoutFuncOptions {
  KILN_ARG(double, p) = 0.5;
  KILN_ARG(bool, training) = false;
  KILN_ARG(bool, inplace) = false;
};
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;

// dropout(input, p, training), in place when asked.
KILN_API Tensor dropout(Tensor input, const DropoutFuncOptions& options);
// Zeroes whole channels: each [N, C] slice of input [N, C, L] (1d), [N, C, H, W] (2d) or
// [N, C, D, H, W] (3d) with probability p, scaling the others by 1 / (1 - p); an input without
// the batch dimension ([C, L], [C, H, W], [C, D, H, W]) is one batch.
KILN_API Tensor dropout1d(Tensor input, const Dropout1dFuncOptions& options = {});
KILN_API Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& options = {});
KILN_API Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& options = {});
// Alpha dropout (Klambauer et al., "Self-Normalizing Neural Networks"): each element is set to
// SELU's negative saturation with probability p, then an affine map restores the input's mean
// and variance. The feature form drops whole channels ([N, C] slices; input of 2 or more dims).
KILN_API Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& options = {});
KILN_API Tensor feature_alpha_dropout(Tensor input,
                                      const FeatureAlphaDropoutFuncOptions& options = {});

namespace detail {
// The positional forms libtorch's detail namespace has.
KILN_API Tensor dropout(Tensor input, double p, bool training, bool inplace);
KILN_API Tensor alpha_dropout(Tensor input, double p, bool training, bool inplace);
KILN_API Tensor feature_alpha_dropout(Tensor input, double p, bool training, bool inplace);
}  // namespace detail

}  // namespace kiln::nn::functional
