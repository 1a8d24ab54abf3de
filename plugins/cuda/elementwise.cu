// Elementwise kernels: unary, binary, comparisons and logical operators, where, clamp, fill_ and
// copy_. Each family is one functor per dtype with the operator as a run-time code (the same for
// every element, so the branch costs nothing next to the memory traffic): that keeps the plugin to
// a few dozen kernel instantiations instead of one per (operator, dtype), and its build short.
#include "loops.cuh"

#include <cmath>
#include <cstring>

namespace kiln::cuda {
namespace {

using sdk::Call;
using sdk::kernel;

// Set by a kernel that meets an error only the data shows (integer division by zero, a negative
// integer exponent); read back after the launch by check_device_error.
__device__ int g_error;
enum DeviceError : int { kNoError = 0, kZeroDivision = 1, kNegativePower = 2 };

void check_device_error(cudaStream_t stream) {
  int code = 0;
  KILN_CUDA_CHECK(cudaMemcpyFromSymbolAsync(&code, g_error, sizeof code, 0,
                                            cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (code == kNoError) return;
  const int zero = 0;
  KILN_CUDA_CHECK(cudaMemcpyToSymbolAsync(g_error, &zero, sizeof zero, 0,
                                          cudaMemcpyHostToDevice, stream));
  if (code == kZeroDivision) throw std::domain_error("ZeroDivisionError");
  throw std::domain_error("Integers to negative integer powers are not allowed.");
}

// Integer arithmetic that wraps (two's complement, like PyTorch) instead of overflowing.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

// ---- unary ------------------------------------------------------------------------------------
enum Unary : int { kNeg, kAbs, kSign, kRelu, kBitwiseNot, kExp, kLog, kLog1p, kExpm1, kSqrt, kRsqrt,
                   kSin, kCos, kTanh, kSigmoid };

template <class T>
struct UnaryOp {
  int code;
  __device__ T operator()(T x) const {
    using A = acc_t<T>;
    A a = to_acc(x);
    if constexpr (std::is_same_v<T, bool>) {
      return code == kBitwiseNot ? !a : a;  // sign of a bool is itself
    } else {
      switch (code) {
        case kNeg: return from_acc<T>(A(0) - a);
        case kAbs:
          if constexpr (std::is_unsigned_v<T>) return x;
          else return from_acc<T>(a < A(0) ? A(-a) : a);
        case kSign:
          if constexpr (std::is_unsigned_v<T>) return T(a > 0);
          else return from_acc<T>(a > A(0) ? A(1) : a < A(0) ? A(-1) : a);  // NaN stays
        case kRelu: return from_acc<T>(a > A(0) ? a : a != a ? a : A(0));
        default: break;
      }
      if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(~a);  // kBitwiseNot
      } else {
        switch (code) {
          case kExp: return from_acc<T>(exp(a));
          case kLog: return from_acc<T>(log(a));
          case kLog1p: return from_acc<T>(log1p(a));
          case kExpm1: return from_acc<T>(expm1(a));
          case kSqrt: return from_acc<T>(sqrt(a));
          case kRsqrt: return from_acc<T>(A(1) / sqrt(a));
          case kSin: return from_acc<T>(sin(a));
          case kCos: return from_acc<T>(cos(a));
          case kTanh: return from_acc<T>(tanh(a));
          default: return from_acc<T>(A(1) / (A(1) + exp(-a)));  // kSigmoid
        }
      }
    }
  }
};

// Which dtypes an operator takes (docs/primitives.md); the core checks too, this guards the
// kernels' assumptions.
enum Dtypes { kAll, kNumeric, kFloating, kIntegralBool };

template <class T>
bool accepts(Dtypes d) {
  switch (d) {
    case kAll: return true;
    case kNumeric: return !std::is_same_v<T, bool>;
    case kFloating: return is_float_v<T>;
    default: return !is_float_v<T>;
  }
}

[[noreturn]] void refuse(const Call& call, int32_t dtype) {
  throw std::invalid_argument(std::string(call.op()) + " on cuda does not take " +
                              sdk::dtype_name(dtype));
}

template <int Code, Dtypes D>
void unary_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (!accepts<T>(D)) refuse(call, call.output(0).dtype);
    map<T, T>(stream_of(call), UnaryOp<T>{Code}, call.output(0), {&call.input(0)});
  });
}

// ---- binary -----------------------------------------------------------------------------------
enum Binary : int { kAdd, kSub, kMul, kDiv, kFloorDivide, kRemainder, kFmod, kPow, kMaximum,
                    kMinimum, kAnd, kOr, kXor };

