// where(cond, a, b), clamp(x, min, max), lerp(self, end, weight) and addcmul/addcdiv(self, t1,
// t2, value): the functors of kiln/sdk/pointwise.hpp.
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"

namespace kiln::cpu {
namespace {

namespace pw = sdk::pointwise;
using sdk::kernel;

// out = cond ? a : b, the elements moved as bits.
void where_kernel(const Call& call) {
  visit<pw::Where::dtypes>(call.output(0).dtype, [&](auto tag) {
    using B = bits_t<typename decltype(tag)::type>;
    map<B, bool, B, B>(pw::Where{}, call.output(0),
                       {&call.input(0), &call.input(1), &call.input(2)});
  });
}

// out = clamp(x, lo, hi), either bound optional (attributes 0 and 1).
void clamp_kernel(const Call& call) {
  visit<pw::Clamp<float>::dtypes>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const pw::Clamp<C> f{
        pw::clamp_bound<C>(call.has_attr(0) ? &call.attr(0) : nullptr, lowest_value<C>()),
        pw::clamp_bound<C>(call.has_attr(1) ? &call.attr(1) : nullptr, highest_value<C>())};
    map<T, T>(f, call.output(0), {&call.input(0)});
  });
}

// out = lerp(self, end, weight), the three of out's dtype; or, with two inputs, the weight the
// F64 attribute 0 (a number weight, in the compute type).
void lerp_kernel(const Call& call) {
  visit<pw::Lerp::dtypes>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if (call.num_inputs() == 2) {
      const C w = scalar_attr<T>(call.attr(0));
      map<T, T, T>([w](C a, C b) { return pw::Lerp{}(a, b, w); }, call.output(0),
                   {&call.input(0), &call.input(1)});
    } else {
      map<T, T, T, T>([](C a, C b, C w) { return pw::Lerp{}(a, b, w); }, call.output(0),
                      {&call.input(0), &call.input(1), &call.input(2)});
    }
  });
}

// out = Op<C>{value}(self, t1, t2), value the attribute 0 (addcmul, addcdiv).
template <template <class> class Op>
void addc_kernel(const Call& call) {
  visit<Op<float>::dtypes>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const Op<C> f{call.has_attr(0) ? scalar_attr<T>(call.attr(0)) : C(1)};
    map<T, T, T, T>(f, call.output(0), {&call.input(0), &call.input(1), &call.input(2)});
  });
}

}  // namespace

void register_ternary(KernelTable& table) {
  table.add("where", kernel<where_kernel>);
  table.add("clamp", kernel<clamp_kernel>);
  table.add("lerp", kernel<lerp_kernel>);
  table.add("addcmul", kernel<addc_kernel<pw::Addcmul>>);
  table.add("addcdiv", kernel<addc_kernel<pw::Addcdiv>>);
}

}  // namespace kiln::cpu
