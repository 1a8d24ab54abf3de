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

// What oneDNN's matmul adds in the same pass over out.
struct MatmulEpilogue {
  const void* row_bias = nullptr;  // out[t][i][j] += row_bias[i] (m values of bias_dtype)
  int32_t bias_dtype = 0;
  bool accumulate = false;  // out += a @ b (instead of out = a @ b)
};

// out = a @ b on oneDNN's optimized kernels (never its reference loops): a and b of dtype
// `dtype` (float32, bfloat16, float16), out of `out_dtype` (the same, or float32). False when
// oneDNN has no such kernel for these dtypes and strides on this CPU. `batched`: 3-D descriptors
// (the batch strides of s are used). Primitives are cached; only call from one thread at a time
// per operand set, never from inside a TBB task.
bool onednn_matmul(MatmulShape s, int32_t dtype, int32_t out_dtype, bool batched, const void* a,
                   const void* b, void* out, const MatmulEpilogue& epilogue = {});

// The product with plain loops, accumulating in float (16-bit floats, float32), double or
// wrapping int64; parallel over tiles of out with TBB.
void gemm_loop(const MatmulShape& s, int32_t dtype, const void* a, const void* b, void* out);

}  // namespace kiln::cpu
