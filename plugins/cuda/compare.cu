// Comparison and logical kernels (bool results): kiln/sdk/pointwise.hpp's functors, one kernel per
// dtype each takes (pointwise.cuh).
#include "pointwise.cuh"

namespace kiln::cuda {

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
