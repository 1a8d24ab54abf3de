// Scalar helpers of the CPU kernel families: dtype conversion rules, scalar attributes and a
// vectorized fold; the scalar formulas themselves are kiln/sdk/pointwise.hpp's (integer arithmetic
// wraps there instead of overflowing: signed overflow would be undefined behaviour in C++).
#pragma once

#include "loops.hpp"

#include <cstring>
#include <string>
#include <type_traits>

namespace kiln::cpu {

// Wrapping integer arithmetic and NaN-aware max/min, shared with every device.
using sdk::pointwise::highest_value;
using sdk::pointwise::is_int_v;
using sdk::pointwise::is_nan;
using sdk::pointwise::lowest_value;
using sdk::pointwise::nan_max;
using sdk::pointwise::nan_min;
using sdk::pointwise::wrap_add;
using sdk::pointwise::wrap_mul;
using sdk::pointwise::wrap_neg;
using sdk::pointwise::wrap_sub;
using sdk::pointwise::wrap_t;

// Converts a compute value to the compute type of D, as copy_ does: to bool is `!= 0`; floating to
// integer truncates toward zero, through int64 for the narrower integers (so -1.0 becomes 255 as
// uint8, as in PyTorch); the rest is static_cast (integer narrowing wraps).
template <class D, class S>
inline compute_t<D> convert(S x) {
  using C = compute_t<D>;
  if constexpr (std::is_same_v<C, S>) {
    return x;
  } else if constexpr (std::is_same_v<C, bool>) {
    return x != S(0);
  } else if constexpr (is_int_v<C> && std::is_floating_point_v<S>) {
    if constexpr (sizeof(C) == 8) {
      return static_cast<C>(x);
    } else {
      return static_cast<C>(static_cast<int64_t>(x));
    }
  } else {
    return static_cast<C>(x);
  }
}

// A scalar attribute (kind I64, BOOL or F64) as the compute type of T.
template <class T>
inline compute_t<T> scalar_attr(const kiln_attr& a) {
  if (a.kind == KILN_ATTR_F64) return convert<T>(a.value.f);
  if (a.kind == KILN_ATTR_I64 || a.kind == KILN_ATTR_BOOL) return convert<T>(a.value.i);
  throw std::invalid_argument(std::string("attribute '") + (a.name ? a.name : "?") +
                              "' is not a scalar (kind " + std::to_string(a.kind) + ")");
}

// 16 bytes of T as a GCC vector: one SSE register on baseline x86-64. Arithmetic, comparisons and
// ?: apply lane by lane, so one templated functor serves scalars and vectors.
template <class T>
struct Vec16 {
  typedef T type __attribute__((vector_size(16)));
  static constexpr int64_t kLanes = 16 / sizeof(T);
};

// f folded over n contiguous values from `init`, four vectors at a time; f must be associative
// and take both T and Vec16<T>::type. GCC does not vectorize selects such as nan_max's on its
// own (it turns them into branches), so reductions that use them come here.
template <class T, class F>
T fold(const T* x, int64_t n, T init, const F& f) {
  using V = typename Vec16<T>::type;
  constexpr int64_t k = Vec16<T>::kLanes;
  V splat{};
  for (int64_t j = 0; j < k; ++j) splat[j] = init;
  V lane[4] = {splat, splat, splat, splat};
  int64_t i = 0;
  for (; i + 4 * k <= n; i += 4 * k) {
    for (int j = 0; j < 4; ++j) {
      V v;
      std::memcpy(&v, x + i + j * k, sizeof v);
      lane[j] = f(lane[j], v);
    }
  }
  lane[0] = f(f(lane[0], lane[1]), f(lane[2], lane[3]));
  T acc = init;
  for (int64_t j = 0; j < k; ++j) acc = f(acc, static_cast<T>(lane[0][j]));
  for (; i < n; ++i) acc = f(acc, x[i]);
  return acc;
}

}  // namespace kiln::cpu
