// Sorting and selection along one dimension. Primitives: sort, topk, cummax and cummin (a plugin
// kernel each; their gradients scatter the output gradient back through the indices). Composites:
// argsort, msort, kthvalue, median, nanmedian (sort_select.cpp).
//
// Note [Sort order]: every kernel orders values as PyTorch does: NaN above +inf (so it comes last
// ascending and first descending), -0.0 equal to 0.0, and ties in their original order (sort is
// always stable; PyTorch leaves ties unspecified unless stable=true, and this is one of its
// allowed orders). topk breaks ties toward the lower index.
#include "elementwise.h"

#include "../autograd/function.h"

namespace kiln {
namespace detail {
namespace {

using SortOp = Operator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool, bool)>;
using TopkOp = Operator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool, bool)>;
using CumExtremeOp = Operator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t)>;

Tensor long_zeros(IntArrayRef sizes, Device device) {
  return zeros(sizes, TensorOptions().dtype(kLong).device(device));
}

// The kernel sees x contiguous and contiguous outputs of x's dtype and int64.
std::tuple<Tensor, Tensor> sort_backend(const SortOp& op, const Tensor& x, int64_t dim,
                                        bool descending, bool stable) {
  dim = wrap_dim(dim, x.dim(), op.name());
  if (x.dim() == 0) return {x.clone(), long_zeros({}, x.device())};
  Tensor in = x.contiguous();
  Tensor values = empty_tensor(x.sizes(), x.dtype(), x.device());
  Tensor indices = empty_tensor(x.sizes(), kLong, x.device());
  if (x.numel() == 0) return {values, indices};
  run_kernel(op, {&in}, {&values, &indices},
             Attrs().i64("dim", dim).boolean("descending", descending).boolean("stable", stable));
  return {values, indices};
}

std::tuple<Tensor, Tensor> topk_backend(const TopkOp& op, const Tensor& x, int64_t k, int64_t dim,
                                        bool largest, bool sorted) {
  dim = wrap_dim(dim, x.dim(), op.name());
  int64_t size = x.dim() == 0 ? 1 : x.sizes()[dim];
  KILN_CHECK_INDEX(k >= 0 && k <= size, op.name(), "(): selected index k out of range: k = ", k,
                   " for dimension ", dim, " of size ", size, " (input ", x.sizes(), " on ",
                   x.device(), "); pick k between 0 and ", size);
  // a 0-dim input gives itself for k = 0 too, as PyTorch's
  if (x.dim() == 0) return {x.clone(), long_zeros({}, x.device())};
  DimVector sizes(x.sizes());
  sizes[dim] = k;
  Tensor values = empty_tensor(sizes, x.dtype(), x.device());
  Tensor indices = empty_tensor(sizes, kLong, x.device());
  if (values.numel() == 0) return {values, indices};
  Tensor in = x.contiguous();
  run_kernel(
      op, {&in}, {&values, &indices},
      Attrs().i64("k", k).i64("dim", dim).boolean("largest", largest).boolean("sorted", sorted));
  return {values, indices};
}

std::tuple<Tensor, Tensor> cum_extreme_backend(const CumExtremeOp& op, const Tensor& x,
                                               int64_t dim) {
  dim = wrap_dim(dim, x.dim(), op.name());
  if (x.dim() == 0) return {x.clone(), long_zeros({}, x.device())};
  Tensor in = x.contiguous();
  Tensor values = empty_tensor(x.sizes(), x.dtype(), x.device());
  Tensor indices = empty_tensor(x.sizes(), kLong, x.device());
  if (x.numel() == 0) return {values, indices};
  run_kernel(op, {&in}, {&values, &indices}, Attrs().i64("dim", dim));
  return {values, indices};
}

}  // namespace

SortOp sort_op("sort",
               "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
               "(Tensor values, Tensor indices)",
               sort_backend);
TopkOp topk_op("topk",
               "topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> "
               "(Tensor values, Tensor indices)",
               topk_backend);
CumExtremeOp cummax_op("cummax", "cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
                       cum_extreme_backend);
CumExtremeOp cummin_op("cummin", "cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
                       cum_extreme_backend);

}  // namespace detail

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  return detail::sort_op(x, dim, descending, false);
}
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::optional<bool> stable, int64_t dim,
                                bool descending) {
  return detail::sort_op(x, dim, descending, stable.value_or(false));
}
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  return detail::topk_op(x, k, dim, largest, sorted);
}
std::tuple<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) {
  return detail::cummax_op(x, dim);
}
std::tuple<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) {
  return detail::cummin_op(x, dim);
}

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return kiln::sort(*this, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> stable, int64_t dim,
                                        bool descending) const {
  return kiln::sort(*this, stable, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return kiln::topk(*this, k, dim, largest, sorted);
}
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return kiln::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return kiln::cummin(*this, dim); }

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
// Each output element is one input element (indices say which), so the input's gradient is the
// output's scattered back: zeros with g added at the indices along dim (scatter_add, whose own
// gradient is gather, so the formula differentiates again). sort and topk pick each input
// element at most once; cummax picks one many times, and the scatter adds those up.
namespace kiln::detail {
namespace {

Tensor scatter_back(const Tensor& g, const Tensor& indices, IntArrayRef sizes, int64_t dim) {
  if (sizes.empty()) return g;
  return scatter_add(zeros(sizes, g.options()), dim, indices, g);
}

void record_scatter_back(const char* name, const Tensor& x, const Tensor& values,
                         const Tensor& indices, int64_t dim) {
  DimVector sizes(x.sizes());
  int64_t d = wrap_dim(dim, x.dim(), name);
  autograd::detail::record_simple(
      name, x, values,
      [sizes, indices, d](const Tensor& g) { return scatter_back(g, indices, sizes, d); }, false);
}

template <class Op, class... Args>
auto below(const Op& op, Args... args) {
  ExcludeDispatchKeyGuard guard(DispatchKey::Autograd);
  return op(args...);
}

std::tuple<Tensor, Tensor> sort_autograd(const SortOp& op, const Tensor& x, int64_t dim,
                                         bool descending, bool stable) {
  auto [values, indices] = below(op, x, dim, descending, stable);
  record_scatter_back("SortBackward0", x, values, indices, dim);
  return {values, indices};
}

std::tuple<Tensor, Tensor> topk_autograd(const TopkOp& op, const Tensor& x, int64_t k, int64_t dim,
                                         bool largest, bool sorted) {
  auto [values, indices] = below(op, x, k, dim, largest, sorted);
  record_scatter_back("TopkBackward0", x, values, indices, dim);
  return {values, indices};
}

std::tuple<Tensor, Tensor> cum_extreme_autograd(const CumExtremeOp& op, const Tensor& x,
                                                int64_t dim) {
  auto [values, indices] = below(op, x, dim);
  record_scatter_back(op.name()[4] == 'a' ? "CummaxBackward0" : "CumminBackward0", x, values,
                      indices, dim);
  return {values, indices};
}

const bool sort_backwards_registered = [] {
  sort_op.set_kernel(DispatchKey::Autograd, sort_autograd);
  topk_op.set_kernel(DispatchKey::Autograd, topk_autograd);
  cummax_op.set_kernel(DispatchKey::Autograd, cum_extreme_autograd);
  cummin_op.set_kernel(DispatchKey::Autograd, cum_extreme_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
