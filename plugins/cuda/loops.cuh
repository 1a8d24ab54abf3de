// The CUDA plugin's generic loops: element types, conversions, an offset calculator for strided
// operands, and map(): one vectorized grid-stride loop for contiguous operands and one for the
// rest, into which each elementwise operator plugs a functor: one kernel per map()
// instantiation, since each pointwise functor instantiates its own (pointwise.cuh).
#pragma once

#include "cuda_plugin.hpp"

#include <kiln/sdk/kernel.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>

namespace kiln::cuda {

using half = __half;
using bf16 = __nv_bfloat16;

// A float16 or a bfloat16, which one the kernel is told at run time: the pointwise kernels build
// one kernel for both (See Note [One kernel for both 16-bit floats] in pointwise.cuh).
struct Half16 {
  uint16_t bits;
};

template <class T>
constexpr bool is_low_float_v = std::is_same_v<T, half> || std::is_same_v<T, bf16>;
template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || is_low_float_v<T>;
// Arithmetic type: float for the 16-bit floats, the type itself otherwise.
template <class T>
using acc_t = std::conditional_t<is_low_float_v<T> || std::is_same_v<T, Half16>, float, T>;

template <class T>
__device__ __forceinline__ acc_t<T> to_acc(T x) {
  if constexpr (std::is_same_v<T, half>) return __half2float(x);
  else if constexpr (std::is_same_v<T, bf16>) return __bfloat162float(x);
  else return x;
}
// Rounds (16-bit floats: to nearest even) or converts a value of any arithmetic type to T.
template <class T, class A>
__device__ __forceinline__ T from_acc(A x) {
  if constexpr (std::is_same_v<T, half>) return __float2half_rn(static_cast<float>(x));
  else if constexpr (std::is_same_v<T, bf16>) return __float2bfloat16_rn(static_cast<float>(x));
  else if constexpr (std::is_same_v<T, bool>) return x != A(0);
  else return static_cast<T>(x);
}

// Calls f(sdk::TypeTag<T>{}) with the device type of dtype (half and bf16 for the 16-bit floats).
template <class F>
decltype(auto) visit_dtype(int32_t dtype, F&& f) {
  switch (dtype) {
    case KILN_BOOL: return f(sdk::TypeTag<bool>{});
    case KILN_U8: return f(sdk::TypeTag<uint8_t>{});
    case KILN_I8: return f(sdk::TypeTag<int8_t>{});
    case KILN_I16: return f(sdk::TypeTag<int16_t>{});
    case KILN_I32: return f(sdk::TypeTag<int32_t>{});
    case KILN_I64: return f(sdk::TypeTag<int64_t>{});
    case KILN_F16: return f(sdk::TypeTag<half>{});
    case KILN_BF16: return f(sdk::TypeTag<bf16>{});
    case KILN_F32: return f(sdk::TypeTag<float>{});
    case KILN_F64: return f(sdk::TypeTag<double>{});
    default: throw std::invalid_argument("cuda: unknown dtype " + std::to_string(dtype));
  }
}

// Byte offsets of N operands of the same sizes at a row-major element index. Dimensions are
// stored innermost first, size-1 ones dropped and neighbours contiguous in every operand merged
// (as sdk::StridedLoop does), so most views need one or two divisions per element.
constexpr int kMaxDims = 16;
template <int N>
struct OffsetArray {
  int64_t v[N];
};
template <int N>
struct Offsets {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims][N];  // bytes

  Offsets() = default;
  explicit Offsets(const kiln_tensor* const (&ops)[N]) {
    const kiln_tensor& first = *ops[0];
    if (first.ndim > kMaxDims) throw std::invalid_argument("cuda: too many dimensions");
    for (int32_t d = first.ndim - 1; d >= 0; --d) {
      int64_t size = first.sizes[d];
      if (size == 1) continue;
      bool merge = ndim > 0;
      for (int k = 0; k < N && merge; ++k) {
        merge = ops[k]->strides[d] * int64_t(sdk::dtype_size(ops[k]->dtype)) ==
                strides[ndim - 1][k] * sizes[ndim - 1];
      }
      if (merge) {
        sizes[ndim - 1] *= size;
        continue;
      }
      sizes[ndim] = size;
      for (int k = 0; k < N; ++k) {
        strides[ndim][k] = ops[k]->strides[d] * int64_t(sdk::dtype_size(ops[k]->dtype));
      }
      ++ndim;
    }
  }

  // The byte offset of each operand at a row-major element index. The outermost dimension needs
  // no division (index is below numel), so a contiguous operand (one merged dimension) costs a
  // multiplication. Not inlined: every kernel of a file calls one copy per N rather than carrying
  // its own 64-bit divisions, which made the pointwise kernels' build a third longer.
  __device__ __noinline__ OffsetArray<N> at(int64_t index) const {
    OffsetArray<N> off;
#pragma unroll
    for (int k = 0; k < N; ++k) off.v[k] = 0;
    for (int d = 0; d + 1 < ndim; ++d) {
      int64_t i = index % sizes[d];
      index /= sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off.v[k] += i * strides[d][k];
    }
    if (ndim > 0) {
#pragma unroll
      for (int k = 0; k < N; ++k) off.v[k] += index * strides[ndim - 1][k];
    }
    return off;
  }
};

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

constexpr int kThreads = 256;
constexpr int kVec = 4;

