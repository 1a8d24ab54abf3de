// The scalar formulas of kiln's pointwise operators, written once for every device: each operator
// is a functor whose call operator takes and returns compute-type values (float for the 16-bit
// floats, the type itself otherwise; see compute_t in kiln/sdk/kernel.hpp). A plugin's loops
// convert stored elements to the compute type, call the functor and convert back; the CPU plugin
// vectorizes them, the CUDA plugin instantiates one kernel per functor, the "ref" example calls
// them in plain loops. Every formula follows PyTorch, edge cases included.
//
// Note [One scalar formula for every device]
// - A functor has a templated `operator()` (KILN_HOST_DEVICE: host and CUDA device code) over
//   the compute type C, and `static constexpr Dtypes dtypes`, the dtypes the operator takes
//   (tested on the compute type with accepts_v, so a plugin instantiates nothing else).
// - Integer arithmetic wraps (two's complement, like PyTorch) instead of overflowing.
// - Errors that only the data shows (an integer division by zero, an integer to a negative
//   power) come from the functor's `static Error error(a, b)`, present where `can_fail_v<Op, C>`
//   holds. A loop calls it before the formula: the CPU plugin throws (throw_if_error), the CUDA
//   plugin records the code in a device flag and throws after the launch. The formula itself is
//   total: where error() reports one, it returns 0.
// - The formulas avoid branches where a select does (`|` rather than `||`), so that compilers
//   vectorize the CPU plugin's loops; nan_max, nan_min and is_nan also take GCC vectors.
// - Adding an operator: one functor here (or in the family headers included below), one
//   registration line per plugin.
#pragma once

#include <kiln/sdk/plugin.h>
#include <kiln/sdk/pointwise_activation.hpp>  // erfinv, silu, gelu, elu, ...; clamp_bound
#include <kiln/sdk/pointwise_compare.hpp>     // eq, ne, lt, ..., logical_and, ...
#include <kiln/sdk/pointwise_math.hpp>        // atan2, hypot, lerp, addcmul, ...
#include <kiln/sdk/pointwise_support.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln::sdk::pointwise {

// ---- unary -------------------------------------------------------------------------------------

struct Neg {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  static constexpr bool sign_blind = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    return wrap_neg(x);
  }
};

struct Abs {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_floating_point_v<C>) {
      using std::fabs;
      return fabs(x);  // abs(-0.0) is +0.0
    } else {
      return x < 0 ? wrap_neg(x) : x;  // abs(INT_MIN) wraps to INT_MIN, as in PyTorch
    }
  }
};

struct Sign {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool> || std::is_unsigned_v<C>) {
      return x > C(0) ? C(1) : C(0);
    } else if constexpr (std::is_floating_point_v<C>) {
      return x > 0 ? C(1) : (x < 0 ? C(-1) : C(0));  // NaN and -0.0 give +0.0, as in PyTorch
    } else {
      return static_cast<C>((x > 0) - (x < 0));
    }
  }
};

struct Relu {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return x < C(0) ? C(0) : x;  // NaN stays NaN, -0.0 stays -0.0
    }
  }
};

struct BitwiseNot {
  static constexpr Dtypes dtypes = Dtypes::integral_bool;
  static constexpr bool sign_blind = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>) {
      return !x;
    } else {
      return static_cast<C>(~x);
    }
  }
};

// Any dtype in, bool out: nonzero (NaN included) is true.
struct LogicalNot {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C x) const {
    return !(x != C(0));
  }
};

// Floating-point functions: `using std::f; f(x)` resolves to libm on the host and to CUDA's
// overloads in device code.
struct Exp {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::exp;
    return exp(x);
  }
};

struct Log {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::log;
    return log(x);
  }
};

struct Log1p {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::log1p;
    return log1p(x);
  }
};

struct Expm1 {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::expm1;
    return expm1(x);
  }
};

struct Sqrt {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::sqrt;
    return sqrt(x);
  }
};

struct Rsqrt {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::sqrt;
    return C(1) / sqrt(x);
  }
};

struct Sin {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::sin;
    return sin(x);
  }
};

struct Cos {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::cos;
    return cos(x);
  }
};

struct Tanh {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::tanh;
    return tanh(x);
  }
};

struct Sigmoid {
  static constexpr Dtypes dtypes = Dtypes::floating;
  // exp(-x) overflows to inf for very negative x, which gives the right limit 0; no NaN appears.
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::exp;
    return C(1) / (C(1) + exp(-x));
  }
};

