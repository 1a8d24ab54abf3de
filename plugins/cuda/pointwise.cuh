// The pointwise kernels of kiln/sdk/pointwise.hpp's functors, shared by the files of each family
// (unary.cu, binary.cu, elementwise.cu): one kernel per (functor, storage type the
// functor takes), see Note [One scalar formula for every device]. Three translation units: a
// parallel build compiles them side by side, and each pays the fixed cost of a unit (~3.5 s of
// nvcc's CPU time) once.
//
// Note [One kernel for both 16-bit floats]
// Every kernel is compiled to machine code twice (sm_80 and sm_90), and each (functor, dtype) pair
// is one kernel, so the pairs are the build's cost. float16 and bfloat16 both compute in float32
// and differ only in how an element is loaded and stored, so they share one kernel: both are
// Half16, a 2-byte element, and the kernel gets the format as an argument (Pointwise::bf16).
// Loading and storing compute both conversions and select one (a few instructions; the format is
// opaque to the compiler, which would otherwise copy the loop, functor included, for each format);
// the vectorized path is unchanged, the element size being the same. That builds each floating
// functor 3 times (16-bit, float32, float64) instead of 4.
#pragma once

#include "loops.cuh"

#include <kiln/sdk/pointwise.hpp>

namespace kiln::cuda {
namespace {  // each family's file has its own copy, and its own g_error

namespace pw = sdk::pointwise;
using sdk::Call;
using sdk::kernel;

// Set by a kernel that meets an error only the data shows (a pw::Error: integer division by
// zero, a negative integer exponent); read back after the launch by check_device_error.
__device__ int g_error;

[[maybe_unused]] void check_device_error(cudaStream_t stream) {
  int code = 0;
  KILN_CUDA_CHECK(cudaMemcpyFromSymbolAsync(&code, g_error, sizeof code, 0, cudaMemcpyDeviceToHost,
                                            stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (code == static_cast<int>(pw::Error::none)) return;
  const int zero = 0;
  KILN_CUDA_CHECK(cudaMemcpyToSymbolAsync(g_error, &zero, sizeof zero, 0, cudaMemcpyHostToDevice,
                                          stream));
  pw::throw_if_error(static_cast<pw::Error>(code));
}

[[noreturn, maybe_unused]] void refuse(const Call& call, int32_t dtype) {
  throw std::invalid_argument(std::string(call.op()) + " on cuda does not take " +
                              sdk::dtype_name(dtype));
}

// Calls f(sdk::TypeTag<T>{}) with the storage type of dtype in the pointwise kernels:
// visit_dtype's, except Half16 for both 16-bit floats (See Note [One kernel for both 16-bit
// floats]).
template <class F>
decltype(auto) visit_pointwise(int32_t dtype, F&& f) {
  switch (dtype) {
    case KILN_BOOL: return f(sdk::TypeTag<bool>{});
    case KILN_U8: return f(sdk::TypeTag<uint8_t>{});
    case KILN_I8: return f(sdk::TypeTag<int8_t>{});
    case KILN_I16: return f(sdk::TypeTag<int16_t>{});
    case KILN_I32: return f(sdk::TypeTag<int32_t>{});
    case KILN_I64: return f(sdk::TypeTag<int64_t>{});
    case KILN_F16:
    case KILN_BF16: return f(sdk::TypeTag<Half16>{});
    case KILN_F32: return f(sdk::TypeTag<float>{});
    case KILN_F64: return f(sdk::TypeTag<double>{});
    default: throw std::invalid_argument("cuda: unknown dtype " + std::to_string(dtype));
  }
}

// The element type the kernel of Op runs dtype D's elements as: uint8 for int8 and for bool where
// Op allows it (pw::sign_blind_v, pw::bool_as_uint8_v), so that they share uint8's kernel.
template <class Op, class D>
using storage_t = std::conditional_t<(std::is_same_v<D, int8_t> && pw::sign_blind_v<Op>) ||
                                         (std::is_same_v<D, bool> && pw::bool_as_uint8_v<Op>),
                                     uint8_t, D>;

// `format` as a value the compiler cannot see through, read anew at each use: it then selects
// between the two conversions per element instead of copying the whole loop, functor included,
// for each format (what it does with a plain loop-invariant flag).
__device__ __forceinline__ bool opaque(bool format) {
  unsigned v = format;
  asm volatile("" : "+r"(v));
  return v != 0;
}

// A stored element as its compute type: a Half16 as bfloat16 when `bf16`, else as float16.
template <class T>
__device__ __forceinline__ acc_t<T> load_acc(T x, bool bf16) {
  if constexpr (std::is_same_v<T, Half16>) {
    const float as_half = __half2float(__ushort_as_half(x.bits));
    const float as_bf16 = __uint_as_float(static_cast<uint32_t>(x.bits) << 16);
    return opaque(bf16) ? as_bf16 : as_half;
  } else {
    return to_acc(x);
  }
}

// A computed value stored as Out (a Half16 rounded to nearest even in its format).
template <class Out, class A>
__device__ __forceinline__ Out store_acc(A r, bool bf16) {
  if constexpr (std::is_same_v<Out, Half16>) {
    const float f = static_cast<float>(r);
    const uint16_t as_half = __half_as_ushort(__float2half_rn(f));
    const uint16_t as_bf16 = __bfloat16_as_ushort(__float2bfloat16_rn(f));
    return Half16{opaque(bf16) ? as_bf16 : as_half};
  } else {
    return from_acc<Out>(r);
  }
}

// A functor of kiln/sdk/pointwise.hpp on stored elements of type T: computed in acc_t<T>, the
// result stored as Out; `bf16` says which format a Half16 holds. A data-dependent error is
// recorded in g_error.
template <class Out, class T, class Op>
struct Pointwise {
  static constexpr bool costly = pw::costly_v<Op>;
  Op op;
  bool bf16 = false;
  __device__ Out operator()(T x) const { return store_acc<Out>(op(load_acc(x, bf16)), bf16); }
  __device__ Out operator()(T x, T y) const {
    const acc_t<T> a = load_acc(x, bf16), b = load_acc(y, bf16);
    if constexpr (pw::can_fail_v<Op, acc_t<T>>) {
      const pw::Error e = pw::error_of<Op>(a, b);
      if (e != pw::Error::none) atomicExch(&g_error, static_cast<int>(e));
    }
    return store_acc<Out>(op(a, b), bf16);
  }
};

// out = Op(x) for the dtypes Op takes; out is bool for the operators that return bool. An
// operator that leaves integers unchanged copies them (copy_convert's kernels, one per size).
template <class Op>
void unary_kernel(const Call& call) {
  const int32_t dtype = call.input(0).dtype;
  visit_pointwise(dtype, [&](auto tag) {
    using D = typename decltype(tag)::type;
    if constexpr (pw::integers_unchanged_v<Op> && pw::is_int_v<D>) {
      copy_convert(call.output(0), call.input(0), stream_of(call));
    } else if constexpr (pw::accepts_v<Op::dtypes, acc_t<D>>) {
      using T = storage_t<Op, D>;
      using A = acc_t<T>;
      using Out = std::conditional_t<std::is_same_v<decltype(Op{}(A{})), bool>, bool, T>;
      map<Out, T>(stream_of(call), Pointwise<Out, T, Op>{Op{}, dtype == KILN_BF16}, call.output(0),
                  {&call.input(0)});
    } else {
      refuse(call, dtype);
    }
  });
}

// out = Op(a, b) for the dtypes Op takes (a and b of that dtype); out is bool for comparisons.
// Swapped: out = Op(b, a), which builds no kernel of its own (lt is gt with its operands
// exchanged).
template <class Op, bool Swapped = false>
void binary_kernel(const Call& call) {
  const kiln_tensor& a = call.input(Swapped ? 1 : 0);
  const kiln_tensor& b = call.input(Swapped ? 0 : 1);
  visit_pointwise(a.dtype, [&](auto tag) {
    using D = typename decltype(tag)::type;
    if constexpr (pw::accepts_v<Op::dtypes, acc_t<D>>) {
      using T = storage_t<Op, D>;
      using A = acc_t<T>;
      using Out = std::conditional_t<std::is_same_v<decltype(Op{}(A{}, A{})), bool>, bool, T>;
      cudaStream_t stream = stream_of(call);
      map<Out, T, T>(stream, Pointwise<Out, T, Op>{Op{}, a.dtype == KILN_BF16}, call.output(0),
                     {&a, &b});
      if constexpr (pw::can_fail_v<Op, A>) check_device_error(stream);
    } else {
      refuse(call, a.dtype);
    }
  });
}

}  // namespace
}  // namespace kiln::cuda
