// Unary elementwise kernels: kiln/sdk/pointwise.hpp's functors, one kernel per dtype each
// takes (pointwise.cuh).
#include "pointwise.cuh"

#include <utility>

namespace kiln::cuda {
namespace {

// out = Op<A>{param}(x), the parameter the attribute 0 (gelu, leaky_relu, hardshrink, softshrink).
template <template <class> class Op>
void param_kernel(const Call& call) {
  const int32_t dtype = call.input(0).dtype;
  visit_pointwise(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using F = Op<A>;
    if constexpr (pw::accepts_v<F::dtypes, A>) {
      const F op{pw::clamp_bound<A>(call.has_attr(0) ? &call.attr(0) : nullptr, A(0))};
      map<T, T>(stream_of(call), Pointwise<T, T, F>{op, dtype == KILN_BF16}, call.output(0),
                {&call.input(0)});
    } else {
      refuse(call, dtype);
    }
  });
}

// grad_x = pw::GeluBackward(grad, x; attribute 0), both of x's dtype.
void gelu_backward_kernel(const Call& call) {
  visit_dtype(call.input(1).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using F = pw::GeluBackward<A>;
    if constexpr (pw::accepts_v<F::dtypes, A>) {
      const F op{static_cast<A>(call.attr_f64(0))};
      map<T, T, T>(stream_of(call), Pointwise<T, T, F>{op}, call.output(0),
                   {&call.input(0), &call.input(1)});
    } else {
      refuse(call, call.input(1).dtype);
    }
  });
}

// grad_x = pw::EluBackward(grad, x; attributes alpha, scale, input_scale), both of x's dtype.
void elu_backward_kernel(const Call& call) {
  visit_dtype(call.input(1).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using F = pw::EluBackward<A>;
    if constexpr (pw::accepts_v<F::dtypes, A>) {
      const F op{static_cast<A>(call.attr_f64(0)), static_cast<A>(call.attr_f64(1)),
                 static_cast<A>(call.attr_f64(2))};
      map<T, T, T>(stream_of(call), Pointwise<T, T, F>{op}, call.output(0),
                   {&call.input(0), &call.input(1)});
    } else {
      refuse(call, call.input(1).dtype);
    }
  });
}

// grad_x = pw::HardswishBackward(grad, x), both of x's dtype.
void hardswish_backward_kernel(const Call& call) {
  visit_dtype(call.input(1).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using F = pw::HardswishBackward;
    if constexpr (pw::accepts_v<F::dtypes, A>) {
      map<T, T, T>(stream_of(call), Pointwise<T, T, F>{F{}}, call.output(0),
                   {&call.input(0), &call.input(1)});
    } else {
      refuse(call, call.input(1).dtype);
    }
  });
}

// grad_x = pw::ThresholdBackward(grad, x; attribute threshold), both of x's dtype.
void threshold_backward_kernel(const Call& call) {
  visit_dtype(call.input(1).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using F = pw::ThresholdBackward<A>;
    if constexpr (pw::accepts_v<F::dtypes, A>) {
      const F op{static_cast<A>(call.attr_f64(0))};
      map<T, T, T>(stream_of(call), Pointwise<T, T, F>{op}, call.output(0),
                   {&call.input(0), &call.input(1)});
    } else {
      refuse(call, call.input(1).dtype);
    }
  });
}

// The functor F (Op<A>) with its parameters from the scalar attributes 0 .. N - 1, converted as
// PyTorch converts a Scalar (integers wrap).
template <class F, class A, size_t... I>
F with_params(const Call& call, std::index_sequence<I...>) {
  return F{call.attr_scalar<A>(static_cast<int32_t>(I))...};
}

// out = Op<A>{params...}(x), N parameters (elu: alpha, scale, input_scale; threshold: threshold,
// value).
template <template <class> class Op, size_t N>
void params_kernel(const Call& call) {
  const int32_t dtype = call.input(0).dtype;
  visit_pointwise(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    using F = Op<A>;
    if constexpr (pw::accepts_v<F::dtypes, A>) {
      const F op = with_params<F, A>(call, std::make_index_sequence<N>{});
      map<T, T>(stream_of(call), Pointwise<T, T, F>{op, dtype == KILN_BF16}, call.output(0),
                {&call.input(0)});
    } else {
      refuse(call, dtype);
    }
  });
}

}  // namespace

