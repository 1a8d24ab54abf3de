// Scalar arithmetic with PyTorch's semantics, shared by the kernel families: integer arithmetic
// that wraps instead of overflowing (two's complement, like PyTorch; signed overflow would be
// undefined behaviour in C++), dtype conversion rules, and scalar attributes.
#pragma once

#include "loops.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace kiln::cpu {

template <class T>
constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The unsigned type integer arithmetic on T wraps in: at least 32 bits, so that the usual integer
// promotions never turn it back into a signed int that could overflow.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <class T>
inline T wrap_add(T a, T b) {
  if constexpr (is_int_v<T>) {
    return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
  } else {
    return a + b;
  }
}

template <class T>
inline T wrap_sub(T a, T b) {
  if constexpr (is_int_v<T>) {
    return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
  } else {
    return a - b;
  }
}

template <class T>
inline T wrap_mul(T a, T b) {
  if constexpr (is_int_v<T>) {
    return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
  } else {
    return a * b;
  }
}

template <class T>
inline T wrap_neg(T a) {
  if constexpr (is_int_v<T>) {
    return wrap_sub(T(0), a);
  } else {
    return -a;  // not 0 - a: -(+0.0) is -0.0
  }
}

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

// NaN test that compiles to nothing for integers. Also takes a GCC vector (see Vec16), for which
// it returns a lane mask.
template <class C>
inline auto is_nan(C x) {
  if constexpr (std::is_integral_v<C>) {
    return false;
  } else {
    return x != x;
  }
}

// max and min that return a NaN operand (PyTorch's maximum, minimum, amax, amin), for scalars and
// GCC vectors alike. Conditions are combined with | rather than ||, which would branch.
template <class C>
inline C nan_max(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a | b;
  } else {
    return ((a > b) | is_nan(a)) ? a : b;
  }
}

template <class C>
inline C nan_min(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a & b;
  } else {
    return ((a < b) | is_nan(a)) ? a : b;
  }
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

// The smallest and largest values of a compute type (infinities for floating types).
template <class C>
constexpr C lowest_value() {
  if constexpr (std::is_floating_point_v<C>) {
    return -std::numeric_limits<C>::infinity();
  } else {
    return std::numeric_limits<C>::lowest();
  }
}

template <class C>
constexpr C highest_value() {
  if constexpr (std::is_floating_point_v<C>) {
    return std::numeric_limits<C>::infinity();
  } else {
    return std::numeric_limits<C>::max();
  }
}

}  // namespace kiln::cpu