// The libm functions of one argument, one functor each: `using std::f; return f(x);`.
#define KILN_POINTWISE_LIBM(Name, f)                   \
  struct Name {                                        \
    static constexpr Dtypes dtypes = Dtypes::floating; \
    static constexpr bool costly = true;               \
    template <class C>                                 \
    KILN_HOST_DEVICE C operator()(C x) const {         \
      using std::f;                                    \
      return f(x);                                     \
    }                                                  \
  }
KILN_POINTWISE_LIBM(Log2, log2);
KILN_POINTWISE_LIBM(Log10, log10);
KILN_POINTWISE_LIBM(Exp2, exp2);
KILN_POINTWISE_LIBM(Tan, tan);
KILN_POINTWISE_LIBM(Sinh, sinh);
KILN_POINTWISE_LIBM(Cosh, cosh);
KILN_POINTWISE_LIBM(Asin, asin);
KILN_POINTWISE_LIBM(Acos, acos);
KILN_POINTWISE_LIBM(Atan, atan);
KILN_POINTWISE_LIBM(Asinh, asinh);
KILN_POINTWISE_LIBM(Acosh, acosh);
KILN_POINTWISE_LIBM(Atanh, atanh);
KILN_POINTWISE_LIBM(Erf, erf);
KILN_POINTWISE_LIBM(Erfc, erfc);
#undef KILN_POINTWISE_LIBM

// Rounding: integers are their own floor, ceil, round and trunc.
#define KILN_POINTWISE_ROUNDING(Name, f)              \
  struct Name {                                       \
    static constexpr Dtypes dtypes = Dtypes::numeric; \
    static constexpr bool integers_unchanged = true;  \
    template <class C>                                \
    KILN_HOST_DEVICE C operator()(C x) const {        \
      if constexpr (std::is_floating_point_v<C>) {    \
        using std::f;                                 \
        return f(x);                                  \
      } else {                                        \
        return x;                                     \
      }                                               \
    }                                                 \
  }
KILN_POINTWISE_ROUNDING(Floor, floor);
KILN_POINTWISE_ROUNDING(Ceil, ceil);
KILN_POINTWISE_ROUNDING(Trunc, trunc);
KILN_POINTWISE_ROUNDING(Round, nearbyint);  // halves to even, as PyTorch
#undef KILN_POINTWISE_ROUNDING

// x - trunc(x), with the sign of x.
struct Frac {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::trunc;
    return x - trunc(x);
  }
};

struct Reciprocal {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    return C(1) / x;
  }
};

// ---- binary arithmetic -------------------------------------------------------------------------

// a + b; on bool, "or".
struct Add {
  static constexpr Dtypes dtypes = Dtypes::all;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a | b;
    } else {
      return wrap_add(a, b);
    }
  }
};

// a - b.
struct Sub {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    return wrap_sub(a, b);
  }
};

// add(a, b, alpha) = a + alpha * b; sub is add with -alpha. On bool: a or (alpha and b).
template <class C>
struct AddScaled {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool sign_blind = true;
  C alpha;
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a | (alpha & b);
    } else {
      return wrap_add(a, wrap_mul(alpha, b));
    }
  }
};

struct Mul {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a & b;
    } else {
      return wrap_mul(a, b);
    }
  }
};

struct Div {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    return a / b;
  }
};

// The integer division family reports a zero divisor.
struct IntegerDivision {
  template <class C>
  static constexpr bool can_fail = is_int_v<C>;
  template <class C>
  KILN_HOST_DEVICE static Error error(C, C b) {
    return b == C(0) ? Error::zero_division : Error::none;
  }
};

// Python's //: rounds toward negative infinity.
struct FloorDivide : IntegerDivision {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {  // PyTorch's div_floor_floating
      using std::copysign;
      using std::floor;
      using std::fmod;
      if (b == 0) return a / b;
      C mod = fmod(a, b);
      C div = (a - mod) / b;
      if (mod != 0 && (b < 0) != (mod < 0)) div -= C(1);
      if (div == 0) return copysign(C(0), a / b);
      C floordiv = floor(div);
      if (div - floordiv > C(0.5)) floordiv += C(1);
      return floordiv;
    } else {
      if (b == 0) return C(0);  // error() reports it
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return wrap_neg(a);  // INT_MIN / -1 would trap
        C q = static_cast<C>(a / b);
        if (static_cast<C>(a % b) != 0 && (a < 0) != (b < 0)) --q;
        return q;
      } else {
        return static_cast<C>(a / b);
      }
    }
  }
};

