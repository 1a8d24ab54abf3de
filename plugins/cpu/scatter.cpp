// index_add and scatter_add: out (which holds a copy of self) += source at indices. Work is split
// so that each task owns a disjoint part of out and walks the indices in order, so the sums are
// deterministic and need no atomics. 16-bit floats add in float and round on every store.
#include "loops.hpp"
#include "registry.hpp"

#include <stdexcept>
#include <string>

namespace kiln::cpu {
namespace {

using sdk::kernel;

[[noreturn]] void throw_out_of_bounds(int64_t index, int64_t dim, int64_t size) {
  throw std::out_of_range("index " + std::to_string(index) + " is out of bounds for dimension " +
                          std::to_string(dim) + " with size " + std::to_string(size));
}

void check_index_dtype(const kiln_tensor& index) {
  if (index.dtype != KILN_I64) {
    throw sdk::type_error(std::string("index must be int64, not ") + sdk::dtype_name(index.dtype));
  }
}

// out viewed as [outer, size, inner] and source as [outer, n, inner] (both contiguous):
// out[a, index[i], b] += source[a, i, b].
template <class T>
void index_add_loop(const kiln_tensor& out, const kiln_tensor& index, const kiln_tensor& src,
                    int64_t dim) {
  using C = compute_t<T>;
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < out.ndim; ++d) {
    if (d < dim) outer *= out.sizes[d];
    if (d > dim) inner *= out.sizes[d];
  }
  const int64_t size = out.sizes[dim], n = index.sizes[0], istride = index.strides[0];
  const int64_t* idx = static_cast<const int64_t*>(index.data);
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i * istride] < 0 || idx[i * istride] >= size) {
      throw_out_of_bounds(idx[i * istride], dim, size);
    }
  }
  T* o = static_cast<T*>(out.data);
  const T* s = static_cast<const T*>(src.data);
  // tasks: one per (outer, block of inner) so that each owns a disjoint part of out
  const int64_t block = std::max<int64_t>(1, std::min<int64_t>(inner, 4096));
  const int64_t blocks = (inner + block - 1) / block;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, n * block));
  parallel_for(outer * blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t a = task / blocks, j0 = task % blocks * block;
      const int64_t len = std::min(block, inner - j0);
      for (int64_t i = 0; i < n; ++i) {
        T* dst = o + (a * size + idx[i * istride]) * inner + j0;
        const T* from = s + (a * n + i) * inner + j0;
        for (int64_t j = 0; j < len; ++j) {
          dst[j] = static_cast<T>(static_cast<C>(dst[j]) + static_cast<C>(from[j]));
        }
      }
    }
  });
}

// index_add(self, dim, index, source): inputs index (1-D), source; out holds self.
void index_add_kernel(const Call& call) {
  const kiln_tensor& index = call.input(0);
  const kiln_tensor& src = call.input(1);
  const kiln_tensor& out = call.output(0);
  const int64_t dim = call.attr_i64(0);
  check_index_dtype(index);
  if (index.ndim != 1 || dim < 0 || dim >= out.ndim || src.ndim != out.ndim ||
      !sdk::is_contiguous(out) || !sdk::is_contiguous(src) || src.dtype != out.dtype) {
    throw std::invalid_argument("index_add: expected a 1-D index and contiguous source and out "
                                "of the same rank and dtype");
  }
  visit<Dtypes::numeric>(out.dtype, [&](auto tag) {
    index_add_loop<typename decltype(tag)::type>(out, index, src, dim);
  });
}

// out[..., index[p], ...] += src[p] along dim for every position p of index (src has index's
// sizes). Tasks own lines: positions that differ only along dim.
template <class T>
void scatter_add_loop(const kiln_tensor& out, const kiln_tensor& index, const kiln_tensor& src,
                      int64_t dim) {
  using C = compute_t<T>;
  const int32_t rank = index.ndim;
  const int64_t n = index.sizes[dim], size = out.sizes[dim];
  int64_t lines = 1;
  for (int32_t d = 0; d < rank; ++d) lines *= d == dim ? 1 : index.sizes[d];
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, n));
  parallel_for(lines, grain, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      int64_t rest = line, oi = 0, os = 0, oo = 0;  // element offsets of index, src, out
      for (int32_t d = rank - 1; d >= 0; --d) {
        if (d == dim) continue;
        const int64_t c = rest % index.sizes[d];
        rest /= index.sizes[d];
        oi += c * index.strides[d];
        os += c * src.strides[d];
        oo += c * out.strides[d];
      }
      const int64_t* idx = static_cast<const int64_t*>(index.data) + oi;
      const T* s = static_cast<const T*>(src.data) + os;
      T* o = static_cast<T*>(out.data) + oo;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t i = idx[k * index.strides[dim]];
        if (i < 0 || i >= size) throw_out_of_bounds(i, dim, size);
        T& dst = o[i * out.strides[dim]];
        dst = static_cast<T>(static_cast<C>(dst) + static_cast<C>(s[k * src.strides[dim]]));
      }
    }
  });
}

// scatter_add(self, dim, index, src): inputs index, src (index's sizes); out holds self.
void scatter_add_kernel(const Call& call) {
  const kiln_tensor& index = call.input(0);
  const kiln_tensor& src = call.input(1);
  const kiln_tensor& out = call.output(0);
  const int64_t dim = call.attr_i64(0);
  check_index_dtype(index);
  if (index.ndim != out.ndim || src.ndim != out.ndim || dim < 0 || dim >= out.ndim ||
      src.dtype != out.dtype) {
    throw std::invalid_argument("scatter_add: expected index, src and out of the same rank and "
                                "src and out of the same dtype");
  }
  for (int32_t d = 0; d < out.ndim; ++d) {
    if (src.sizes[d] != index.sizes[d] || (d != dim && index.sizes[d] > out.sizes[d])) {
      throw std::invalid_argument("scatter_add: index size " + std::to_string(index.sizes[d]) +
                                  " does not fit dimension " + std::to_string(d));
    }
  }
  visit<Dtypes::numeric>(out.dtype, [&](auto tag) {
    scatter_add_loop<typename decltype(tag)::type>(out, index, src, dim);
  });
}

}  // namespace

void register_scatter(KernelTable& table) {
  table.add("index_add", kernel<index_add_kernel>);
  table.add("scatter_add", kernel<scatter_add_kernel>);
}

}  // namespace kiln::cpu
