// Padding, as libtorch's F::pad(x, F::PadFuncOptions({1, 2}).mode(kiln::kReflect)) and ATen's
// kiln::constant_pad_nd (kiln/ops.h). Every form differentiates (twice too) on every device.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options/padding.h>
#include <kiln/tensor.h>

namespace kiln::nn::functional {

// input padded by options.pad(): (before, after) pairs from the last dimension backwards. kConstant
// pads with options.value() any number of dimensions of any rank (negative sizes crop);
// kReflect (the input mirrored without its edge; sizes below the dimension's), kReplicate (its
// edge repeated) and kCircular (wrapped around; sizes at most the dimension's, batched input
// only) pad the last 1, 2 or 3 dimensions of [C, ...] or [N, C, ...], as PyTorch 1.13.
KILN_API Tensor pad(const Tensor& input, const PadFuncOptions& options);

}  // namespace kiln::nn::functional