inline int blocks_for(int64_t n, int per_thread) {
  int64_t b = (n + int64_t(kThreads) * per_thread - 1) / (int64_t(kThreads) * per_thread);
  return static_cast<int>(b < 1 ? 1 : b > 65536 ? 65536 : b);  // the loops stride over the rest
}

template <class Out, class Op, class... In>
__device__ __forceinline__ Vec<Out, kVec> apply_vec(const Op& op, const Vec<In, kVec>&... in) {
  Vec<Out, kVec> o;
#pragma unroll
  for (int j = 0; j < kVec; ++j) o.v[j] = op(in.v[j]...);
  return o;
}

template <int N>
struct Pointers {
  const char* v[N];
};

// Whether map's kernel has the vectorized path for contiguous operands. Each path is built once
// per (functor, dtype), so it is kept where it pays most: operands narrower than 4 bytes, whose
// scalar accesses underuse each memory transaction, and float32, the training dtype. The others
// take the scalar loop, coalesced, at one multiplication per element for a contiguous operand.
template <class Out, class... In>
constexpr bool vectorize_v = sizeof(Out) < 4 || std::is_same_v<Out, float> ||
                             ((sizeof(In) < 4 || std::is_same_v<In, float>) || ...);

// Elements [0, n - n % kVec) of contiguous, aligned operands, kVec neighbours per load and store.
template <class Out, class Op, class... In, size_t... K>
__device__ __forceinline__ void map_vectorized(int64_t n, const Op& op, Out* __restrict__ out,
                                               const Pointers<sizeof...(In) + 1>& in,
                                               std::index_sequence<K...>) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x * kVec;
// Grid-stride loops are not unrolled: a sweep covers up to 2^26 elements, so they rarely turn,
// and each unrolled copy of the functor costs build time (one kernel per pointwise functor).
#pragma unroll 1
  for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * kVec; i + kVec <= n;
       i += step) {
    *reinterpret_cast<Vec<Out, kVec>*>(out + i) = apply_vec<Out>(
        op, *reinterpret_cast<const Vec<In, kVec>*>(reinterpret_cast<const In*>(in.v[K]) + i)...);
  }
}

template <class Out, class Op, class... In, size_t... K>
__device__ __forceinline__ void map_at(const Offsets<1 + sizeof...(In)>& offsets, int64_t i, Op op,
                                       char* out, const char* const* in,
                                       std::index_sequence<K...>) {
  const OffsetArray<1 + sizeof...(In)> off = offsets.at(i);
  *reinterpret_cast<Out*>(out + off.v[0]) =
      op(*reinterpret_cast<const In*>(in[K] + off.v[K + 1])...);
}

// One kernel per (functor, operand types): kVec neighbours per load and store when `vectorized`
// (contiguous and aligned operands: a branch uniform across the grid), the strided loop for the
// rest (every element otherwise, the last n % kVec when vectorized). One kernel rather than two,
// and one copy of the scalar loop, keep down what each functor costs the build.
template <class Out, class Op, class... In>
__global__ void map_kernel(int64_t n, Op op, Offsets<1 + sizeof...(In)> offsets, char* out,
                           Pointers<sizeof...(In) + 1> in, bool vectorized) {
  int64_t first = 0;
  if (vectorize_v<Out, In...> && vectorized) {
    map_vectorized<Out, Op, In...>(n, op, reinterpret_cast<Out*>(out), in,
                                   std::index_sequence_for<In...>{});
    first = n - n % kVec;
  }
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
#pragma unroll 1
  for (int64_t i = first + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    map_at<Out, Op, In...>(offsets, i, op, out, in.v, std::index_sequence_for<In...>{});
  }
}

template <class T>
bool aligned_to_vec(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % sizeof(Vec<T, kVec>) == 0;
}

template <class Out, class... In, class Op, size_t... K>
void map_impl(cudaStream_t stream, Op op, const kiln_tensor& out, const kiln_tensor* const* in,
              std::index_sequence<K...>) {
  constexpr int N = 1 + sizeof...(In);
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  const bool vectorized = vectorize_v<Out, In...> && sdk::is_contiguous(out) &&
                          (sdk::is_contiguous(*in[K]) && ...) && aligned_to_vec<Out>(out.data) &&
                          (aligned_to_vec<In>(in[K]->data) && ...);
  const kiln_tensor* ops[N] = {&out, in[K]...};
  Pointers<N> ptrs{{static_cast<const char*>(in[K]->data)..., nullptr}};
  map_kernel<Out, Op, In...><<<blocks_for(n, vectorized ? kVec : 1), kThreads, 0, stream>>>(
      n, op, Offsets<N>(ops), static_cast<char*>(out.data), ptrs, vectorized);
  KILN_CUDA_CHECK(cudaGetLastError());
}

// out[i] = op(in[i]...) for every element, inputs already broadcast to out's sizes; Out and In
// are the element types of the tensors. Each operator family instantiates it once per dtype.
template <class Out, class... In, class Op>
void map(cudaStream_t stream, Op op, const kiln_tensor& out,
         std::initializer_list<const kiln_tensor*> in = {}) {
  if (in.size() != sizeof...(In)) throw std::logic_error("cuda map: wrong number of inputs");
  map_impl<Out, In...>(stream, op, out, in.begin(), std::index_sequence_for<In...>{});
}

// The stream of a kernel call's device.
inline cudaStream_t stream_of(const sdk::Call& call) {
  const kiln_tensor& t = call.num_outputs() > 0 ? call.output(0) : call.input(0);
  set_device(t.device.index);
  return current_stream(t.device.index);
}

}  // namespace kiln::cuda
