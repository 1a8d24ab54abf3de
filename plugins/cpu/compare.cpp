// Comparisons and logical operators: the functors of kiln/sdk/pointwise.hpp, inputs of any (same)
// dtype, a bool output.
#include "loops.hpp"
#include "registry.hpp"

namespace kiln::cpu {
namespace {

namespace pw = sdk::pointwise;
using sdk::kernel;

// out (bool) = Op(a, b), a and b of the input dtype, compared in their compute type.
template <class Op>
void compare_kernel(const Call& call) {
  visit<Op::dtypes>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    map<bool, T, T>([](C a, C b) { return Op{}(a, b); }, call.output(0),
                    {&call.input(0), &call.input(1)});
  });
}

}  // namespace

void register_compare(KernelTable& table) {
  table.add("eq", kernel<compare_kernel<pw::Eq>>);
  table.add("ne", kernel<compare_kernel<pw::Ne>>);
  table.add("lt", kernel<compare_kernel<pw::Lt>>);
  table.add("le", kernel<compare_kernel<pw::Le>>);
  table.add("gt", kernel<compare_kernel<pw::Gt>>);
  table.add("ge", kernel<compare_kernel<pw::Ge>>);
  table.add("logical_and", kernel<compare_kernel<pw::LogicalAnd>>);
  table.add("logical_or", kernel<compare_kernel<pw::LogicalOr>>);
  table.add("logical_xor", kernel<compare_kernel<pw::LogicalXor>>);
}

}  // namespace kiln::cpu