template <class T>
struct BinaryOp {
  int code;
  acc_t<T> alpha;
  __device__ T operator()(T x, T y) const {
    using A = acc_t<T>;
    A a = to_acc(x), b = to_acc(y);
    if constexpr (std::is_same_v<T, bool>) {
      switch (code) {
        case kAdd: return a || (alpha && b);
        case kMul: case kAnd: return a && b;
        case kOr: case kMaximum: return a || b;
        case kMinimum: return a && b;
        default: return a != b;  // kXor
      }
    } else if constexpr (std::is_integral_v<T>) {
      using W = wrap_t<T>;
      switch (code) {
        case kAdd: return T(W(a) + W(alpha) * W(b));
        case kSub: return T(W(a) - W(alpha) * W(b));
        case kMul: return T(W(a) * W(b));
        case kMaximum: return a > b ? a : b;
        case kMinimum: return a < b ? a : b;
        case kAnd: return a & b;
        case kOr: return a | b;
        case kXor: return a ^ b;
        case kPow: {
          if constexpr (std::is_signed_v<T>) {
            if (b < 0) {
              atomicExch(&g_error, kNegativePower);
              return 0;
            }
          }
          W r = 1, base = W(a);
          for (uint64_t e = uint64_t(b); e != 0; e >>= 1) {
            if (e & 1) r *= base;
            base *= base;
          }
          return T(r);
        }
        default: break;
      }
      if (b == 0) {
        atomicExch(&g_error, kZeroDivision);
        return 0;
      }
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return code == kFloorDivide ? T(W(0) - W(a)) : T(0);  // no INT_MIN / -1
        T q = a / b, r = a % b;
        if (code == kFmod) return r;
        bool adjust = r != 0 && ((r < 0) != (b < 0));
        if (code == kRemainder) return adjust ? T(r + b) : r;
        return adjust ? T(q - 1) : q;  // kFloorDivide
      } else {
        return code == kFloorDivide ? T(a / b) : T(a % b);
      }
    } else {
      switch (code) {
        case kAdd: return from_acc<T>(a + alpha * b);
        case kSub: return from_acc<T>(a - alpha * b);
        case kMul: return from_acc<T>(a * b);
        case kDiv: return from_acc<T>(a / b);
        case kFmod: return from_acc<T>(fmod(a, b));
        case kRemainder: {
          A mod = fmod(a, b);
          return from_acc<T>(mod != A(0) && ((b < A(0)) != (mod < A(0))) ? mod + b : mod);
        }
        case kFloorDivide: {  // PyTorch's div_floor_floating
          if (b == A(0)) return from_acc<T>(a / b);
          A mod = fmod(a, b);
          A div = (a - mod) / b;
          if (mod != A(0) && (b < A(0)) != (mod < A(0))) div -= A(1);
          if (div == A(0)) return from_acc<T>(copysign(A(0), a / b));
          A floordiv = floor(div);
          if (div - floordiv > A(0.5)) floordiv += A(1);
          return from_acc<T>(floordiv);
        }
        case kPow: return from_acc<T>(pow(a, b));
        case kMaximum: return from_acc<T>(a != a ? a : b != b ? b : a > b ? a : b);
        default: return from_acc<T>(a != a ? a : b != b ? b : a < b ? a : b);  // kMinimum
      }
    }
  }
};

template <int Code, Dtypes D>
void binary_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (!accepts<T>(D) || (std::is_same_v<T, bool> && Code == kSub)) {
      refuse(call, call.output(0).dtype);
    }
    acc_t<T> alpha = (Code == kAdd || Code == kSub) ? call.attr_scalar<acc_t<T>>(0) : acc_t<T>(1);
    cudaStream_t stream = stream_of(call);
    map<T, T, T>(stream, BinaryOp<T>{Code, alpha}, call.output(0),
                 {&call.input(0), &call.input(1)});
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (Code == kFloorDivide || Code == kRemainder || Code == kFmod || Code == kPow) {
        check_device_error(stream);
      }
    }
  });
}

// ---- comparisons and logical operators (bool out) ----------------------------------------------
enum Compare : int { kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr, kLogicalXor,
                     kLogicalNot };

template <class T>
struct CompareOp {
  int code;
  __device__ bool operator()(T x, T y) const {
    acc_t<T> a = to_acc(x), b = to_acc(y);
    switch (code) {
      case kEq: return a == b;
      case kNe: return a != b;
      case kLt: return a < b;
      case kLe: return a <= b;
      case kGt: return a > b;
      case kGe: return a >= b;
      case kLogicalAnd: return a != acc_t<T>(0) && b != acc_t<T>(0);
      case kLogicalOr: return a != acc_t<T>(0) || b != acc_t<T>(0);
      default: return (a != acc_t<T>(0)) != (b != acc_t<T>(0));  // kLogicalXor
    }
  }
  __device__ bool operator()(T x) const { return !(to_acc(x) != acc_t<T>(0)); }  // kLogicalNot
};

template <int Code>
void compare_kernel(const Call& call) {
  visit_dtype(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (Code == kLogicalNot) {
      map<bool, T>(stream_of(call), CompareOp<T>{Code}, call.output(0), {&call.input(0)});
    } else {
      map<bool, T, T>(stream_of(call), CompareOp<T>{Code}, call.output(0),
                      {&call.input(0), &call.input(1)});
    }
  });
}

// ---- where, clamp, fill_ ----------------------------------------------------------------------
template <class T>
struct WhereOp {
  __device__ T operator()(bool c, T a, T b) const { return c ? a : b; }
};

void where_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map<T, bool, T, T>(stream_of(call), WhereOp<T>{}, call.output(0),
                       {&call.input(0), &call.input(1), &call.input(2)});
  });
}

