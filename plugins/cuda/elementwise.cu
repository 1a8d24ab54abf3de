// Elementwise kernels: unary, binary, comparisons and logical operators, where, clamp, fill_ and
// copy_. The pointwise operators are the functors of kiln/sdk/pointwise.hpp, one kernel per
// (functor, dtype the functor takes); see Note [One scalar formula for every device].
#include "loops.cuh"

#include <kiln/sdk/pointwise.hpp>

#include <cstring>

namespace kiln::cuda {
namespace {

namespace pw = sdk::pointwise;
using sdk::Call;
using sdk::kernel;

// Set by a kernel that meets an error only the data shows (a pw::Error: integer division by
// zero, a negative integer exponent); read back after the launch by check_device_error.
__device__ int g_error;

void check_device_error(cudaStream_t stream) {
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

[[noreturn]] void refuse(const Call& call, int32_t dtype) {
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
      const pw::Error e = Op::error(a, b);
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
template <class Op>
void binary_kernel(const Call& call) {
  visit_dtype(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    if constexpr (pw::accepts_v<Op::dtypes, A>) {
      using Out = std::conditional_t<std::is_same_v<decltype(Op{}(A{}, A{})), bool>, bool, T>;
      cudaStream_t stream = stream_of(call);
      map<Out, T, T>(stream, Pointwise<Out, T, Op>{}, call.output(0),
                     {&call.input(0), &call.input(1)});
      if constexpr (pw::can_fail_v<Op, A>) check_device_error(stream);
    } else {
      refuse(call, call.input(0).dtype);
    }
  });
}

// add: a + alpha * b; sub: a - alpha * b, which is add with -alpha: one kernel per dtype.
template <bool Subtract>
void add_sub_kernel(const Call& call) {
  constexpr pw::Dtypes S = Subtract ? pw::Sub::dtypes : pw::Add::dtypes;
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    if constexpr (pw::accepts_v<S, A>) {
      A alpha = call.has_attr(0) ? call.attr_scalar<A>(0) : A(1);
      if constexpr (Subtract) alpha = pw::wrap_neg(alpha);
      using Op = pw::AddScaled<A>;
      map<T, T, T>(stream_of(call), Pointwise<T, T, Op>{Op{alpha}}, call.output(0),
                   {&call.input(0), &call.input(1)});
    } else {
      refuse(call, call.output(0).dtype);
    }
  });
}

// ---- where, clamp, fill_ ----------------------------------------------------------------------
// where(cond, a, b) moves the elements as bits: one kernel per element size.
template <class B>
void where_bits(const Call& call) {
  map<B, bool, B, B>(stream_of(call), pw::Where{}, call.output(0),
                     {&call.input(0), &call.input(1), &call.input(2)});
}

void where_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype,
              [&](auto tag) { where_bits<pw::bits_t<typename decltype(tag)::type>>(call); });
}

void clamp_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using Op = pw::Clamp<A>;
    if constexpr (pw::accepts_v<Op::dtypes, A>) {
      const Op op{
          pw::clamp_bound<A>(call.has_attr(0) ? &call.attr(0) : nullptr, pw::lowest_value<A>()),
          pw::clamp_bound<A>(call.has_attr(1) ? &call.attr(1) : nullptr, pw::highest_value<A>())};
      map<T, T>(stream_of(call), Pointwise<T, T, Op>{op}, call.output(0), {&call.input(0)});
    } else {
      refuse(call, call.output(0).dtype);
    }
  });
}

template <class T>
struct FillOp {
  T value;
  __device__ T operator()() const { return value; }
};

void fill_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T value;
    if constexpr (std::is_same_v<T, half>) {
      value = __float2half_rn(call.attr_scalar<float>(0));
    } else if constexpr (std::is_same_v<T, bf16>) {
      value = __float2bfloat16_rn(call.attr_scalar<float>(0));
    } else if constexpr (std::is_same_v<T, bool>) {
      value = call.attr_scalar<double>(0) != 0;
    } else {
      value = call.attr_scalar<T>(0);
    }
    map<T>(stream_of(call), FillOp<T>{value}, call.output(0));
  });
}

