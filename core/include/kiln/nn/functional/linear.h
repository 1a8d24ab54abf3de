// Bilinear maps, as torch::nn::functional::bilinear (a composite operator: under autocast on
// CUDA its inputs are promoted to the widest dtype, as PyTorch's list has it).
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

namespace kiln::nn::functional {

// out[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]: input1
// [..., in1], input2 [..., in2] (the same leading dims), weight [out, in1, in2], bias [out]
// (optional) -> [..., out].
KILN_API Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                         const Tensor& bias = {});

}  // namespace kiln::nn::functional

namespace kiln {
// ATen's form, as torch::bilinear.
KILN_API Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                         const Tensor& bias = {});
}  // namespace kiln