template <class T>
struct ClampOp {
  acc_t<T> lo, hi;
  bool has_lo, has_hi;
  __device__ T operator()(T x) const {
    acc_t<T> a = to_acc(x);
    if (a != a) return x;  // NaN propagates
    if (has_lo && a < lo) a = lo;
    if (has_hi && a > hi) a = hi;
    return from_acc<T>(a);
  }
};

void clamp_kernel(const Call& call) {
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (std::is_same_v<T, bool>) refuse(call, call.output(0).dtype);
    ClampOp<T> op{acc_t<T>(0), acc_t<T>(0), call.has_attr(0), call.has_attr(1)};
    if (op.has_lo) op.lo = call.attr_scalar<acc_t<T>>(0);
    if (op.has_hi) op.hi = call.attr_scalar<acc_t<T>>(1);
    map<T, T>(stream_of(call), op, call.output(0), {&call.input(0)});
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
  d.dtype = s.dtype = sizeof(U) == 1 ? KILN_U8 : sizeof(U) == 2 ? KILN_I16
                                      : sizeof(U) == 4 ? KILN_I32 : KILN_I64;
  map<U, U>(stream, CopyOp<U>{}, d, {&s});
}

void copy_kernel(const Call& call) {
  copy_convert(call.output(0), call.input(0), stream_of(call));
}

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
  convert_kernel<<<blocks_for(n, 1), kThreads, 0, stream>>>(
      n, Offsets<2>(ops), static_cast<char*>(dst.data), dst.dtype,
      static_cast<const char*>(src.data), src.dtype);
  KILN_CUDA_CHECK(cudaGetLastError());
}

void register_elementwise(KernelTable& t) {
  t.add("fill_", kernel<fill_kernel>);
  t.add("copy_", kernel<copy_kernel>);
  t.add("neg", kernel<unary_kernel<kNeg, kNumeric>>);
  t.add("abs", kernel<unary_kernel<kAbs, kNumeric>>);
  t.add("sign", kernel<unary_kernel<kSign, kAll>>);
  t.add("relu", kernel<unary_kernel<kRelu, kNumeric>>);
  t.add("bitwise_not", kernel<unary_kernel<kBitwiseNot, kIntegralBool>>);
  t.add("logical_not", kernel<compare_kernel<kLogicalNot>>);
  t.add("exp", kernel<unary_kernel<kExp, kFloating>>);
  t.add("log", kernel<unary_kernel<kLog, kFloating>>);
  t.add("log1p", kernel<unary_kernel<kLog1p, kFloating>>);
  t.add("expm1", kernel<unary_kernel<kExpm1, kFloating>>);
  t.add("sqrt", kernel<unary_kernel<kSqrt, kFloating>>);
  t.add("rsqrt", kernel<unary_kernel<kRsqrt, kFloating>>);
  t.add("sin", kernel<unary_kernel<kSin, kFloating>>);
  t.add("cos", kernel<unary_kernel<kCos, kFloating>>);
  t.add("tanh", kernel<unary_kernel<kTanh, kFloating>>);
  t.add("sigmoid", kernel<unary_kernel<kSigmoid, kFloating>>);
  t.add("add", kernel<binary_kernel<kAdd, kAll>>);
  t.add("sub", kernel<binary_kernel<kSub, kAll>>);
  t.add("mul", kernel<binary_kernel<kMul, kAll>>);
  t.add("div", kernel<binary_kernel<kDiv, kFloating>>);
  t.add("floor_divide", kernel<binary_kernel<kFloorDivide, kNumeric>>);
  t.add("remainder", kernel<binary_kernel<kRemainder, kNumeric>>);
  t.add("fmod", kernel<binary_kernel<kFmod, kNumeric>>);
  t.add("pow", kernel<binary_kernel<kPow, kNumeric>>);
  t.add("maximum", kernel<binary_kernel<kMaximum, kAll>>);
  t.add("minimum", kernel<binary_kernel<kMinimum, kAll>>);
  t.add("bitwise_and", kernel<binary_kernel<kAnd, kIntegralBool>>);
  t.add("bitwise_or", kernel<binary_kernel<kOr, kIntegralBool>>);
  t.add("bitwise_xor", kernel<binary_kernel<kXor, kIntegralBool>>);
  t.add("eq", kernel<compare_kernel<kEq>>);
  t.add("ne", kernel<compare_kernel<kNe>>);
  t.add("lt", kernel<compare_kernel<kLt>>);
  t.add("le", kernel<compare_kernel<kLe>>);
  t.add("gt", kernel<compare_kernel<kGt>>);
  t.add("ge", kernel<compare_kernel<kGe>>);
  t.add("logical_and", kernel<compare_kernel<kLogicalAnd>>);
  t.add("logical_or", kernel<compare_kernel<kLogicalOr>>);
  t.add("logical_xor", kernel<compare_kernel<kLogicalXor>>);
  t.add("where", kernel<where_kernel>);
  t.add("clamp", kernel<clamp_kernel>);
}

}  // namespace kiln::cuda
