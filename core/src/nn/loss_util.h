// Helpers of the functional losses (functional_loss*.cpp, functional_distance.cpp, ...): the
// reduction, the checks every loss makes, and the stable pieces several losses share. Internal to
// libkiln_core.
#pragma once

#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>

namespace kiln::nn::functional::detail {

// loss kept (None), averaged (Mean) or summed (Sum).
inline Tensor reduce(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum(loss);
    case Reduction::Mean: return mean(loss);
  }
  return loss;
}

inline void check_same_size(const char* op, const Tensor& input, const Tensor& target) {
  KILN_CHECK_VALUE(input.sizes().equals(target.sizes()), op, ": using a target size (",
                   target.sizes(), ") that is different to the input size (", input.sizes(),
                   ") is not supported; please ensure they have the same size");
}

inline void check_floating(const char* op, const Tensor& input) {
  KILN_CHECK_TYPE(input.is_floating_point(), op, ": expected a floating point input, but got ",
                  dtype_name(input.dtype()));
}

// log(1 + exp(x)) as m + log(exp(-m) + exp(x - m)) with m = max(x, 0): no positive exponent, so
// finite for every finite x (and exactly x + log(1 + exp(-x)) for large x).
inline Tensor log1p_exp(const Tensor& x) {
  Tensor m = clamp_min(x, 0);
  return m + log(exp(-m) + exp(x - m));
}

// t's values below `min` raised to it, while the gradient passes to t unchanged, as PyTorch's
// `with torch.no_grad(): t.clamp_(min=...)` on a tensor it differentiates through.
inline Tensor clamp_min_keep_grad(const Tensor& t, double min) {
  return where(lt(t, min), t - t.detach() + min, t);
}

}  // namespace kiln::nn::functional::detail
