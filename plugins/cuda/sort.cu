// sort, topk, cummax and cummin along one dimension of a contiguous x (seen as [outer, n, inner])
// into contiguous values and int64 indices.
//
// sort and topk share one path: every line becomes P (n rounded up to a power of two) items, each
// an order-preserving key (kiln/sdk/sort_key.hpp, flipped for descending or largest) with the
// element's position, padded with items above every real one. Items of 32-bit keys pack as
// key << 32 | position in one uint64; 64-bit keys keep (key, position) pairs. Comparing the key
// then the position makes any sort stable, so a bitonic network sorts each line: in shared memory,
// one block per line, when a line fits (P <= 2048), otherwise one launch per network step over
// global memory. sort writes the whole line, topk its first k items.
#include "loops.cuh"

#include <kiln/sdk/sort_key.hpp>

#include <stdexcept>
#include <string>

namespace kiln::cuda {
namespace {

using sdk::Call;
using sdk::kernel;

template <class K>
struct Wide {
  K key;
  int64_t pos;
};

template <class K>
struct ItemOf {
  using type = Wide<K>;
};
template <>
struct ItemOf<uint32_t> {
  using type = uint64_t;
};

template <class Item>
__device__ __forceinline__ bool item_less(const Item& a, const Item& b) {
  if constexpr (std::is_same_v<Item, uint64_t>) {
    return a < b;
  } else {
    return a.key < b.key || (a.key == b.key && a.pos < b.pos);
  }
}

template <class Item>
__device__ __forceinline__ int64_t item_pos(const Item& a) {
  if constexpr (std::is_same_v<Item, uint64_t>) {
    return static_cast<int64_t>(a & 0xffffffffu);
  } else {
    return a.pos;
  }
}

template <class Item>
__device__ __forceinline__ Item item_pad() {
  if constexpr (std::is_same_v<Item, uint64_t>) {
    return ~uint64_t{0};
  } else {
    return Item{~decltype(Item::key){0}, INT64_MAX};
  }
}

struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  __host__ __device__ int64_t count() const { return outer * inner; }
};

__device__ __forceinline__ int64_t line_base(int64_t line, int64_t len, int64_t inner) {
  return line / inner * len * inner + line % inner;
}

// items[line * P + j]: the key of x's element j of the line (flipped when `flip`) and j; padding.
template <class T>
__global__ void make_items(Lines l, int64_t p, const T* x,
                           typename ItemOf<sdk::sort_key_t<acc_t<T>>>::type* items, bool flip) {
  using Item = typename ItemOf<sdk::sort_key_t<acc_t<T>>>::type;
  const int64_t total = l.count() * p;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t line = i / p, j = i % p;
    if (j >= l.n) {
      items[i] = item_pad<Item>();
      continue;
    }
    auto key = sdk::sort_key(to_acc(x[line_base(line, l.n, l.inner) + j * l.inner]));
    if (flip) key = ~key;
    if constexpr (std::is_same_v<Item, uint64_t>) {
      items[i] = uint64_t{key} << 32 | static_cast<uint64_t>(j);
    } else {
      items[i] = Item{key, j};
    }
  }
}

// One block sorts one line of p <= 2 * blockDim.x items in shared memory.
template <class Item>
__global__ void bitonic_shared(Item* items, int64_t p) {
  extern __shared__ unsigned char raw[];
  Item* s = reinterpret_cast<Item*>(raw);
  Item* line = items + int64_t(blockIdx.x) * p;
  for (int64_t i = threadIdx.x; i < p; i += blockDim.x) s[i] = line[i];
  __syncthreads();
  for (int64_t k = 2; k <= p; k <<= 1) {
    for (int64_t j = k >> 1; j > 0; j >>= 1) {
      for (int64_t t = threadIdx.x; t < p / 2; t += blockDim.x) {
        const int64_t a = 2 * j * (t / j) + t % j, b = a + j;
        const bool up = (a & k) == 0;
        if (item_less(s[b], s[a]) == up) {
          Item tmp = s[a];
          s[a] = s[b];
          s[b] = tmp;
        }
      }
      __syncthreads();
    }
  }
  for (int64_t i = threadIdx.x; i < p; i += blockDim.x) line[i] = s[i];
}

// One step (k, j) of the bitonic network over every line, in global memory.
template <class Item>
__global__ void bitonic_step(Item* items, int64_t lines, int64_t p, int64_t k, int64_t j) {
  const int64_t half_p = p / 2, total = lines * half_p;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t line = i / half_p, t = i % half_p;
    const int64_t a = 2 * j * (t / j) + t % j, b = a + j;
    Item* s = items + line * p;
    const bool up = (a & k) == 0;
    if (item_less(s[b], s[a]) == up) {
      Item tmp = s[a];
      s[a] = s[b];
      s[b] = tmp;
    }
  }
}

// The first `keep` items of each sorted line: values gathered from x, positions as indices.
template <class T, class Item>
__global__ void write_sorted(Lines l, int64_t p, int64_t keep, const T* x, const Item* items,
                             T* values, int64_t* indices) {
  const int64_t total = l.count() * keep;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t line = i / keep, t = i % keep;
    const int64_t pos = item_pos(items[line * p + t]);
    const int64_t out = line_base(line, keep, l.inner) + t * l.inner;
    values[out] = x[line_base(line, l.n, l.inner) + pos * l.inner];
    indices[out] = pos;
  }
}

