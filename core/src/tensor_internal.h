// Helpers for core's own code: making tensors from storages, dimension wrapping, contiguous
// strides, and reading tensor values on the host.
#pragma once

#include <kiln/tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace kiln::detail {

// A tensor viewing `storage`.
Tensor make_tensor(std::shared_ptr<Storage> storage, IntArrayRef sizes, IntArrayRef strides,
                   int64_t offset, ScalarType dtype);
// A new view of t's storage with other geometry (keeps dtype, device).
Tensor make_view(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
// An uninitialised contiguous tensor.
Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device);

// Note [Checked sizes]: every tensor kiln makes has non-negative sizes whose product, with each
// 0 counted as 1, times the element size fits int64. Its element count, byte count, contiguous
// strides and the byte strides plugins compute then never overflow, even for a tensor with no
// elements ([0, 2^62, 2^62] is refused: its contiguous strides would not fit).

// The element count of a tensor of `sizes` and `dtype`, after checking the note's invariant;
// ValueError "<op>: ..." naming the sizes and the dtype otherwise.
int64_t checked_numel(const char* op, IntArrayRef sizes, ScalarType dtype);

DimVector contiguous_strides(IntArrayRef sizes);
// The product of sizes (sizes that satisfy Note [Checked sizes]).
int64_t product(IntArrayRef sizes);

// dim in [-ndim, ndim) -> [0, ndim); IndexError naming the operator otherwise. A 0-dim tensor
// accepts dims -1 and 0 as PyTorch does.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// t's elements in row-major order, copied to the host in t's dtype.
std::vector<unsigned char> host_bytes(const Tensor& t);
// Element i of a host buffer of dtype as double / int64.
double host_double(const unsigned char* data, ScalarType dtype, int64_t i);
int64_t host_long(const unsigned char* data, ScalarType dtype, int64_t i);

// "float32[2, 3] on cpu" for messages.
std::string describe_tensor(const Tensor& t);

}  // namespace kiln::detail
