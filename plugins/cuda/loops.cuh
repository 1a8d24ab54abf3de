// The CUDA plugin's generic loops: element types, conversions, an offset calculator for strided
// operands, and map(): one vectorized grid-stride loop for contiguous operands and one for the
// rest, into which each elementwise operator plugs a functor: one kernel per map()
// instantiation, since each pointwise functor instantiates its own (pointwise.cuh).
#pragma once

#include "cuda_plugin.hpp"

#include <kiln/sdk/kernel.hpp>
#include <kiln/sdk/pointwise_support.hpp>

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
// take the scalar loop, coalesced, at one multiplication per element for a contiguous operand; so
// do the functors that declare themselves costly (kiln/sdk/pointwise_support.hpp), whose time is
// in the formula, not in the memory accesses.
template <class Op, class Out, class... In>
constexpr bool vectorize_v = !sdk::pointwise::costly_v<Op> &&
                             (sizeof(Out) < 4 || std::is_same_v<Out, float> ||
                              ((sizeof(In) < 4 || std::is_same_v<In, float>) || ...));

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
  if (vectorize_v<Op, Out, In...> && vectorized) {
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

// Everything map() does on the host that does not depend on the functor or the element types: the
// operands' offsets, whether the vectorized path applies, the grid. One copy per operand count,
// not per (functor, dtype): inlined into each of them it was half of a pointwise file's host code
// and a fifth of its build time.
template <int N>
struct MapPlan {
  int64_t n = 0;
  bool vectorized = false;
  int blocks = 0;
  Offsets<N> offsets;
  Pointers<N> in;
  char* out = nullptr;
};

// `vec_bytes[k]`: the size of kVec elements of operand k (out first), 0 when the functor's
// kernel has no vectorized path (vectorize_v).
template <int N>
__attribute__((noinline)) MapPlan<N> plan_map(const kiln_tensor* const (&ops)[N],
                                              const size_t (&vec_bytes)[N]) {
  MapPlan<N> plan;
  plan.n = sdk::numel(*ops[0]);
  if (plan.n == 0) return plan;
  bool vectorized = vec_bytes[0] != 0;
  for (int k = 0; k < N && vectorized; ++k) {
    vectorized = sdk::is_contiguous(*ops[k]) &&
                 reinterpret_cast<uintptr_t>(ops[k]->data) % vec_bytes[k] == 0;
  }
  plan.vectorized = vectorized;
  plan.blocks = blocks_for(plan.n, vectorized ? kVec : 1);
  plan.offsets = Offsets<N>(ops);
  for (int k = 1; k < N; ++k) plan.in.v[k - 1] = static_cast<const char*>(ops[k]->data);
  plan.in.v[N - 1] = nullptr;
  plan.out = static_cast<char*>(ops[0]->data);
  return plan;
}

[[noreturn, maybe_unused]] inline void wrong_input_count() {
  throw std::logic_error("cuda map: wrong number of inputs");
}

// out[i] = op(in[i]...) for every element, inputs already broadcast to out's sizes; Out and In
// are the element types of the tensors. Each operator family instantiates it once per dtype.
template <class Out, class... In, class Op>
void map(cudaStream_t stream, Op op, const kiln_tensor& out,
         std::initializer_list<const kiln_tensor*> in = {}) {
  constexpr int N = 1 + sizeof...(In);
  if (in.size() != sizeof...(In)) wrong_input_count();
  const kiln_tensor* ops[N] = {&out};
  for (int k = 1; k < N; ++k) ops[k] = in.begin()[k - 1];
  constexpr bool vec = vectorize_v<Op, Out, In...>;
  const MapPlan<N> p =
      plan_map<N>(ops, {vec ? sizeof(Vec<Out, kVec>) : 0, (vec ? sizeof(Vec<In, kVec>) : 0)...});
  if (p.n == 0) return;
  map_kernel<Out, Op, In...>
      <<<p.blocks, kThreads, 0, stream>>>(p.n, op, p.offsets, p.out, p.in, p.vectorized);
  KILN_CUDA_CHECK(cudaGetLastError());
}

// The stream of a kernel call's device.
inline cudaStream_t stream_of(const sdk::Call& call) {
  const kiln_tensor& t = call.num_outputs() > 0 ? call.output(0) : call.input(0);
  set_device(t.device.index);
  return current_stream(t.device.index);
}

}  // namespace kiln::cuda
