// Unary elementwise kernels: the functors of kiln/sdk/pointwise.hpp over the loops of loops.hpp.
#include "loops.hpp"
#include "registry.hpp"

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

}  // namespace

void register_unary(KernelTable& table) {
  table.add("neg", kernel<unary_kernel<pw::Neg>>);
  table.add("abs", kernel<unary_kernel<pw::Abs>>);
  table.add("sign", kernel<unary_kernel<pw::Sign>>);
  table.add("relu", kernel<unary_kernel<pw::Relu>>);
  table.add("bitwise_not", kernel<unary_kernel<pw::BitwiseNot>>);
  table.add("logical_not", kernel<unary_kernel<pw::LogicalNot>>);
  table.add("exp", kernel<unary_kernel<pw::Exp, kGrainHeavy>>);
  table.add("log", kernel<unary_kernel<pw::Log, kGrainHeavy>>);
  table.add("log1p", kernel<unary_kernel<pw::Log1p, kGrainHeavy>>);
  table.add("expm1", kernel<unary_kernel<pw::Expm1, kGrainHeavy>>);
  table.add("sqrt", kernel<unary_kernel<pw::Sqrt, kGrainHeavy>>);
  table.add("rsqrt", kernel<unary_kernel<pw::Rsqrt, kGrainHeavy>>);
  table.add("sin", kernel<unary_kernel<pw::Sin, kGrainHeavy>>);
  table.add("cos", kernel<unary_kernel<pw::Cos, kGrainHeavy>>);
  table.add("tanh", kernel<unary_kernel<pw::Tanh, kGrainHeavy>>);
  table.add("sigmoid", kernel<unary_kernel<pw::Sigmoid, kGrainHeavy>>);
}

}  // namespace kiln::cpu
