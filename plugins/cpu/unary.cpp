// Unary elementwise kernels: the functors of kiln/sdk/pointwise.hpp over the loops of loops.hpp.
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"
#include "vecmath.hpp"

#include <array>
#include <bit>
#include <utility>

namespace kiln::cpu {
namespace {

namespace pw = sdk::pointwise;
using sdk::kernel;

// out = Op(x) for the dtypes Op takes (Grain: kGrainHeavy for the functions of libm, which split
// across threads sooner), computed in compute_t<T>; out is bool for the operators
// that return bool (logical_not), of x's dtype otherwise.
template <class Op, int64_t Grain = kGrain>
void unary_kernel(const Call& call) {
  visit<Op::dtypes>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using Out = std::conditional_t<std::is_same_v<decltype(Op{}(C{})), bool>, bool, T>;
    map<Out, T>([](C x) { return Op{}(x); }, call.output(0), {&call.input(0)}, Grain);
  });
}

// out = Op<C>{param}(x), the parameter the attribute 0 (gelu, leaky_relu, hardshrink, softshrink).
template <template <class> class Op>
void param_kernel(const Call& call) {
  visit<Op<float>::dtypes>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const Op<C> f{pw::clamp_bound<C>(call.has_attr(0) ? &call.attr(0) : nullptr, C(0))};
    map<T, T>(f, call.output(0), {&call.input(0)}, kGrainHeavy);
  });
}

// The functor F with its parameters from the scalar attributes 0 .. N - 1, converted to the
// compute type of T as PyTorch converts a Scalar (integers wrap: threshold's value -1 is 255 in
// uint8).
template <class F, class T, size_t... I>
F with_params(const Call& call, std::index_sequence<I...>) {
  return F{scalar_attr<T>(call.attr(I))...};
}

// out = Op<C>{params...}(x), N parameters (elu: alpha, scale, input_scale; threshold: threshold,
// value).
template <template <class> class Op, size_t N, int64_t Grain = kGrainHeavy>
void params_kernel(const Call& call) {
  visit<Op<float>::dtypes>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const auto f = with_params<Op<C>, T>(call, std::make_index_sequence<N>{});
    map<T, T>(f, call.output(0), {&call.input(0)}, Grain);
  });
}

// Op through vecmath's branch-free Vm for float (and so for the 16-bit floats, which compute in
// float), which the loops vectorize; through the sdk functor Op (libm) for double.
template <class Op, class Vm>
struct Vectorized {
  static constexpr pw::Dtypes dtypes = Op::dtypes;
  template <class C>
  [[gnu::always_inline]] C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) {
      return Vm{}(x);
    } else {
      return Op{}(x);
    }
  }
};

struct VmExp {
  [[gnu::always_inline]] float operator()(float x) const { return vm::exp(x); }
};
struct VmExpm1 {
  [[gnu::always_inline]] float operator()(float x) const { return vm::expm1(x); }
};
struct VmTanh {
  [[gnu::always_inline]] float operator()(float x) const { return vm::tanh(x); }
};
struct VmErf {
  [[gnu::always_inline]] float operator()(float x) const { return vm::erf(x); }
};
struct VmSigmoid {
  [[gnu::always_inline]] float operator()(float x) const { return 1.0f / (1.0f + vm::exp(-x)); }
};
struct VmSilu {
  [[gnu::always_inline]] float operator()(float x) const { return x / (1.0f + vm::exp(-x)); }
};

// pw::Gelu<C> with vecmath's erf (Tanh false) or tanh (Tanh true) for float: the approximation
// is chosen once per call, outside the loop, so that the loop has no branch.
template <class C, bool Tanh>
struct VecGelu {
  [[gnu::always_inline]] C operator()(C x) const {
    if constexpr (!std::is_same_v<C, float>) {
      return pw::Gelu<C>{C(Tanh ? 1 : 0)}(x);
    } else if constexpr (Tanh) {
      const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + vm::tanh(inner));
    } else {
      return x * 0.5f * (1.0f + vm::erf(x * 0.7071067811865476f));
    }
  }
};

void gelu_kernel(const Call& call) {
  visit<pw::Gelu<float>::dtypes>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const C approximate = pw::clamp_bound<C>(call.has_attr(0) ? &call.attr(0) : nullptr, C(0));
    if (approximate != C(0)) {
      map<T, T>(VecGelu<C, true>{}, call.output(0), {&call.input(0)}, kGrainHeavy);
    } else {
      map<T, T>(VecGelu<C, false>{}, call.output(0), {&call.input(0)}, kGrainHeavy);
    }
  });
}

