// where(cond, a, b) and clamp(x, min, max): the functors of kiln/sdk/pointwise.hpp.
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

}  // namespace

void register_ternary(KernelTable& table) {
  table.add("where", kernel<where_kernel>);
  table.add("clamp", kernel<clamp_kernel>);
}

}  // namespace kiln::cpu
