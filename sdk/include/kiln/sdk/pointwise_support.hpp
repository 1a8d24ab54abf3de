// The helpers of kiln/sdk/pointwise.hpp's functors, host and CUDA device code alike: the
// KILN_HOST_DEVICE marker, dtype sets, data-dependent error codes, integer arithmetic that wraps,
// NaN-aware max/min and the bit types where() moves. See Note [One scalar formula for every
// device] in kiln/sdk/pointwise.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>

#if defined(__CUDACC__)
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif

namespace kiln::sdk::pointwise {

// ---- dtype sets --------------------------------------------------------------------------------

enum class Dtypes { all, numeric, floating, integral_bool };  // numeric: all but bool

// Whether an operator taking the dtypes S accepts a dtype of compute type C.
template <Dtypes S, class C>
constexpr bool accepts_v = S == Dtypes::all || (S == Dtypes::numeric && !std::is_same_v<C, bool>) ||
                           (S == Dtypes::floating && std::is_floating_point_v<C>) ||
                           (S == Dtypes::integral_bool && !std::is_floating_point_v<C>);

// Storage sharing, which lets a plugin build fewer kernels (the CUDA plugin's pointwise.cuh):
// - sign_blind: on integers the result's bits depend only on the operands' bits, wrapping as two's
//   complement does (negation, addition, multiplication, bitwise and equality operators), so a
//   signed integer type may run as the unsigned type of its width.
// - bool_as_uint8: operands that are 0 or 1 give 0 or 1 (or a bool) as bool's operator does, so
//   bool may run as uint8.
// - integers_unchanged: the operator maps every integer to itself (floor, ceil, round, trunc), so
//   a plugin may copy integer tensors, as PyTorch's CUDA build does (its kernels are floating).
// And one about cost:
// - costly: the formula costs far more than loading and storing its operands (a libm function
//   with range reduction or a series), so wide memory accesses gain it nothing: the CUDA plugin
//   builds no vectorized path for it, which would inline the formula four more times.
// A functor declares them as `static constexpr bool sign_blind = true;` and so on.
template <class Op>
constexpr bool costly_v = requires {
  requires Op::costly;
};
template <class Op>
constexpr bool integers_unchanged_v = requires {
  requires Op::integers_unchanged;
};
template <class Op>
constexpr bool sign_blind_v = requires {
  requires Op::sign_blind;
};
template <class Op>
constexpr bool bool_as_uint8_v = requires {
  requires Op::bool_as_uint8;
};

// ---- data-dependent errors ---------------------------------------------------------------------

enum class Error : int { none = 0, zero_division = 1, negative_power = 2 };

// Whether Op::error can report anything for compute type C (Op declares `can_fail<C>`).
template <class Op, class C>
constexpr bool can_fail_v = [] {
  if constexpr (requires { Op::template can_fail<C>; }) {
    return Op::template can_fail<C>;
  } else {
    return false;
  }
}();

// Op::error(a, b), or none for a functor without one. Kernels call this rather than Op::error
// directly: clang 14 checks the body of a lambda in a discarded `if constexpr` branch of a
// generic lambda, where a direct Op::error fails to compile for functors that cannot fail.
template <class Op, class C>
KILN_HOST_DEVICE constexpr Error error_of(C a, C b) {
  if constexpr (requires { Op::error(a, b); }) {
    return Op::error(a, b);
  } else {
    return Error::none;
  }
}

// Throws the exception PyTorch raises for e (the CPU plugin; the CUDA plugin after a launch).
inline void throw_if_error(Error e) {
  if (e == Error::zero_division) throw std::domain_error("ZeroDivisionError");
  if (e == Error::negative_power) {
    throw std::domain_error("Integers to negative integer powers are not allowed.");
  }
}

// ---- integer arithmetic that wraps -------------------------------------------------------------

template <class T>
constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The unsigned type integer arithmetic on T wraps in: at least 32 bits, so that the usual integer
// promotions never turn it back into a signed int that could overflow.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <class T>
KILN_HOST_DEVICE inline T wrap_add(T a, T b) {
  if constexpr (is_int_v<T>) {
    return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
  } else {
    return a + b;
  }
}

template <class T>
KILN_HOST_DEVICE inline T wrap_sub(T a, T b) {
  if constexpr (is_int_v<T>) {
    return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
  } else {
    return a - b;
  }
}

template <class T>
KILN_HOST_DEVICE inline T wrap_mul(T a, T b) {
  if constexpr (is_int_v<T>) {
    return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
  } else {
    return a * b;
  }
}

template <class T>
KILN_HOST_DEVICE inline T wrap_neg(T a) {
  if constexpr (is_int_v<T>) {
    return wrap_sub(T(0), a);
  } else {
    return -a;  // not 0 - a: -(+0.0) is -0.0
  }
}

// ---- NaN-aware helpers (scalars and GCC vectors) -----------------------------------------------

// NaN test that compiles to nothing for integers; for a GCC vector it returns a lane mask.
template <class C>
KILN_HOST_DEVICE inline auto is_nan(C x) {
  if constexpr (std::is_integral_v<C>) {
    return false;
  } else {
    return x != x;
  }
}

// max and min that return a NaN operand (PyTorch's maximum, minimum, amax, amin). Conditions are
// combined with | rather than ||, which would branch.
template <class C>
KILN_HOST_DEVICE inline C nan_max(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a | b;
  } else {
    return ((a > b) | is_nan(a)) ? a : b;
  }
}

template <class C>
KILN_HOST_DEVICE inline C nan_min(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a & b;
  } else {
    return ((a < b) | is_nan(a)) ? a : b;
  }
}

// The smallest and largest values of a compute type (infinities for floating types).
template <class C>
KILN_HOST_DEVICE constexpr C lowest_value() {
  if constexpr (std::is_floating_point_v<C>) {
    return -std::numeric_limits<C>::infinity();
  } else {
    return std::numeric_limits<C>::lowest();
  }
}

template <class C>
KILN_HOST_DEVICE constexpr C highest_value() {
  if constexpr (std::is_floating_point_v<C>) {
    return std::numeric_limits<C>::infinity();
  } else {
    return std::numeric_limits<C>::max();
  }
}

// An unsigned integer type with the size of T, for moving elements without looking at them.
template <size_t Size>
struct bits_of;
template <>
struct bits_of<1> {
  using type = uint8_t;
};
template <>
struct bits_of<2> {
  using type = uint16_t;
};
template <>
struct bits_of<4> {
  using type = uint32_t;
};
template <>
struct bits_of<8> {
  using type = uint64_t;
};
template <class T>
using bits_t = typename bits_of<sizeof(T)>::type;

}  // namespace kiln::sdk::pointwise