// pw::GeluBackward<C> with vecmath's erf and exp (Tanh false) or tanh (Tanh true) for float.
template <class C, bool Tanh>
struct VecGeluBackward {
  [[gnu::always_inline]] C operator()(C g, C x) const {
    if constexpr (!std::is_same_v<C, float>) {
      return pw::GeluBackward<C>{C(Tanh ? 1 : 0)}(g, x);
    } else if constexpr (Tanh) {
      const float x_sq = x * x;
      const float t = vm::tanh(0.7978845608028654f * (x + 0.044715f * x_sq * x));
      const float slope = 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * x_sq);
      return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * slope);
    } else {
      const float cdf = 0.5f * (1.0f + vm::erf(x * 0.7071067811865476f));
      const float pdf = vm::exp(-0.5f * x * x) * 0.3989422804014327f;
      return g * (cdf + x * pdf);
    }
  }
};

// grad_x = GeluBackward(grad, x; attribute 0), both of x's dtype.
void gelu_backward_kernel(const Call& call) {
  visit<pw::Dtypes::floating>(call.input(1).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const std::array<const kiln_tensor*, 2> in = {&call.input(0), &call.input(1)};
    if (call.attr_f64(0) != 0.0) {
      map<T, T, T>(VecGeluBackward<C, true>{}, call.output(0), in, kGrainHeavy);
    } else {
      map<T, T, T>(VecGeluBackward<C, false>{}, call.output(0), in, kGrainHeavy);
    }
  });
}

// pw::EluBackward<C> with vecmath's exp for float.
template <class C>
struct VecEluBackward {
  C alpha, scale, input_scale;
  [[gnu::always_inline]] C operator()(C g, C x) const {
    if constexpr (std::is_same_v<C, float>) {
      // the members read before the select, as VecElu's
      const float s = scale, negative = alpha * scale, in = input_scale;
      const float e = g * in * negative * vm::exp(x * in);
      return x <= 0.0f ? e : g * s;
    } else {
      return pw::EluBackward<C>{alpha, scale, input_scale}(g, x);
    }
  }
};

// Whether t is dense row-major with `sizes` (size-1 dimensions any stride).
bool dense(const kiln_tensor& t, const kiln_tensor& like) {
  if (t.ndim != like.ndim) return false;
  int64_t step = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] != like.sizes[d]) return false;
    if (t.sizes[d] != 1 && t.strides[d] != step) return false;
    step *= t.sizes[d];
  }
  return true;
}

// VecEluBackward<float> over dense operands with the parameters in locals: through the functor's
// members GCC kept the two-input loop scalar (they might alias the output). The same expression,
// so the same bits.
[[gnu::always_inline]] inline void elu_backward_loop(const float* __restrict g,
                                                     const float* __restrict x,
                                                     float* __restrict out, int64_t n, float alpha,
                                                     float scale, float in) {
  const float negative = alpha * scale;
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#else
#pragma GCC ivdep
#endif
  for (int64_t i = 0; i < n; ++i) {
    const float xv = x[i], gv = g[i];
    const float e = gv * in * negative * vm::exp(xv * in);
    const float p = gv * scale;
    // a select on the bits: with AVX-512, GCC turned the ?: into a branch and left the loop scalar
    const uint32_t take = 0u - static_cast<uint32_t>(xv <= 0.0f);
    out[i] = std::bit_cast<float>((std::bit_cast<uint32_t>(e) & take) |
                                  (std::bit_cast<uint32_t>(p) & ~take));
  }
}
KILN_CPU_AVX512 void elu_backward_avx512(const float* g, const float* x, float* out, int64_t n,
                                         float alpha, float scale, float in) {
  elu_backward_loop(g, x, out, n, alpha, scale, in);
}

