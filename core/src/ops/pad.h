// The padding composites behind kiln::constant_pad_nd and nn::functional::pad (ops/pad.cpp),
// shared with the convolutions' padding modes (nn/functional_conv.cpp).
#pragma once

#include <kiln/array_ref.h>
#include <kiln/tensor.h>

namespace kiln::detail {

// How a non-constant padding fills: the input mirrored without its edge (reflect), its edge
// repeated (replicate), or the input wrapped around (circular).
enum class PadFill { kReflect, kReplicate, kCircular };

// input with its last before.size() dimensions padded by before[d] and after[d] elements taken
// from the input by `fill` (negative sizes crop): one index_select per padded dimension, so its
// gradient is index_add. `op` names the caller in errors.
Tensor pad_by_index(const char* op, const Tensor& input, IntArrayRef before, IntArrayRef after,
                    PadFill fill);

}  // namespace kiln::detail
