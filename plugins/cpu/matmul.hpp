// What matmul.cpp (oneDNN) and gemm.cpp (plain loops) share: one matrix product, batched.
#pragma once

#include "loops.hpp"

namespace kiln::cpu {

// out[t] = a[t] @ b[t] for t < batch: a [m,k], b [k,n], out [m,n]. Strides in elements as
// {batch, row, column}; a batch stride of 0 repeats one matrix.
struct MatmulShape {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  int64_t sa[3] = {}, sb[3] = {}, sc[3] = {};
};

// The product with plain loops, accumulating in float (16-bit floats, float32), double or
// wrapping int64; parallel over tiles of out with TBB.
void gemm_loop(const MatmulShape& s, int32_t dtype, const void* a, const void* b, void* out);

}  // namespace kiln::cpu