// grad_x = EluBackward(grad, x; attributes alpha, scale, input_scale), both of x's dtype.
void elu_backward_kernel(const Call& call) {
  const kiln_tensor &g = call.input(0), &x = call.input(1), &out = call.output(0);
  if (x.dtype == KILN_F32 && g.dtype == KILN_F32 && out.dtype == KILN_F32 && dense(x, out) &&
      dense(g, out) && dense(out, out)) {
    int64_t n = 1;
    for (int32_t d = 0; d < out.ndim; ++d) n *= out.sizes[d];
    const auto alpha = static_cast<float>(call.attr_f64(0));
    const auto scale = static_cast<float>(call.attr_f64(1));
    const auto in = static_cast<float>(call.attr_f64(2));
    const auto* gp = static_cast<const float*>(g.data);
    const auto* xp = static_cast<const float*>(x.data);
    auto* op = static_cast<float*>(out.data);
    parallel_for(n, kGrainHeavy, [&](int64_t b, int64_t e) {
      if (has_avx512()) {
        elu_backward_avx512(gp + b, xp + b, op + b, e - b, alpha, scale, in);
      } else {
        elu_backward_loop(gp + b, xp + b, op + b, e - b, alpha, scale, in);
      }
    });
    return;
  }
  visit<pw::Dtypes::floating>(call.input(1).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const std::array<const kiln_tensor*, 2> in = {&call.input(0), &call.input(1)};
    const VecEluBackward<C> f{static_cast<C>(call.attr_f64(0)), static_cast<C>(call.attr_f64(1)),
                              static_cast<C>(call.attr_f64(2))};
    map<T, T, T>(f, call.output(0), in, kGrainHeavy);
  });
}

// grad_x = HardswishBackward(grad, x), both of x's dtype.
void hardswish_backward_kernel(const Call& call) {
  visit<pw::Dtypes::floating>(call.input(1).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const std::array<const kiln_tensor*, 2> in = {&call.input(0), &call.input(1)};
    map<T, T, T>([](C g, C x) { return pw::HardswishBackward{}(g, x); }, call.output(0), in,
                 kGrain);
  });
}

// pw::ThresholdBackward<float> over dense operands: a mask of the gradient's bits (the ?: of the
// functor became a branch and a scalar loop).
[[gnu::always_inline]] inline void threshold_backward_loop(const float* __restrict g,
                                                           const float* __restrict x,
                                                           float* __restrict out, int64_t n,
                                                           float threshold) {
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#else
#pragma GCC ivdep
#endif
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t keep = 0u - static_cast<uint32_t>(!(x[i] <= threshold));
    out[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(g[i]) & keep);
  }
}
KILN_CPU_AVX512 void threshold_backward_avx512(const float* g, const float* x, float* out,
                                               int64_t n, float threshold) {
  threshold_backward_loop(g, x, out, n, threshold);
}

// grad_x = ThresholdBackward(grad, x; attribute threshold), both of x's dtype: relu's gradient.
void threshold_backward_kernel(const Call& call) {
  const kiln_tensor &g = call.input(0), &x = call.input(1), &out = call.output(0);
  if (x.dtype == KILN_F32 && g.dtype == KILN_F32 && out.dtype == KILN_F32 && dense(x, out) &&
      dense(g, out) && dense(out, out)) {
    int64_t n = 1;
    for (int32_t d = 0; d < out.ndim; ++d) n *= out.sizes[d];
    const auto threshold = static_cast<float>(call.attr_f64(0));
    const auto* gp = static_cast<const float*>(g.data);
    const auto* xp = static_cast<const float*>(x.data);
    auto* op = static_cast<float*>(out.data);
    parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
      if (has_avx512()) {
        threshold_backward_avx512(gp + b, xp + b, op + b, e - b, threshold);
      } else {
        threshold_backward_loop(gp + b, xp + b, op + b, e - b, threshold);
      }
    });
    return;
  }
  visit<pw::Dtypes::floating>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const std::array<const kiln_tensor*, 2> in = {&g, &x};
    const pw::ThresholdBackward<C> f{static_cast<C>(call.attr_f64(0))};
    map<T, T, T>([f](C gv, C xv) { return f(gv, xv); }, out, in, kGrain);
  });
}

// pw::Elu<C> with vecmath's expm1 for float.
template <class C>
struct VecElu {
  static constexpr pw::Dtypes dtypes = pw::Elu<C>::dtypes;
  C alpha, scale, input_scale;
  [[gnu::always_inline]] C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) {
      // the members read before the select, so that both sides compute unconditionally and
      // the loop vectorizes (a load under a condition stops GCC's if-conversion)
      const float s = scale, negative = alpha * scale, in = input_scale;
      const float e = vm::expm1(x * in) * negative;
      return x > 0.0f ? x * s : e;
    } else {
      return pw::Elu<C>{alpha, scale, input_scale}(x);
    }
  }
};

}  // namespace

