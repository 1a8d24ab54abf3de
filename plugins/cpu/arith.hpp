// Scalar arithmetic with PyTorch's semantics, shared by the kernel families: integer arithmetic
// that wraps instead of overflowing (two's complement, like PyTorch; signed overflow would be
// undefined behaviour in C++), dtype conversion rules, and scalar attributes.
#pragma once

#include "loops.hpp"

#include <cmath>
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

// NaN test that compiles to nothing for integers.
template <class C>
inline bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return x != x;
  } else {
    return false;
  }
}

// max and min that return a NaN operand (PyTorch's maximum, minimum, amax, amin).
template <class C>
inline C nan_max(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a || b;
  } else {
    return (a > b || is_nan(a)) ? a : b;
  }
}

template <class C>
inline C nan_min(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a && b;
  } else {
    return (a < b || is_nan(a)) ? a : b;
  }
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
