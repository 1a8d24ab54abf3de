// The pointwise kernels of kiln/sdk/pointwise.hpp's functors, shared by the files of each family
// (unary.cu, binary.cu, compare.cu, elementwise.cu): one kernel per (functor, dtype the functor
// takes), see Note [One scalar formula for every device]. The families are separate translation
// units so that a parallel build compiles them side by side (one file took twice as long as the
// op-code switch it replaced).
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

// A functor of kiln/sdk/pointwise.hpp on stored elements of type T: computed in acc_t<T>, the
// result stored as Out. A data-dependent error is recorded in g_error.
template <class Out, class T, class Op>
struct Pointwise {
  Op op;
  __device__ Out operator()(T x) const { return from_acc<Out>(op(to_acc(x))); }
  __device__ Out operator()(T x, T y) const {
    const acc_t<T> a = to_acc(x), b = to_acc(y);
    if constexpr (pw::can_fail_v<Op, acc_t<T>>) {
      const pw::Error e = pw::error_of<Op>(a, b);
      if (e != pw::Error::none) atomicExch(&g_error, static_cast<int>(e));
    }
    return from_acc<Out>(op(a, b));
  }
};

// out = Op(x) for the dtypes Op takes; out is bool for the operators that return bool.
template <class Op>
void unary_kernel(const Call& call) {
  visit_dtype(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    if constexpr (pw::accepts_v<Op::dtypes, A>) {
      using Out = std::conditional_t<std::is_same_v<decltype(Op{}(A{})), bool>, bool, T>;
      map<Out, T>(stream_of(call), Pointwise<Out, T, Op>{}, call.output(0), {&call.input(0)});
    } else {
      refuse(call, call.input(0).dtype);
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
  visit_dtype(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    if constexpr (pw::accepts_v<Op::dtypes, A>) {
      using Out = std::conditional_t<std::is_same_v<decltype(Op{}(A{}, A{})), bool>, bool, T>;
      cudaStream_t stream = stream_of(call);
      map<Out, T, T>(stream, Pointwise<Out, T, Op>{}, call.output(0), {&a, &b});
      if constexpr (pw::can_fail_v<Op, A>) check_device_error(stream);
    } else {
      refuse(call, a.dtype);
    }
  });
}

}  // namespace
}  // namespace kiln::cuda