void register_unary(KernelTable& table) {
  table.add("neg", kernel<unary_kernel<pw::Neg>>);
  table.add("abs", kernel<unary_kernel<pw::Abs>>);
  table.add("sign", kernel<unary_kernel<pw::Sign>>);
  table.add("relu", kernel<unary_kernel<pw::Relu>>);
  table.add("bitwise_not", kernel<unary_kernel<pw::BitwiseNot>>);
  table.add("logical_not", kernel<unary_kernel<pw::LogicalNot>>);
  table.add("exp", kernel<unary_kernel<Vectorized<pw::Exp, VmExp>, kGrainHeavy>>);
  table.add("log", kernel<unary_kernel<pw::Log, kGrainHeavy>>);
  table.add("log1p", kernel<unary_kernel<pw::Log1p, kGrainHeavy>>);
  table.add("expm1", kernel<unary_kernel<Vectorized<pw::Expm1, VmExpm1>, kGrainHeavy>>);
  table.add("sqrt", kernel<unary_kernel<pw::Sqrt, kGrainHeavy>>);
  table.add("rsqrt", kernel<unary_kernel<pw::Rsqrt, kGrainHeavy>>);
  table.add("sin", kernel<unary_kernel<pw::Sin, kGrainHeavy>>);
  table.add("cos", kernel<unary_kernel<pw::Cos, kGrainHeavy>>);
  table.add("tanh", kernel<unary_kernel<Vectorized<pw::Tanh, VmTanh>, kGrainHeavy>>);
  table.add("sigmoid", kernel<unary_kernel<Vectorized<pw::Sigmoid, VmSigmoid>, kGrainHeavy>>);
  table.add("gelu", kernel<gelu_kernel>);
  table.add("gelu_backward", kernel<gelu_backward_kernel>);
  table.add("elu_backward", kernel<elu_backward_kernel>);
  table.add("hardswish_backward", kernel<hardswish_backward_kernel>);
  table.add("threshold_backward", kernel<threshold_backward_kernel>);
  table.add("leaky_relu", kernel<param_kernel<pw::LeakyRelu>>);
  table.add("hardshrink", kernel<param_kernel<pw::Hardshrink>>);
  table.add("softshrink", kernel<param_kernel<pw::Softshrink>>);
  table.add("floor", kernel<unary_kernel<pw::Floor>>);
  table.add("ceil", kernel<unary_kernel<pw::Ceil>>);
  table.add("round", kernel<unary_kernel<pw::Round>>);
  table.add("trunc", kernel<unary_kernel<pw::Trunc>>);
  table.add("frac", kernel<unary_kernel<pw::Frac>>);
  table.add("reciprocal", kernel<unary_kernel<pw::Reciprocal>>);
  table.add("log2", kernel<unary_kernel<pw::Log2, kGrainHeavy>>);
  table.add("log10", kernel<unary_kernel<pw::Log10, kGrainHeavy>>);
  table.add("exp2", kernel<unary_kernel<pw::Exp2, kGrainHeavy>>);
  table.add("tan", kernel<unary_kernel<pw::Tan, kGrainHeavy>>);
  table.add("sinh", kernel<unary_kernel<pw::Sinh, kGrainHeavy>>);
  table.add("cosh", kernel<unary_kernel<pw::Cosh, kGrainHeavy>>);
  table.add("asin", kernel<unary_kernel<pw::Asin, kGrainHeavy>>);
  table.add("acos", kernel<unary_kernel<pw::Acos, kGrainHeavy>>);
  table.add("atan", kernel<unary_kernel<pw::Atan, kGrainHeavy>>);
  table.add("asinh", kernel<unary_kernel<pw::Asinh, kGrainHeavy>>);
  table.add("acosh", kernel<unary_kernel<pw::Acosh, kGrainHeavy>>);
  table.add("atanh", kernel<unary_kernel<pw::Atanh, kGrainHeavy>>);
  table.add("erf", kernel<unary_kernel<Vectorized<pw::Erf, VmErf>, kGrainHeavy>>);
  table.add("erfc", kernel<unary_kernel<pw::Erfc, kGrainHeavy>>);
  table.add("erfinv", kernel<unary_kernel<pw::Erfinv, kGrainHeavy>>);
  table.add("sinc", kernel<unary_kernel<pw::Sinc, kGrainHeavy>>);
  table.add("silu", kernel<unary_kernel<Vectorized<pw::Silu, VmSilu>, kGrainHeavy>>);
  table.add("mish", kernel<unary_kernel<pw::Mish, kGrainHeavy>>);
  table.add("elu", kernel<params_kernel<VecElu, 3>>);
  table.add("threshold", kernel<params_kernel<pw::Threshold, 2, kGrain>>);
  table.add("hardswish", kernel<unary_kernel<pw::Hardswish>>);
  table.add("hardsigmoid", kernel<unary_kernel<pw::Hardsigmoid>>);
}

}  // namespace kiln::cpu
