// cumsum and cumprod: inclusive scans along `dim` of a contiguous x into a contiguous out of the
// same dtype, x seen as [outer, length, inner]. Running values are those of the CPU plugin
// (double for float32 and float64, float for the 16-bit floats, wrapping 64-bit integers).
// With inner > 1, one thread scans one column (neighbouring threads read neighbouring columns);
// with inner == 1, one block scans one line, a tile of kThreads elements at a time (a shared-memory
// Hillis-Steele scan of the tile, plus the carry of the tiles before it).
#include "loops.cuh"

#include <stdexcept>
#include <string>

namespace kiln::cuda {
namespace {

using sdk::Call;
using sdk::kernel;

template <class T>
using run_t = std::conditional_t<is_float_v<T>, std::conditional_t<(sizeof(T) >= 4), double, float>,
                                 uint64_t>;

template <class T>
__device__ __forceinline__ run_t<T> load(T v) {
  if constexpr (is_float_v<T>) {
    return static_cast<run_t<T>>(to_acc(v));
  } else {
    return static_cast<run_t<T>>(static_cast<int64_t>(v));  // sign-extend, then wrap
  }
}

template <class T>
__device__ __forceinline__ T store(run_t<T> r) {
  if constexpr (is_float_v<T>) {
    return from_acc<T>(static_cast<acc_t<T>>(r));
  } else if constexpr (std::is_same_v<T, bool>) {
    return r != 0;
  } else {
    return static_cast<T>(static_cast<int64_t>(r));
  }
}

template <bool Product, class R>
__device__ __forceinline__ R combine(R a, R b) {
  return Product ? R(a * b) : R(a + b);
}

template <class T, bool Product>
__global__ void scan_columns(int64_t outer, int64_t length, int64_t inner, const T* x, T* out) {
  using R = run_t<T>;
  const int64_t columns = outer * inner;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < columns; c += step) {
    const int64_t base = c / inner * length * inner + c % inner;
    R run = R(Product ? 1 : 0);
    for (int64_t i = 0; i < length; ++i) {
      run = combine<Product>(run, load(x[base + i * inner]));
      out[base + i * inner] = store<T>(run);
    }
  }
}

template <class T, bool Product>
__global__ void scan_lines(int64_t lines, int64_t length, const T* x, T* out) {
  using R = run_t<T>;
  __shared__ R tile[kThreads];
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    R carry = R(Product ? 1 : 0);
    for (int64_t start = 0; start < length; start += kThreads) {
      const int64_t i = start + threadIdx.x;
      R v = i < length ? load(x[line * length + i]) : R(Product ? 1 : 0);
      tile[threadIdx.x] = v;
      __syncthreads();
      for (int offset = 1; offset < kThreads; offset <<= 1) {
        R other = threadIdx.x >= static_cast<unsigned>(offset) ? tile[threadIdx.x - offset]
                                                               : R(Product ? 1 : 0);
        __syncthreads();
        v = combine<Product>(other, v);
        tile[threadIdx.x] = v;
        __syncthreads();
      }
      if (i < length) out[line * length + i] = store<T>(combine<Product>(carry, v));
      carry = combine<Product>(carry, tile[kThreads - 1]);
      __syncthreads();
    }
  }
}

template <bool Product>
void scan_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  const char* name = Product ? "cumprod" : "cumsum";
  const int64_t dim = call.attr_i64(0);
  if (x.dtype != out.dtype || x.ndim != out.ndim || !sdk::is_contiguous(x) ||
      !sdk::is_contiguous(out) || dim < 0 || dim >= std::max<int64_t>(x.ndim, 1)) {
    throw std::invalid_argument(std::string(name) + ": x and out must be contiguous, of one dtype "
                                                    "and rank, and dim in range");
  }
  int64_t outer = 1, length = 1, inner = 1;
  for (int32_t d = 0; d < x.ndim; ++d) {
    (d < dim ? outer : d == dim ? length : inner) *= x.sizes[d];
  }
  if (outer * length * inner == 0) return;
  cudaStream_t stream = stream_of(call);
  visit_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw sdk::type_error(std::string(name) + ": bool is not supported on cuda");
    } else {
      const T* in = static_cast<const T*>(x.data);
      T* o = static_cast<T*>(out.data);
      if (inner == 1 && length > 32) {
        const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(outer, 65535));
        scan_lines<T, Product><<<blocks, kThreads, 0, stream>>>(outer, length, in, o);
      } else {
        scan_columns<T, Product>
            <<<blocks_for(outer * inner, 1), kThreads, 0, stream>>>(outer, length, inner, in, o);
      }
    }
  });
  KILN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_scan(KernelTable& table) {
  table.add("cumsum", kernel<scan_kernel<false>>);
  table.add("cumprod", kernel<scan_kernel<true>>);
}

}  // namespace kiln::cuda
