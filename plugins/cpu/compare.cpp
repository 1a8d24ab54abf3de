// Comparisons and logical operators: inputs of any (same) dtype, a bool output.
#include "loops.hpp"
#include "registry.hpp"

namespace kiln::cpu {
namespace {

using sdk::kernel;

// out (bool) = Op::apply(a, b), a and b of the input dtype, compared in their compute type.
template <class Op>
void compare_kernel(const Call& call) {
  visit<Dtypes::all>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    map<bool, T, T>([](C a, C b) { return Op::apply(a, b); }, call.output(0),
                    {&call.input(0), &call.input(1)});
  });
}

struct Eq {
  template <class C> static bool apply(C a, C b) { return a == b; }
};
struct Ne {
  template <class C> static bool apply(C a, C b) { return a != b; }
};
struct Lt {
  template <class C> static bool apply(C a, C b) { return a < b; }
};
struct Le {
  template <class C> static bool apply(C a, C b) { return a <= b; }
};
struct Gt {
  template <class C> static bool apply(C a, C b) { return a > b; }
};
struct Ge {
  template <class C> static bool apply(C a, C b) { return a >= b; }
};

// Nonzero is true (NaN included); & and | rather than && and || keep the loops branch-free.
struct LogicalAnd {
  template <class C> static bool apply(C a, C b) { return (a != C(0)) & (b != C(0)); }
};
struct LogicalOr {
  template <class C> static bool apply(C a, C b) { return (a != C(0)) | (b != C(0)); }
};
struct LogicalXor {
  template <class C> static bool apply(C a, C b) { return (a != C(0)) != (b != C(0)); }
};

}  // namespace

void register_compare(KernelTable& table) {
  table.add("eq", kernel<compare_kernel<Eq>>);
  table.add("ne", kernel<compare_kernel<Ne>>);
  table.add("lt", kernel<compare_kernel<Lt>>);
  table.add("le", kernel<compare_kernel<Le>>);
  table.add("gt", kernel<compare_kernel<Gt>>);
  table.add("ge", kernel<compare_kernel<Ge>>);
  table.add("logical_and", kernel<compare_kernel<LogicalAnd>>);
  table.add("logical_or", kernel<compare_kernel<LogicalOr>>);
  table.add("logical_xor", kernel<compare_kernel<LogicalXor>>);
}

}  // namespace kiln::cpu
