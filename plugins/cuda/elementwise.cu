// Elementwise kernels with more than a functor's loop: where, clamp, fill_ and copy_. The unary,
// binary and comparison families are unary.cu and binary.cu (pointwise.cuh).
#include "pointwise.cuh"

#include <cstring>

namespace kiln::cuda {
namespace {

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
  const int32_t dtype = call.output(0).dtype;
  visit_pointwise(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using Op = pw::Clamp<A>;
    if constexpr (pw::accepts_v<Op::dtypes, A>) {
      const Op op{
          pw::clamp_bound<A>(call.has_attr(0) ? &call.attr(0) : nullptr, pw::lowest_value<A>()),
          pw::clamp_bound<A>(call.has_attr(1) ? &call.attr(1) : nullptr, pw::highest_value<A>())};
      map<T, T>(stream_of(call), Pointwise<T, T, Op>{op, dtype == KILN_BF16}, call.output(0),
                {&call.input(0)});
    } else {
      refuse(call, dtype);
    }
  });
}

// ---- lerp, addcmul, addcdiv ------------------------------------------------------------------
// A ternary functor of kiln/sdk/pointwise.hpp on stored elements of type T, computed in acc_t<T>
// (`bf16`: which format a Half16 holds).
template <class T, class Op>
struct Pointwise3 {
  Op op;
  bool bf16 = false;
  __device__ T operator()(T a, T b, T c) const {
    return store_acc<T>(op(load_acc(a, bf16), load_acc(b, bf16), load_acc(c, bf16)), bf16);
  }
};

// lerp with a number weight (two inputs, the weight the attribute 0).
template <class T>
struct LerpNumber {
  acc_t<T> weight;
  bool bf16 = false;
  __device__ T operator()(T a, T b) const {
    return store_acc<T>(pw::Lerp{}(load_acc(a, bf16), load_acc(b, bf16), weight), bf16);
  }
};

void lerp_kernel(const Call& call) {
  const int32_t dtype = call.output(0).dtype;
  const bool bf16 = dtype == KILN_BF16;
  visit_pointwise(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    if constexpr (pw::accepts_v<pw::Lerp::dtypes, A>) {
      if (call.num_inputs() == 2) {
        const LerpNumber<T> op{call.attr_scalar<A>(0), bf16};
        map<T, T, T>(stream_of(call), op, call.output(0), {&call.input(0), &call.input(1)});
      } else {
        map<T, T, T, T>(stream_of(call), Pointwise3<T, pw::Lerp>{pw::Lerp{}, bf16}, call.output(0),
                        {&call.input(0), &call.input(1), &call.input(2)});
      }
    } else {
      refuse(call, dtype);
    }
  });
}

// addcmul, addcdiv: Op<A>{value}(self, t1, t2), value the attribute 0.
template <template <class> class Op>
void addc_kernel(const Call& call) {
  const int32_t dtype = call.output(0).dtype;
  visit_pointwise(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using F = Op<A>;
    if constexpr (pw::accepts_v<F::dtypes, A>) {
      const F op{call.has_attr(0) ? call.attr_scalar<A>(0) : A(1)};
      map<T, T, T, T>(stream_of(call), Pointwise3<T, F>{op, dtype == KILN_BF16}, call.output(0),
                      {&call.input(0), &call.input(1), &call.input(2)});
    } else {
      refuse(call, dtype);
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
    // stored as bits: one kernel per element size
    using B = pw::bits_t<T>;
    static_assert(sizeof(B) == sizeof(T));
    B bits;
    std::memcpy(&bits, &value, sizeof bits);
    map<B>(stream_of(call), FillOp<B>{bits}, call.output(0));
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
    const OffsetArray<2> off = offsets.at(i);
    store_wide(dst_dtype, dst + off.v[0], load_wide(src_dtype, src + off.v[1]));
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
  t.add("where", kernel<where_kernel>);
  t.add("clamp", kernel<clamp_kernel>);
  t.add("lerp", kernel<lerp_kernel>);
  t.add("addcmul", kernel<addc_kernel<pw::Addcmul>>);
  t.add("addcdiv", kernel<addc_kernel<pw::Addcdiv>>);
}

}  // namespace kiln::cuda
