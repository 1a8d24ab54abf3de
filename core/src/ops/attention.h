// Fused attention: the optional primitives flash_attention and flash_attention_backward
// (docs/primitives.md) that nn::functional::scaled_dot_product_attention uses where the device
// has them. See Note [Fused attention] (attention.cpp).
#pragma once

#include <kiln/tensor.h>

namespace kiln::detail {

// softmax(q @ k^T * scale + mask, causal) @ v on the fused kernels, or an undefined tensor where
// they cannot run it (the caller then runs the composite): q [..., L, E], k [..., S, E],
// v [..., S, Ev] with equal batch dimensions, float32 or bfloat16 alike on a device with both
// kernels; mask undefined or an additive float mask broadcastable to [..., L, S] that requires no
// gradient. Differentiable in q, k and v.
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                       double scale, bool causal);

}  // namespace kiln::detail