// ---- copy_: any dtype to any dtype, any strides -----------------------------------------------
// One kernel for all 100 pairs: each element is read into a wide value (int64 for integers and
// bool, double for floats) and written from it, with a switch on the dtypes.
struct Wide {
  double f;
  int64_t i;
  bool is_float;
};

__device__ Wide load_wide(int32_t dtype, const char* p) {
  switch (dtype) {
    case KILN_BOOL: return {0, *reinterpret_cast<const bool*>(p), false};
    case KILN_U8: return {0, *reinterpret_cast<const uint8_t*>(p), false};
    case KILN_I8: return {0, *reinterpret_cast<const int8_t*>(p), false};
    case KILN_I16: return {0, *reinterpret_cast<const int16_t*>(p), false};
    case KILN_I32: return {0, *reinterpret_cast<const int32_t*>(p), false};
    case KILN_I64: return {0, *reinterpret_cast<const int64_t*>(p), false};
    case KILN_F16: return {__half2float(*reinterpret_cast<const half*>(p)), 0, true};
    case KILN_BF16: return {__bfloat162float(*reinterpret_cast<const bf16*>(p)), 0, true};
    case KILN_F32: return {*reinterpret_cast<const float*>(p), 0, true};
    default: return {*reinterpret_cast<const double*>(p), 0, true};
  }
}

template <class T>
__device__ void store_as(char* p, const Wide& w) {
  if constexpr (std::is_same_v<T, bool>) {
    *reinterpret_cast<bool*>(p) = w.is_float ? w.f != 0 : w.i != 0;
  } else if constexpr (is_low_float_v<T> || std::is_same_v<T, float>) {
    // from a double or an int64 straight to float: one rounding, as on the CPU
    float f = w.is_float ? static_cast<float>(w.f) : static_cast<float>(w.i);
    *reinterpret_cast<T*>(p) = from_acc<T>(f);
  } else {
    *reinterpret_cast<T*>(p) = w.is_float ? static_cast<T>(w.f) : static_cast<T>(w.i);
  }
}

__device__ void store_wide(int32_t dtype, char* p, const Wide& w) {
  switch (dtype) {
    case KILN_BOOL: return store_as<bool>(p, w);
    case KILN_U8: return store_as<uint8_t>(p, w);
    case KILN_I8: return store_as<int8_t>(p, w);
    case KILN_I16: return store_as<int16_t>(p, w);
    case KILN_I32: return store_as<int32_t>(p, w);
    case KILN_I64: return store_as<int64_t>(p, w);
    case KILN_F16: return store_as<half>(p, w);
    case KILN_BF16: return store_as<bf16>(p, w);
    case KILN_F32: return store_as<float>(p, w);
    default: return store_as<double>(p, w);
  }
}

__global__ void convert_kernel(int64_t n, Offsets<2> offsets, char* dst, int32_t dst_dtype,
                               const char* src, int32_t src_dtype) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    offsets.get(i, off);
    store_wide(dst_dtype, dst + off[0], load_wide(src_dtype, src + off[1]));
  }
}

// Same dtype: move the bytes, 1, 2, 4 or 8 at a time.
template <class U>
struct CopyOp {
  __device__ U operator()(U x) const { return x; }
};

template <class U>
void copy_bytes(const kiln_tensor& dst, const kiln_tensor& src, cudaStream_t stream) {
  kiln_tensor d = dst, s = src;
  d.dtype = s.dtype = sizeof(U) == 1   ? KILN_U8
                      : sizeof(U) == 2 ? KILN_I16
                      : sizeof(U) == 4 ? KILN_I32
                                       : KILN_I64;
  map<U, U>(stream, CopyOp<U>{}, d, {&s});
}

void copy_kernel(const Call& call) { copy_convert(call.output(0), call.input(0), stream_of(call)); }

}  // namespace

