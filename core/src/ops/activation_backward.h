// Note [Fused activation gradients]: elu's and hardswish's gradients are several elementwise
// operators each (a comparison, an exp, products, a select), each a pass over memory and, in
// bfloat16, a rounding. elu_backward, hardswish_backward and threshold_backward (relu's and
// threshold's gradient, a comparison and a product otherwise) are optional primitives that do each
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
// PyTorch's threshold_backward: 0 where self <= threshold, grad elsewhere (a NaN self too); the
// fused primitive where it runs, else a differentiable composite.
Tensor threshold_backward(const Tensor& grad, const Tensor& self, double threshold);

}  // namespace kiln::detail
