// Binary arithmetic and bitwise kernels: kiln/sdk/pointwise.hpp's functors, one kernel per dtype
// each takes (pointwise.cuh).
#include "pointwise.cuh"

namespace kiln::cuda {
namespace {

// add: a + alpha * b; sub: a - alpha * b, which is add with -alpha: one kernel per dtype.
template <bool Subtract>
void add_sub_kernel(const Call& call) {
  constexpr pw::Dtypes S = Subtract ? pw::Sub::dtypes : pw::Add::dtypes;
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    if constexpr (pw::accepts_v<S, A>) {
      A alpha = call.has_attr(0) ? call.attr_scalar<A>(0) : A(1);
      if constexpr (Subtract) alpha = pw::wrap_neg(alpha);
      using Op = pw::AddScaled<A>;
      map<T, T, T>(stream_of(call), Pointwise<T, T, Op>{Op{alpha}}, call.output(0),
                   {&call.input(0), &call.input(1)});
    } else {
      refuse(call, call.output(0).dtype);
    }
  });
}

}  // namespace

void register_binary(KernelTable& t) {
  t.add("add", kernel<add_sub_kernel<false>>);
  t.add("sub", kernel<add_sub_kernel<true>>);
  t.add("mul", kernel<binary_kernel<pw::Mul>>);
  t.add("div", kernel<binary_kernel<pw::Div>>);
  t.add("floor_divide", kernel<binary_kernel<pw::FloorDivide>>);
  t.add("remainder", kernel<binary_kernel<pw::Remainder>>);
  t.add("fmod", kernel<binary_kernel<pw::Fmod>>);
  t.add("pow", kernel<binary_kernel<pw::Pow>>);
  t.add("maximum", kernel<binary_kernel<pw::Maximum>>);
  t.add("minimum", kernel<binary_kernel<pw::Minimum>>);
  t.add("bitwise_and", kernel<binary_kernel<pw::BitwiseAnd>>);
  t.add("bitwise_or", kernel<binary_kernel<pw::BitwiseOr>>);
  t.add("bitwise_xor", kernel<binary_kernel<pw::BitwiseXor>>);
  t.add("atan2", kernel<binary_kernel<pw::Atan2>>);
  t.add("logaddexp", kernel<binary_kernel<pw::LogAddExp>>);
  t.add("logaddexp2", kernel<binary_kernel<pw::LogAddExp2>>);
  t.add("hypot", kernel<binary_kernel<pw::Hypot>>);
  t.add("copysign", kernel<binary_kernel<pw::Copysign>>);
  t.add("xlogy", kernel<binary_kernel<pw::Xlogy>>);
}

}  // namespace kiln::cuda