void copy_convert(const kiln_tensor& dst, const kiln_tensor& src, cudaStream_t stream) {
  if (dst.dtype == src.dtype) {
    switch (sdk::dtype_size(dst.dtype)) {
      case 1: return copy_bytes<uint8_t>(dst, src, stream);
      case 2: return copy_bytes<uint16_t>(dst, src, stream);
      case 4: return copy_bytes<uint32_t>(dst, src, stream);
      default: return copy_bytes<uint64_t>(dst, src, stream);
    }
  }
  const int64_t n = sdk::numel(dst);
  if (n == 0) return;
  const kiln_tensor* ops[2] = {&dst, &src};
  convert_kernel<<<blocks_for(n, 1), kThreads, 0, stream>>>(n, Offsets<2>(ops),
                                                            static_cast<char*>(dst.data), dst.dtype,
                                                            static_cast<const char*>(src.data),
                                                            src.dtype);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void register_elementwise(KernelTable& t) {
  t.add("fill_", kernel<fill_kernel>);
  t.add("copy_", kernel<copy_kernel>);
  t.add("neg", kernel<unary_kernel<pw::Neg>>);
  t.add("abs", kernel<unary_kernel<pw::Abs>>);
  t.add("sign", kernel<unary_kernel<pw::Sign>>);
  t.add("relu", kernel<unary_kernel<pw::Relu>>);
  t.add("bitwise_not", kernel<unary_kernel<pw::BitwiseNot>>);
  t.add("logical_not", kernel<unary_kernel<pw::LogicalNot>>);
  t.add("exp", kernel<unary_kernel<pw::Exp>>);
  t.add("log", kernel<unary_kernel<pw::Log>>);
  t.add("log1p", kernel<unary_kernel<pw::Log1p>>);
  t.add("expm1", kernel<unary_kernel<pw::Expm1>>);
  t.add("sqrt", kernel<unary_kernel<pw::Sqrt>>);
  t.add("rsqrt", kernel<unary_kernel<pw::Rsqrt>>);
  t.add("sin", kernel<unary_kernel<pw::Sin>>);
  t.add("cos", kernel<unary_kernel<pw::Cos>>);
  t.add("tanh", kernel<unary_kernel<pw::Tanh>>);
  t.add("sigmoid", kernel<unary_kernel<pw::Sigmoid>>);
  t.add("add", kernel<add_sub_kernel<false>>);
  t.add("sub", kernel<add_sub_kernel<true>>);
  t.add("mul", kernel<binary_kernel<pw::Mul>>);
  t.add("div", kernel<binary_kernel<pw::Div>>);
  t.add("floor_divide", kernel<binary_kernel<pw::FloorDivide>>);
  t.add("remainder", kernel<binary_kernel<pw::Remainder>>);
  t.add("fmod", kernel<binary_kernel<pw::Fmod>>);
  t.add("pow", kernel<binary_kernel<pw::Pow>>);
  t.add("maximum", kernel<binary_kernel<pw::Maximum>>);
  t.add("minimum", kernel<binary_kernel<pw::Minimum>>);
  t.add("bitwise_and", kernel<binary_kernel<pw::BitwiseAnd>>);
  t.add("bitwise_or", kernel<binary_kernel<pw::BitwiseOr>>);
  t.add("bitwise_xor", kernel<binary_kernel<pw::BitwiseXor>>);
  t.add("eq", kernel<binary_kernel<pw::Eq>>);
  t.add("ne", kernel<binary_kernel<pw::Ne>>);
  t.add("lt", kernel<binary_kernel<pw::Lt>>);
  t.add("le", kernel<binary_kernel<pw::Le>>);
  t.add("gt", kernel<binary_kernel<pw::Gt>>);
  t.add("ge", kernel<binary_kernel<pw::Ge>>);
  t.add("logical_and", kernel<binary_kernel<pw::LogicalAnd>>);
  t.add("logical_or", kernel<binary_kernel<pw::LogicalOr>>);
  t.add("logical_xor", kernel<binary_kernel<pw::LogicalXor>>);
  t.add("where", kernel<where_kernel>);
  t.add("clamp", kernel<clamp_kernel>);
}

}  // namespace kiln::cuda
