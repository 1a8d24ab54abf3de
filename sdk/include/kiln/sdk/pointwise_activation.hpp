// The scalar formulas of kiln's activations and of the unary functions added with them (erfinv,
// silu, mish; gelu, leaky_relu, the shrinks; elu, threshold, hardswish, hardsigmoid), in the
// form of kiln/sdk/pointwise.hpp, which includes this header: See Note [One scalar formula for
// every device] there. A functor with parameters is a template over the compute type C whose
// members are the kernel's attributes in order, each read with clamp_bound.
#pragma once

#include <kiln/sdk/plugin.h>
#include <kiln/sdk/pointwise_support.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::sdk::pointwise {

// A clamp bound given as a scalar attribute (kind I64, BOOL or F64; null: absent) as C. Integer
// bounds outside C's range saturate (clamping uint8 at -2 changes nothing) instead of wrapping.
template <class C>
C clamp_bound(const kiln_attr* a, C absent) {
  if (a == nullptr || a->kind == KILN_ATTR_NONE) return absent;
  const bool is_f64 = a->kind == KILN_ATTR_F64;
  if constexpr (is_int_v<C>) {
    const double v = is_f64 ? a->value.f : static_cast<double>(a->value.i);
    if (v <= static_cast<double>(lowest_value<C>())) return lowest_value<C>();
    if (v >= static_cast<double>(highest_value<C>())) return highest_value<C>();
  }
  return is_f64 ? static_cast<C>(a->value.f) : static_cast<C>(a->value.i);
}

// The inverse of erf: on the host, Giles' single-precision approximation ("Approximating the
// erfinv function", GPU Computing Gems) refined by two Newton steps in double, which reach
// double precision; on CUDA devices, CUDA's erfinv. erfinv(+-1) = +-inf, NaN outside [-1, 1].
struct Erfinv {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
#ifdef __CUDA_ARCH__
    return erfinv(x);
#else
    using std::erf, std::exp, std::fabs, std::log, std::sqrt;
    const double a = static_cast<double>(x);
    if (!(fabs(a) < 1.0)) {  // NaN too
      return fabs(a) == 1.0 ? static_cast<C>(a * std::numeric_limits<double>::infinity())
                            : std::numeric_limits<C>::quiet_NaN();
    }
    double w = -log((1.0 - a) * (1.0 + a)), p;
    if (w < 5.0) {
      w -= 2.5;
      p = 2.81022636e-08;
      for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                       -0.00125372503, -0.00417768164, 0.246640727, 1.50140941}) {
        p = c + p * w;
      }
    } else {
      w = sqrt(w) - 3.0;
      p = -0.000200214257;
      for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                       0.00943887047, 1.00167406, 2.83297682}) {
        p = c + p * w;
      }
    }
    double y = p * a;
    constexpr double kTwoOverSqrtPi = 1.1283791670955126;
    for (int step = 0; step < 2; ++step) y -= (erf(y) - a) / (kTwoOverSqrtPi * exp(-y * y));
    return static_cast<C>(y);
#endif
  }
};

// x * sigmoid(x) (silu, "swish"); NaN at -inf, as PyTorch.
struct Silu {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::exp;
    return x / (C(1) + exp(-x));
  }
};

// x * tanh(softplus(x)).
struct Mish {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::exp, std::log1p, std::tanh;
    return x * tanh(log1p(exp(x)));
  }
};

// sin(pi x) / (pi x), 1 at 0; as PyTorch, pi x is rounded to C before sin and the division.
struct Sinc {
  static constexpr Dtypes dtypes = Dtypes::floating;
  static constexpr bool costly = true;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::sin;
    const C product = C(3.14159265358979323846) * x;
    return x == C(0) ? C(1) : sin(product) / product;
  }
};

// ---- unary with a scalar parameter (the kernel's attribute 0; see clamp_bound) ----------------

// gelu: x * Phi(x) with the normal CDF Phi from erf (`approximate` 0), or the tanh approximation
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) (`approximate` nonzero), as PyTorch.
template <class C>
struct Gelu {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C approximate;
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::erf, std::tanh;
    if (approximate != C(0)) {
      const C inner = C(0.7978845608028654) * (x + C(0.044715) * x * x * x);
      return C(0.5) * x * (C(1) + tanh(inner));
    }
    return x * C(0.5) * (C(1) + erf(x * C(0.7071067811865476)));
  }
};

// x for x > 0, negative_slope * x otherwise (NaN stays NaN).
template <class C>
struct LeakyRelu {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C negative_slope;
  KILN_HOST_DEVICE C operator()(C x) const { return x > C(0) ? x : x * negative_slope; }
};

