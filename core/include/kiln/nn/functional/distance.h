// Distances within one batch of vectors, as torch::nn::functional::pdist (a composite operator,
// float32 under autocast on CUDA as PyTorch's list has it).
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

namespace kiln::nn::functional {

// The p-norm distances between the rows of input [N, M], pairs (i, j) with i < j in row-major
// order: [N * (N - 1) / 2]. p >= 0 (0 counts differing elements, inf the largest difference).
KILN_API Tensor pdist(const Tensor& input, double p = 2.0);

}  // namespace kiln::nn::functional

namespace kiln {
KILN_API Tensor pdist(const Tensor& input, double p = 2.0);
}  // namespace kiln
