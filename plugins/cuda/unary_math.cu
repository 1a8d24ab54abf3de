// The floating unary functions (exp, log, the trigonometric and hyperbolic ones, erf, sinc,
// silu, ...): kiln/sdk/pointwise.hpp's functors, one kernel per floating storage type each takes
// (pointwise.cuh). The rest of the unary family is unary.cu: two files that a parallel build
// compiles side by side.
#include "pointwise.cuh"

namespace kiln::cuda {

void register_unary_math(KernelTable& t) {
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
}

}  // namespace kiln::cuda
