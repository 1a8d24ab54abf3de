// The element-wise reductions of the gloo backend, one per (dtype, kiln_reduce_op): gloo's
// all-reduce calls them on pieces of the buffers. float16 and bfloat16 reduce through float and
// round each step, as PyTorch's gloo backend does; bool reduces as "or" (SUM, MAX) and "and"
// (PRODUCT, MIN).
#pragma once

#include <kiln/sdk/half.hpp>
#include <kiln/sdk/plugin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace kiln_gloo {

using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

template <class T, class Op>
ReduceFn elementwise(Op op) {
  return [op](void* out, const void* a, const void* b, size_t n) {
    T* o = static_cast<T*>(out);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = op(x[i], y[i]);
  };
}

// S: the storage type; C: the type the arithmetic runs in.
template <class S, class C>
ReduceFn reduction(int32_t op) {
  switch (op) {
    case KILN_REDUCE_MIN:
      return elementwise<S>([](S a, S b) { return S(std::min<C>(C(a), C(b))); });
    case KILN_REDUCE_MAX:
      return elementwise<S>([](S a, S b) { return S(std::max<C>(C(a), C(b))); });
    case KILN_REDUCE_PRODUCT: return elementwise<S>([](S a, S b) { return S(C(a) * C(b)); });
    default:  // SUM, and AVG's sum (divided afterwards)
      return elementwise<S>([](S a, S b) { return S(C(a) + C(b)); });
  }
}

inline ReduceFn bool_reduction(int32_t op) {
  if (op == KILN_REDUCE_PRODUCT || op == KILN_REDUCE_MIN) {
    return elementwise<uint8_t>([](uint8_t a, uint8_t b) { return uint8_t(a && b); });
  }
  return elementwise<uint8_t>([](uint8_t a, uint8_t b) { return uint8_t(a || b); });
}

// The reduction of `op` on `dtype`; empty for an unknown dtype.
inline ReduceFn reduction_for(int32_t dtype, int32_t op) {
  switch (dtype) {
    case KILN_BOOL: return bool_reduction(op);
    case KILN_U8: return reduction<uint8_t, uint8_t>(op);
    case KILN_I8: return reduction<int8_t, int8_t>(op);
    case KILN_I16: return reduction<int16_t, int16_t>(op);
    case KILN_I32: return reduction<int32_t, int32_t>(op);
    case KILN_I64: return reduction<int64_t, int64_t>(op);
    case KILN_F16: return reduction<kiln::sdk::Half, float>(op);
    case KILN_BF16: return reduction<kiln::sdk::BFloat16, float>(op);
    case KILN_F32: return reduction<float, float>(op);
    case KILN_F64: return reduction<double, double>(op);
    default: return {};
  }
}

// AVG: divides the n elements at p by `size` (floating dtypes).
inline void divide(void* p, int32_t dtype, size_t n, int size) {
  auto each = [&](auto* v) {
    using S = std::remove_pointer_t<decltype(v)>;
    for (size_t i = 0; i < n; ++i) v[i] = S(float(v[i]) / float(size));
  };
  if (dtype == KILN_F64) {
    double* v = static_cast<double*>(p);
    for (size_t i = 0; i < n; ++i) v[i] /= size;
  } else if (dtype == KILN_F32) {
    float* v = static_cast<float*>(p);
    for (size_t i = 0; i < n; ++i) v[i] /= static_cast<float>(size);
  } else if (dtype == KILN_F16) {
    each(static_cast<kiln::sdk::Half*>(p));
  } else if (dtype == KILN_BF16) {
    each(static_cast<kiln::sdk::BFloat16*>(p));
  }
}

inline size_t dtype_size(int32_t dtype) {
  static const size_t sizes[KILN_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return dtype >= 0 && dtype < KILN_NUM_DTYPES ? sizes[dtype] : 0;
}

inline const char* dtype_name(int32_t dtype) {
  static const char* names[KILN_NUM_DTYPES] = {"bool",    "uint8",  "int8",    "int16",
                                               "int32",   "int64",  "float16", "bfloat16",
                                               "float32", "float64"};
  return dtype >= 0 && dtype < KILN_NUM_DTYPES ? names[dtype] : "unknown";
}

}  // namespace kiln_gloo
