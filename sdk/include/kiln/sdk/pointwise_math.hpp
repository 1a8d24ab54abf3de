// The scalar formulas of issue 15's binary and ternary math (atan2, logaddexp, logaddexp2, hypot,
// copysign, xlogy; lerp, addcmul, addcdiv), in the form of kiln/sdk/pointwise.hpp, which
// includes this header: See Note [One scalar formula for every device] there. Each follows
// PyTorch's CPU kernel, edge cases included.
#pragma once

#include <kiln/sdk/plugin.h>
#include <kiln/sdk/pointwise_support.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::sdk::pointwise {

// ---- binary ------------------------------------------------------------------------------------

struct Atan2 {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    using std::atan2;
    return atan2(a, b);
  }
};

// log(exp(a) + exp(b)) as max + log1p(exp(-|a - b|)); two equal infinities give themselves.
struct LogAddExp {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    using std::exp, std::fabs, std::log1p;
    if (a == b && is_nan(a - a)) return a;  // both +inf or both -inf
    const C m = a < b ? b : a;
    return m + log1p(exp(-fabs(a - b)));
  }
};

// log2(2^a + 2^b) as max + log1p(2^-|a - b|) / ln 2.
struct LogAddExp2 {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    using std::exp2, std::fabs, std::log1p;
    if (a == b && is_nan(a - a)) return a;
    const C m = a < b ? b : a;
    return m + log1p(exp2(-fabs(a - b))) * C(1.4426950408889634);
  }
};

// sqrt(a^2 + b^2) without overflow or underflow.
struct Hypot {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    using std::hypot;
    return hypot(a, b);
  }
};

// |a| with the sign of b (-0.0 and NaN's sign bit count).
struct Copysign {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    using std::copysign;
    return copysign(a, b);
  }
};

// a * log(b), 0 where a is 0 (unless b is NaN).
struct Xlogy {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b) const {
    using std::log;
    if (is_nan(b)) return b;
    if (a == C(0)) return C(0);
    return a * log(b);
  }
};

// ---- ternary -----------------------------------------------------------------------------------

// lerp(self, end, weight) = self + weight * (end - self), computed from the nearer end
// (end - (end - self) * (1 - weight) for |weight| >= 0.5), as PyTorch, so weight 1 gives end.
struct Lerp {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C self, C end, C weight) const {
    using std::fabs;
    return fabs(weight) < C(0.5) ? self + weight * (end - self)
                                 : end - (end - self) * (C(1) - weight);
  }
};

// addcmul(self, t1, t2; value) = self + value * t1 * t2 (the attribute 0); integers wrap.
template <class C>
struct Addcmul {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  C value;
  KILN_HOST_DEVICE C operator()(C self, C t1, C t2) const {
    return wrap_add(self, wrap_mul(wrap_mul(value, t1), t2));
  }
};

// addcdiv(self, t1, t2; value) = self + value * t1 / t2 (the attribute 0); floating only (core
// refuses integer division, as PyTorch).
template <class C>
struct Addcdiv {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C value;
  KILN_HOST_DEVICE C operator()(C self, C t1, C t2) const { return self + value * t1 / t2; }
};

}  // namespace kiln::sdk::pointwise
