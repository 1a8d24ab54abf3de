// Fused batch normalization in training mode: two optional primitives (docs/primitives.md,
// "Optional primitives") that nn::functional::batch_norm uses where the input's device has a
// kernel for them, and composes from other primitives where it has not.
#pragma once

#include <kiln/tensor.h>

#include <tuple>

namespace kiln::detail {

// Whether batch_norm_train can run for this input, weight and bias: the device has kernels for
// both primitives, the input is floating [N, C, ...] with more than one value per channel, and
// weight and bias (either may be undefined) are [C] tensors on its device.
bool fused_batch_norm_available(const Tensor& input, const Tensor& weight, const Tensor& bias);

// (out, mean, var) over the batch's statistics per channel (dimension 1): out =
// relu?((input - mean) / sqrt(var + eps) * weight + bias), var biased. mean and var are float32
// (float64 for a float64 input) and carry no gradient; out is differentiable in input, weight
// and bias (backward runs batch_norm_backward, or differentiable operators under create_graph).
std::tuple<Tensor, Tensor, Tensor> batch_norm_train(const Tensor& input, const Tensor& weight,
                                                    const Tensor& bias, double eps, bool relu);

// Whether channel_affine can run for this input: the device has a kernel for it, and the input
// is floating [N, C, ...].
bool channel_affine_available(const Tensor& input);

// relu?(input * scale + shift) with scale and shift [C] per channel (dimension 1), in one pass:
// batch normalization with running statistics. No gradient: the caller uses it only where none
// is recorded (evaluation under NoGradGuard, or inputs that need none).
Tensor channel_affine(const Tensor& input, const Tensor& scale, const Tensor& shift, bool relu);

}  // namespace kiln::detail