// Python's %: the result has the sign of b.
struct Remainder : IntegerDivision {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      using std::fmod;
      C mod = fmod(a, b);
      if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
      return mod;
    } else {
      if (b == 0) return C(0);  // error() reports it
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return C(0);
        C r = static_cast<C>(a % b);
        if (r != 0 && (r < 0) != (b < 0)) r = static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    }
  }
};

// C's fmod: the result has the sign of a.
struct Fmod : IntegerDivision {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      using std::fmod;
      return fmod(a, b);
    } else {
      if (b == 0) return C(0);  // error() reports it
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return C(0);
      }
      return static_cast<C>(a % b);
    }
  }
};

// base ** exponent; integers by square and multiply, wrapping.
struct Pow {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  static constexpr bool costly = true;
  template <class C>
  static constexpr bool can_fail = is_int_v<C>&& std::is_signed_v<C>;
  template <class C>
  KILN_HOST_DEVICE static Error error(C, C exponent) {
    return exponent < C(0) ? Error::negative_power : Error::none;
  }

  template <class C>
  KILN_HOST_DEVICE C operator()(C base, C exponent) const {
    if constexpr (std::is_floating_point_v<C>) {
      using std::pow;
      return pow(base, exponent);
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (exponent < 0) return C(0);  // error() reports it
      }
      wrap_t<C> result = 1, b = static_cast<wrap_t<C>>(base);
      for (uint64_t e = static_cast<uint64_t>(exponent); e != 0; e >>= 1) {
        if (e & 1) result *= b;
        b *= b;
      }
      return static_cast<C>(result);
    }
  }
};

// maximum and minimum: a NaN operand wins; on bool, "or" and "and".
struct Maximum {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    return nan_max(a, b);
  }
};

struct Minimum {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    return nan_min(a, b);
  }
};

struct BitwiseAnd {
  static constexpr Dtypes dtypes = Dtypes::integral_bool;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    return static_cast<C>(a & b);
  }
};

struct BitwiseOr {
  static constexpr Dtypes dtypes = Dtypes::integral_bool;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    return static_cast<C>(a | b);
  }
};

struct BitwiseXor {
  static constexpr Dtypes dtypes = Dtypes::integral_bool;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    return static_cast<C>(a ^ b);
  }
};

// ---- ternary -----------------------------------------------------------------------------------

// where(cond, a, b) on the elements' bits (B: the unsigned integer of the element's size), so no
// conversion touches a NaN's payload; a mask instead of a branch, so the CPU loop vectorizes and
// a random condition costs no mispredictions.
struct Where {
  static constexpr Dtypes dtypes = Dtypes::all;
  template <class B>
  KILN_HOST_DEVICE B operator()(bool c, B a, B b) const {
    static_assert(std::is_unsigned_v<B>, "where works on the elements' bits");
    const B mask = static_cast<B>(B(0) - static_cast<B>(c));
    return static_cast<B>((a & mask) | (b & static_cast<B>(~mask)));
  }
};

// clamp(x, lo, hi) = min(max(x, lo), hi); an absent bound is lowest_value or highest_value. A NaN
// x or bound gives NaN, and lo > hi gives hi, as in PyTorch. The selects are the plain ones GCC
// turns into max/min instructions; a NaN bound enters through `poison` (0, or NaN), since
// y - 0 is y for every y, -0.0 included.
template <class C>
struct Clamp {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  C lo, hi, poison;

  KILN_HOST_DEVICE Clamp(C lo_, C hi_) : lo(lo_), hi(hi_), poison(0) {
    if constexpr (std::is_floating_point_v<C>) {
      if (is_nan(lo) || is_nan(hi)) poison = std::numeric_limits<C>::quiet_NaN();
    }
  }

  KILN_HOST_DEVICE C operator()(C x) const {
    C y = x < lo ? lo : x;
    y = y > hi ? hi : y;
    if constexpr (std::is_floating_point_v<C>) y = y - poison;
    return is_nan(x) ? x : y;
  }
};

}  // namespace kiln::sdk::pointwise