// 0 for -lambd <= x <= lambd, x otherwise.
template <class C>
struct Hardshrink {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C lambd;
  KILN_HOST_DEVICE C operator()(C x) const { return ((x >= -lambd) & (x <= lambd)) ? C(0) : x; }
};

// x - lambd above lambd, x + lambd below -lambd, 0 between.
template <class C>
struct Softshrink {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C lambd;
  KILN_HOST_DEVICE C operator()(C x) const {
    return x > lambd ? x - lambd : (x < -lambd ? x + lambd : C(0));
  }
};

// ---- activations with several parameters (attributes 0, 1, 2) ---------------------------------

// gelu_backward(g, x; approximate): g times gelu's derivative, Phi(x) + x phi(x) (`approximate`
// 0), or the derivative of the tanh approximation (nonzero), as PyTorch's GeluBackward.
template <class C>
struct GeluBackward {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C approximate;
  KILN_HOST_DEVICE C operator()(C g, C x) const {
    using std::erf, std::exp, std::tanh;
    if (approximate != C(0)) {
      const C x_sq = x * x;
      const C t = tanh(C(0.7978845608028654) * (x + C(0.044715) * x_sq * x));
      const C slope = C(0.7978845608028654) * (C(1) + C(3 * 0.044715) * x_sq);
      return g * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * slope);
    }
    const C cdf = C(0.5) * (C(1) + erf(x * C(0.7071067811865476)));
    const C pdf = exp(C(-0.5) * x * x) * C(0.3989422804014327);
    return g * (cdf + x * pdf);
  }
};

// elu(x; alpha, scale, input_scale): scale * x for x > 0, alpha * scale * (exp(input_scale * x) -
// 1) otherwise, as PyTorch's elu; selu and celu are elu with fixed or derived parameters.
template <class C>
struct Elu {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C alpha, scale, input_scale;
  KILN_HOST_DEVICE C operator()(C x) const {
    using std::expm1;
    return x > C(0) ? x * scale : expm1(x * input_scale) * (alpha * scale);
  }
};

// elu_backward(g, x; alpha, scale, input_scale): g * input_scale * alpha * scale *
// exp(x * input_scale) for x <= 0, g * scale otherwise (a NaN x too), as PyTorch's
// elu_backward on the input.
template <class C>
struct EluBackward {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C alpha, scale, input_scale;
  KILN_HOST_DEVICE C operator()(C g, C x) const {
    using std::exp;
    return x <= C(0) ? g * input_scale * (alpha * scale) * exp(x * input_scale) : g * scale;
  }
};

// threshold_backward(g, x; threshold): 0 where x <= threshold, g otherwise (a NaN x too), as
// PyTorch's threshold_backward: the gradient of threshold, and of relu on its result.
template <class C>
struct ThresholdBackward {
  static constexpr Dtypes dtypes = Dtypes::floating;
  C threshold;
  KILN_HOST_DEVICE C operator()(C g, C x) const { return x <= threshold ? C(0) : g; }
};

// threshold(x; threshold, value): value where x <= threshold, x otherwise (NaN stays NaN).
template <class C>
struct Threshold {
  static constexpr Dtypes dtypes = Dtypes::numeric;
  C threshold, value;
  KILN_HOST_DEVICE C operator()(C x) const { return x <= threshold ? value : x; }
};

// ---- piecewise-linear activations --------------------------------------------------------------

// min(max(x + 3, 0), 6) with std::max and std::min's selects, so a NaN x stays NaN as in PyTorch.
template <class C>
KILN_HOST_DEVICE C relu6_of_shifted(C x) {
  C y = x + C(3);
  y = y < C(0) ? C(0) : y;
  return C(6) < y ? C(6) : y;
}

// x * relu6(x + 3) / 6.
struct Hardswish {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    return x * relu6_of_shifted(x) / C(6);
  }
};

// hardswish_backward(g, x): 0 for x < -3, g * (x / 3 + 1/2) for x <= 3, g otherwise (a NaN x
// too), as PyTorch's hardswish_backward.
struct HardswishBackward {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C g, C x) const {
    return x < C(-3) ? C(0) : (x <= C(3) ? g * (x / C(3) + C(0.5)) : g);
  }
};

// relu6(x + 3) / 6.
struct Hardsigmoid {
  static constexpr Dtypes dtypes = Dtypes::floating;
  template <class C>
  KILN_HOST_DEVICE C operator()(C x) const {
    return relu6_of_shifted(x) / C(6);
  }
};

}  // namespace kiln::sdk::pointwise
