// Unary elementwise kernels: kiln/sdk/pointwise.hpp's functors, one kernel per dtype each
// takes (pointwise.cuh).
#include "pointwise.cuh"

namespace kiln::cuda {

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
}

}  // namespace kiln::cuda