void register_unary(KernelTable& t) {
  t.add("neg", kernel<unary_kernel<pw::Neg>>);
  t.add("abs", kernel<unary_kernel<pw::Abs>>);
  t.add("sign", kernel<unary_kernel<pw::Sign>>);
  t.add("relu", kernel<unary_kernel<pw::Relu>>);
  t.add("bitwise_not", kernel<unary_kernel<pw::BitwiseNot>>);
  t.add("logical_not", kernel<unary_kernel<pw::LogicalNot>>);
  t.add("exp", kernel<unary_kernel<pw::Exp>>);
  t.add("log", kernel<unary_kernel<pw::Log>>);
  t.add("log1p", kernel<unary_kernel<pw::Log1p>>);
  t.add("expm1", kernel<unary_kernel<pw::Expm1>>);
  t.add("sqrt", kernel<unary_kernel<pw::Sqrt>>);
  t.add("rsqrt", kernel<unary_kernel<pw::Rsqrt>>);
  t.add("sin", kernel<unary_kernel<pw::Sin>>);
  t.add("cos", kernel<unary_kernel<pw::Cos>>);
  t.add("tanh", kernel<unary_kernel<pw::Tanh>>);
  t.add("sigmoid", kernel<unary_kernel<pw::Sigmoid>>);
  t.add("gelu", kernel<param_kernel<pw::Gelu>>);
  t.add("gelu_backward", kernel<gelu_backward_kernel>);
  t.add("elu_backward", kernel<elu_backward_kernel>);
  t.add("hardswish_backward", kernel<hardswish_backward_kernel>);
  t.add("threshold_backward", kernel<threshold_backward_kernel>);
  t.add("leaky_relu", kernel<param_kernel<pw::LeakyRelu>>);
  t.add("hardshrink", kernel<param_kernel<pw::Hardshrink>>);
  t.add("softshrink", kernel<param_kernel<pw::Softshrink>>);
  t.add("floor", kernel<unary_kernel<pw::Floor>>);
  t.add("ceil", kernel<unary_kernel<pw::Ceil>>);
  t.add("round", kernel<unary_kernel<pw::Round>>);
  t.add("trunc", kernel<unary_kernel<pw::Trunc>>);
  t.add("frac", kernel<unary_kernel<pw::Frac>>);
  t.add("reciprocal", kernel<unary_kernel<pw::Reciprocal>>);
  t.add("log2", kernel<unary_kernel<pw::Log2>>);
  t.add("log10", kernel<unary_kernel<pw::Log10>>);
  t.add("exp2", kernel<unary_kernel<pw::Exp2>>);
  t.add("tan", kernel<unary_kernel<pw::Tan>>);
  t.add("sinh", kernel<unary_kernel<pw::Sinh>>);
  t.add("cosh", kernel<unary_kernel<pw::Cosh>>);
  t.add("asin", kernel<unary_kernel<pw::Asin>>);
  t.add("acos", kernel<unary_kernel<pw::Acos>>);
  t.add("atan", kernel<unary_kernel<pw::Atan>>);
  t.add("asinh", kernel<unary_kernel<pw::Asinh>>);
  t.add("acosh", kernel<unary_kernel<pw::Acosh>>);
  t.add("atanh", kernel<unary_kernel<pw::Atanh>>);
  t.add("erf", kernel<unary_kernel<pw::Erf>>);
  t.add("erfc", kernel<unary_kernel<pw::Erfc>>);
  t.add("erfinv", kernel<unary_kernel<pw::Erfinv>>);
  t.add("sinc", kernel<unary_kernel<pw::Sinc>>);
  t.add("silu", kernel<unary_kernel<pw::Silu>>);
  t.add("mish", kernel<unary_kernel<pw::Mish>>);
  t.add("elu", kernel<params_kernel<pw::Elu, 3>>);
  t.add("threshold", kernel<params_kernel<pw::Threshold, 2>>);
  t.add("hardswish", kernel<unary_kernel<pw::Hardswish>>);
  t.add("hardsigmoid", kernel<unary_kernel<pw::Hardsigmoid>>);
}

}  // namespace kiln::cuda
