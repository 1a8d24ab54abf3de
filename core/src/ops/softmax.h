// Fused softmax: the optional primitives softmax_lastdim and softmax_lastdim_backward
// (docs/primitives.md) that nn::functional::softmax and log_softmax use over the last dimension
// where the device has them. See Note [Fused softmax] (softmax.cpp).
#pragma once

#include <kiln/tensor.h>

namespace kiln::detail {

// softmax of x over its last dimension (log_softmax when `log`) on the fused kernels, or an
// undefined tensor where the device has not both of them (the caller then runs the composite).
// x is floating with at least one dimension and one element. Differentiable.
Tensor fused_softmax(const Tensor& x, bool log);

}  // namespace kiln::detail
