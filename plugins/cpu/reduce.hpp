// Shared by the reduction kernels (reduce.cpp, reduce_arg.cpp): the reduction's dimensions in a
// simplified form, and an odometer that walks some of them.
//
// Note [Reduction layouts]
// make_plan() drops size-1 dimensions, orders the rest by the input's stride (outermost first)
// and merges neighbours that are contiguous with each other, so most reductions end up in one of
// two layouts, each with a fast loop:
//   - inner: the input's innermost dimension is reduced (sum(x, -1), or a full reduction). Each
//     output reduces contiguous runs with several vector accumulators; parallel over outputs, or
//     over fixed slices of the reduction when there are few outputs.
//   - outer: the innermost dimension is kept (sum(x, 0) on a matrix). Rows of the input are
//     accumulated into a vector of outputs, a block of columns at a time; parallel over blocks.
// Parallel splits depend on the sizes only, never on the thread count, so a result is the same
// on every run.
#pragma once

#include "loops.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace kiln::cpu {

constexpr int kMaxDims = 16;

struct ReducePlan {
  // kept dimensions (the output's), outermost first; strides in bytes
  int nkept = 0;
  int64_t kept_size[kMaxDims], kept_x[kMaxDims], kept_out[kMaxDims];
  // reduced dimensions, outermost first; strides in bytes
  int nred = 0;
  int64_t red_size[kMaxDims], red_x[kMaxDims];
  int64_t outputs = 1;        // product of kept sizes
  int64_t reduced = 1;        // product of reduced sizes
  bool inner_reduced = true;  // the input's innermost dimension is reduced
  int empty_dim = -1;         // a reduced dimension of size 0, if any
};

// reduced[d] != 0 for the dimensions being reduced. x and out have the same rank; out has size 1
// along the reduced dimensions.
ReducePlan make_plan(const kiln_tensor& x, const kiln_tensor& out, const bool* reduced);

// Reads the `dims` attribute into a mask over x's dimensions.
void reduced_mask(const Call& call, int32_t attr, const kiln_tensor& x, bool* mask);

// Walks the positions of up to kMaxDims dimensions in row-major order, keeping the byte offsets
// of K operands (one stride array each).
template <int K>
struct Odometer {
  int n;
  const int64_t* size;
  std::array<const int64_t*, K> stride;
  int64_t index[kMaxDims] = {};
  int64_t off[K] = {};

  Odometer(int n_, const int64_t* size_, std::array<const int64_t*, K> stride_)
      : n(n_), size(size_), stride(stride_) {}

  void seek(int64_t linear) {
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int d = n - 1; d >= 0; --d) {
      index[d] = linear % size[d];
      linear /= size[d];
      for (int k = 0; k < K; ++k) off[k] += index[d] * stride[k][d];
    }
  }

  void next() {
    for (int d = n - 1; d >= 0; --d) {
      for (int k = 0; k < K; ++k) off[k] += stride[k][d];
      if (++index[d] < size[d]) return;
      for (int k = 0; k < K; ++k) off[k] -= size[d] * stride[k][d];
      index[d] = 0;
    }
  }
};

}  // namespace kiln::cpu
