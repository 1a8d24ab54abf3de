// Binary elementwise kernels with PyTorch's semantics: arithmetic (integers wrap), Python-style
// floor division and remainder, pow, NaN-propagating maximum/minimum, bitwise operators.
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"

#include <cmath>
#include <stdexcept>

namespace kiln::cpu {
namespace {

using sdk::kernel;

// out = f(a, b) with a, b and out of dtype T.
template <class T, class F>
void binary_map(const Call& call, const F& f, int64_t grain = kGrain) {
  map<T, T, T>(f, call.output(0), {&call.input(0), &call.input(1)}, grain);
}

// out = Op::apply(a, b) for the dtypes in S.
template <class Op, Dtypes S, int64_t Grain = kGrain>
void binary_kernel(const Call& call) {
  visit<S>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_map<T>(call, [](C a, C b) { return Op::apply(a, b); }, Grain);
  });
}

// add: a + alpha * b; sub: a - alpha * b. bool supports add only (a or (alpha and b)).
template <bool Subtract>
void add_sub_kernel(const Call& call) {
  visit<Dtypes::all>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      if (Subtract) throw_unsupported(KILN_BOOL);
      bool alpha = call.has_attr(0) ? scalar_attr<bool>(call.attr(0)) : true;
      if (alpha) {
        binary_map<T>(call, [](bool a, bool b) { return a | b; });
      } else {
        binary_map<T>(call, [](bool a, bool) { return a; });
      }
    } else {
      C alpha = call.has_attr(0) ? scalar_attr<T>(call.attr(0)) : C(1);
      if (Subtract) alpha = wrap_neg(alpha);
      if (alpha == C(1)) {
        binary_map<T>(call, [](C a, C b) { return wrap_add(a, b); });
      } else if (alpha == wrap_neg(C(1))) {
        binary_map<T>(call, [](C a, C b) { return wrap_sub(a, b); });
      } else {
        binary_map<T>(call, [alpha](C a, C b) { return wrap_add(a, wrap_mul(alpha, b)); });
      }
    }
  });
}

struct Mul {
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) {
      return a & b;
    } else {
      return wrap_mul(a, b);
    }
  }
};

struct Div {
  template <class C> static C apply(C a, C b) { return a / b; }
};

[[noreturn]] void throw_zero_division() { throw std::domain_error("ZeroDivisionError"); }

struct FloorDivide {
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {  // PyTorch's div_floor_floating
      if (b == 0) return a / b;
      C mod = std::fmod(a, b);
      C div = (a - mod) / b;
      if (mod != 0 && (b < 0) != (mod < 0)) div -= C(1);
      if (div == 0) return std::copysign(C(0), a / b);
      C floordiv = std::floor(div);
      if (div - floordiv > C(0.5)) floordiv += C(1);
      return floordiv;
    } else {
      if (b == 0) throw_zero_division();
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

struct Remainder {  // the sign of b, like Python's %
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      C mod = std::fmod(a, b);
      if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
      return mod;
    } else {
      if (b == 0) throw_zero_division();
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

struct Fmod {  // the sign of a, like C's fmod
  template <class C>
  static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      return std::fmod(a, b);
    } else {
      if (b == 0) throw_zero_division();
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return C(0);
      }
      return static_cast<C>(a % b);
    }
  }
};

struct Pow {
  template <class C>
  static C apply(C base, C exponent) {
    if constexpr (std::is_floating_point_v<C>) {
      return std::pow(base, exponent);
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (exponent < 0) {
          throw std::domain_error("Integers to negative integer powers are not allowed.");
        }
      }
      wrap_t<C> result = 1, b = static_cast<wrap_t<C>>(base);  // square and multiply, wrapping
      for (uint64_t e = static_cast<uint64_t>(exponent); e != 0; e >>= 1) {
        if (e & 1) result *= b;
        b *= b;
      }
      return static_cast<C>(result);
    }
  }
};

struct Maximum {
  template <class C> static C apply(C a, C b) { return nan_max(a, b); }
};
struct Minimum {
  template <class C> static C apply(C a, C b) { return nan_min(a, b); }
};

struct BitwiseAnd {
  template <class C> static C apply(C a, C b) { return static_cast<C>(a & b); }
};
struct BitwiseOr {
  template <class C> static C apply(C a, C b) { return static_cast<C>(a | b); }
};
struct BitwiseXor {
  template <class C> static C apply(C a, C b) { return static_cast<C>(a ^ b); }
};

}  // namespace

void register_binary(KernelTable& table) {
  table.add("add", kernel<add_sub_kernel<false>>);
  table.add("sub", kernel<add_sub_kernel<true>>);
  table.add("mul", kernel<binary_kernel<Mul, Dtypes::all>>);
  table.add("div", kernel<binary_kernel<Div, Dtypes::floating>>);
  table.add("floor_divide", kernel<binary_kernel<FloorDivide, Dtypes::numeric, kGrainHeavy>>);
  table.add("remainder", kernel<binary_kernel<Remainder, Dtypes::numeric, kGrainHeavy>>);
  table.add("fmod", kernel<binary_kernel<Fmod, Dtypes::numeric, kGrainHeavy>>);
  table.add("pow", kernel<binary_kernel<Pow, Dtypes::numeric, kGrainHeavy>>);
  table.add("maximum", kernel<binary_kernel<Maximum, Dtypes::all>>);
  table.add("minimum", kernel<binary_kernel<Minimum, Dtypes::all>>);
  table.add("bitwise_and", kernel<binary_kernel<BitwiseAnd, Dtypes::integral_bool>>);
  table.add("bitwise_or", kernel<binary_kernel<BitwiseOr, Dtypes::integral_bool>>);
  table.add("bitwise_xor", kernel<binary_kernel<BitwiseXor, Dtypes::integral_bool>>);
}

}  // namespace kiln::cpu
