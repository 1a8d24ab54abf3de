// Binary arithmetic, bitwise, comparison and logical kernels: kiln/sdk/pointwise.hpp's functors,
// one kernel per dtype each takes (pointwise.cuh). Comparisons share this translation unit rather
// than having their own: each unit costs about 3.5 s of nvcc's CPU time before its first kernel
// (the CUDA runtime's and kiln's headers, the host pass), as much as 25 of these kernels.
#include "pointwise.cuh"

namespace kiln::cuda {
namespace {

// add: a + alpha * b; sub: a - alpha * b, which is add with -alpha: one kernel per dtype.
template <bool Subtract>
void add_sub_kernel(const Call& call) {
  constexpr pw::Dtypes S = Subtract ? pw::Sub::dtypes : pw::Add::dtypes;
  const int32_t dtype = call.output(0).dtype;
  visit_pointwise(dtype, [&](auto tag) {
    using D = typename decltype(tag)::type;
    if constexpr (pw::accepts_v<S, acc_t<D>>) {
      using T = storage_t<pw::AddScaled<acc_t<D>>, D>;  // int8 as uint8
      using A = acc_t<T>;
      // alpha converted as D's, then to T's bits
      A alpha = static_cast<A>(call.has_attr(0) ? call.attr_scalar<acc_t<D>>(0) : acc_t<D>(1));
      if constexpr (Subtract) alpha = pw::wrap_neg(alpha);
      using Op = pw::AddScaled<A>;
      map<T, T, T>(stream_of(call), Pointwise<T, T, Op>{Op{alpha}, dtype == KILN_BF16},
                   call.output(0), {&call.input(0), &call.input(1)});
    } else {
      refuse(call, dtype);
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

void register_compare(KernelTable& t) {
  t.add("eq", kernel<binary_kernel<pw::Eq>>);
  t.add("ne", kernel<binary_kernel<pw::Ne>>);
  t.add("lt", kernel<binary_kernel<pw::Gt, /*Swapped=*/true>>);  // a < b is b > a
  t.add("le", kernel<binary_kernel<pw::Ge, /*Swapped=*/true>>);
  t.add("gt", kernel<binary_kernel<pw::Gt>>);
  t.add("ge", kernel<binary_kernel<pw::Ge>>);
  t.add("logical_and", kernel<binary_kernel<pw::LogicalAnd>>);
  t.add("logical_or", kernel<binary_kernel<pw::LogicalOr>>);
  t.add("logical_xor", kernel<binary_kernel<pw::LogicalXor>>);
}

}  // namespace kiln::cuda