Lines check_lines(const Call& call, const char* name, int64_t dim, int64_t out_n) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& values = call.output(0);
  const kiln_tensor& indices = call.output(1);
  if (values.dtype != x.dtype || indices.dtype != KILN_I64 || !sdk::is_contiguous(x) ||
      !sdk::is_contiguous(values) || !sdk::is_contiguous(indices) || dim < 0 || dim >= x.ndim) {
    throw std::invalid_argument(std::string(name) + ": expected contiguous x, values of its dtype "
                                                    "and int64 indices, and dim in range");
  }
  Lines l;
  for (int32_t d = 0; d < x.ndim; ++d) {
    if (values.sizes[d] != (d == dim ? out_n : x.sizes[d])) {
      throw std::invalid_argument(std::string(name) + ": wrong output size in dimension " +
                                  std::to_string(d));
    }
    (d < dim ? l.outer : d == dim ? l.n : l.inner) *= x.sizes[d];
  }
  if (l.n > static_cast<int64_t>(0xffffffffu)) {
    throw std::length_error(std::string(name) + ": lines of 2^32 elements or more along dim are "
                                                "not supported on cuda");
  }
  return l;
}

// Sorts every line (ascending, or descending when `flip`) and writes its first `keep` items.
void sort_lines(const Call& call, const Lines& l, int64_t keep, bool flip) {
  if (l.count() == 0 || keep == 0) return;
  cudaStream_t stream = stream_of(call);
  const kiln_tensor& x = call.input(0);
  int64_t p = 1;
  while (p < l.n) p <<= 1;
  visit_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Item = typename ItemOf<sdk::sort_key_t<acc_t<T>>>::type;
    int64_t count = 0;
    if (__builtin_mul_overflow(l.count(), p, &count)) {
      throw std::overflow_error("sort: the padded lines overflow int64");
    }
    DeviceBuffer buffer(x.device.index, static_cast<size_t>(count) * sizeof(Item));
    Item* items = static_cast<Item*>(buffer.get());
    make_items<T><<<blocks_for(count, 1), kThreads, 0, stream>>>(l, p,
                                                                 static_cast<const T*>(x.data),
                                                                 items, flip);
    KILN_CUDA_CHECK(cudaGetLastError());
    if (p <= 2048) {
      const int threads = static_cast<int>(std::min<int64_t>(std::max<int64_t>(p / 2, 1), 1024));
      for (int64_t first = 0; first < l.count(); first += 65535) {  // grid.x limit per launch
        const int64_t lines = std::min<int64_t>(l.count() - first, 65535);
        bitonic_shared<Item>
            <<<static_cast<unsigned>(lines), threads, p * sizeof(Item), stream>>>(items + first * p,
                                                                                  p);
        KILN_CUDA_CHECK(cudaGetLastError());
      }
    } else {
      for (int64_t k = 2; k <= p; k <<= 1) {
        for (int64_t j = k >> 1; j > 0; j >>= 1) {
          bitonic_step<Item><<<blocks_for(l.count() * p / 2, 1), kThreads, 0, stream>>>(items,
                                                                                        l.count(),
                                                                                        p, k, j);
          KILN_CUDA_CHECK(cudaGetLastError());
        }
      }
    }
    write_sorted<T, Item><<<blocks_for(l.count() * keep, 1), kThreads, 0, stream>>>(
        l, p, keep, static_cast<const T*>(x.data), items, static_cast<T*>(call.output(0).data),
        static_cast<int64_t*>(call.output(1).data));
    KILN_CUDA_CHECK(cudaGetLastError());
    // the buffer returns to the caching allocator; the stream orders its reuse
  });
}

void sort_kernel(const Call& call) {
  const int64_t dim = call.attr_i64(0);
  const bool descending = call.attr_bool(1);
  const Lines l = check_lines(call, "sort", dim, call.input(0).sizes[dim]);
  sort_lines(call, l, l.n, descending);
}

void topk_kernel(const Call& call) {
  const int64_t k = call.attr_i64(0);
  const int64_t dim = call.attr_i64(1);
  const bool largest = call.attr_bool(2);
  const Lines l = check_lines(call, "topk", dim, k);
  if (k < 0 || k > l.n) throw std::out_of_range("topk: k " + std::to_string(k) + " out of range");
  sort_lines(call, l, k, largest);
}

// One thread per line: the running extreme and the last position reaching it; NaN takes over.
template <class T, bool Max>
__global__ void cum_extreme(Lines l, const T* x, T* values, int64_t* indices) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t line = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; line < l.count();
       line += step) {
    const int64_t base = line_base(line, l.n, l.inner);
    auto best = to_acc(x[base]);
    int64_t at = 0;
    for (int64_t j = 0; j < l.n; ++j) {
      const auto v = to_acc(x[base + j * l.inner]);
      const bool takes = Max ? v >= best : v <= best;
      if (v != v || (best == best && takes)) {
        best = v;
        at = j;
      }
      values[base + j * l.inner] = x[base + at * l.inner];
      indices[base + j * l.inner] = at;
    }
  }
}

template <bool Max>
void cum_extreme_kernel(const Call& call) {
  const int64_t dim = call.attr_i64(0);
  const Lines l = check_lines(call, Max ? "cummax" : "cummin", dim, call.input(0).sizes[dim]);
  if (l.count() * l.n == 0) return;
  cudaStream_t stream = stream_of(call);
  visit_dtype(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cum_extreme<T, Max><<<blocks_for(l.count(), 1), kThreads, 0, stream>>>(
        l, static_cast<const T*>(call.input(0).data), static_cast<T*>(call.output(0).data),
        static_cast<int64_t*>(call.output(1).data));
  });
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_sort(KernelTable& table) {
  table.add("sort", kernel<sort_kernel>);
  table.add("topk", kernel<topk_kernel>);
  table.add("cummax", kernel<cum_extreme_kernel<true>>);
  table.add("cummin", kernel<cum_extreme_kernel<false>>);
}

}  // namespace kiln::cuda
