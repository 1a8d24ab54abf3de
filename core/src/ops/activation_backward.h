// Note [Fused activation gradients]: elu's and hardswish's gradients are several elementwise
// operators each (a comparison, an exp, products, a select), each a pass over memory and, in
// bfloat16, a rounding. elu_backward and hardswish_backward are optional primitives that do each
// in one pass (16-bit floats computed in float32 and rounded once, as PyTorch's kernels), used
// where the device has them and no graph of the gradient is being built, as gelu_backward (Note
// [Fused gelu backward]); under create_graph the formulas stay differentiable composites.
#pragma once

#include <kiln/tensor.h>

namespace kiln::detail {

// PyTorch's elu_backward on the input, or undefined where the fused primitive does not run.
Tensor fused_elu_backward(const Tensor& grad, const Tensor& self, double alpha, double scale,
                          double input_scale);
// PyTorch's hardswish_backward, or undefined where the fused primitive does not run.
Tensor fused_hardswish_backward(const Tensor& grad, const Tensor& self);

}  // namespace kiln::detail
