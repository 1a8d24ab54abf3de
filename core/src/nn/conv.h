// What the convolution modules (nn/conv.cpp) share with the functions (nn/functional_conv.cpp).
#pragma once

#include <kiln/nn/options/conv.h>

namespace kiln::nn::detail {

// input [N, C, d...] or [C, d...] with its `before.size()` spatial dimensions d padded by
// before[d] and after[d] with `mode`; `op` names the caller in errors.
Tensor pad_with_mode(const char* op, const Tensor& input, IntArrayRef before, IntArrayRef after,
                     const PaddingMode& mode);

}  // namespace kiln::nn::detail
