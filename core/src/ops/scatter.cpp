// Accumulating writes at indices: index_add (the gradient of index_select) and scatter_add (the
// gradient of gather). Both are primitives whose kernel adds into an output that the core has
// already filled with a copy of self.
#include "elementwise.h"

#include "../autograd/function.h"

namespace kiln {
namespace detail {
namespace {

using AccumulateOp = Operator<Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&)>;

void check_same_dtype(const char* op, const Tensor& self, const Tensor& source, const char* what) {
  KILN_CHECK_TYPE(self.dtype() == source.dtype(), op, "(): self (", dtype_name(self.dtype()),
                  ") and ", what, " (", dtype_name(source.dtype()), ") must have the same ",
                  "scalar type");
  if (self.dtype() == kBool) throw_dtype_unsupported(op, self.dtype());
}

Tensor index_add_backend(const AccumulateOp& op, const Tensor& self, int64_t dim,
                         const Tensor& index, const Tensor& source) {
  KILN_CHECK_TYPE(index.dtype() == kLong || index.dtype() == kInt, op.name(),
                  "(): Expected dtype int32/int64 for index, got ", dtype_name(index.dtype()));
  KILN_CHECK_VALUE(index.dim() <= 1, op.name(), "(): Index is supposed to be a vector, got a ",
                   index.dim(), "-D tensor");
  check_same_dtype(op.name(), self, source, "source");
  common_device(op.name(), {&self, &index, &source});
  dim = wrap_dim(dim, self.dim(), op.name());
  Tensor idx = index.dtype() == kLong ? index.reshape({-1}) : index.to(kLong).reshape({-1});
  // a 0-dim self or source is seen as one element along dim
  Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  Tensor src = (source.dim() == 0 ? source.reshape({1}) : source).contiguous();
  KILN_CHECK_VALUE(src.dim() == x.dim(), op.name(), "(): source ", source.sizes(), " and self ",
                   self.sizes(), " must have the same number of dimensions");
  KILN_CHECK_VALUE(idx.numel() == src.sizes()[dim], op.name(), "(): Number of indices (",
                   idx.numel(), ") should be equal to source.size(dim) (", src.sizes()[dim], ")");
  for (int64_t d = 0; d < x.dim(); ++d) {
    KILN_CHECK_VALUE(d == dim || src.sizes()[d] == x.sizes()[d], op.name(), "(): source ",
                     source.sizes(), " must have the sizes of self ", self.sizes(),
                     " except at dimension ", dim, " (they differ at dimension ", d, ")");
  }
  Tensor out = x.clone();  // contiguous
  if (idx.numel() > 0 && out.numel() > 0) {
    run_kernel(op, {&idx, &src}, {&out}, Attrs().i64("dim", dim));
  }
  return self.dim() == 0 ? out.reshape({}) : out;
}

Tensor scatter_add_backend(const AccumulateOp& op, const Tensor& self, int64_t dim,
                           const Tensor& index, const Tensor& src) {
  KILN_CHECK_TYPE(index.dtype() == kLong, op.name(), "(): Expected dtype int64 for index, got ",
                  dtype_name(index.dtype()));
  check_same_dtype(op.name(), self, src, "src");
  common_device(op.name(), {&self, &index, &src});
  dim = wrap_dim(dim, self.dim(), op.name());
  Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  Tensor i = index.dim() == 0 ? index.reshape({1}) : index;
  Tensor s = src.dim() == 0 ? src.reshape({1}) : src;
  KILN_CHECK_VALUE(i.dim() == x.dim() && s.dim() == x.dim(), op.name(), "(): Index tensor must ",
                   "have the same number of dimensions as self and src (index ", index.sizes(),
                   ", self ", self.sizes(), ", src ", src.sizes(), ")");
  for (int64_t d = 0; d < x.dim(); ++d) {
    KILN_CHECK_VALUE(i.sizes()[d] <= s.sizes()[d] && (d == dim || i.sizes()[d] <= x.sizes()[d]),
                     op.name(), "(): Expected index ", index.sizes(), " to be smaller than self ",
                     self.sizes(), " apart from dimension ", dim, " and to be smaller size than ",
                     "src ", src.sizes());
  }
  Tensor out = x.clone();
  if (i.numel() > 0 && out.numel() > 0) {
    // src seen with index's sizes (its extra elements are not read)
    Tensor s_view = s.as_strided(i.sizes(), s.strides(), s.storage_offset());
    run_kernel(op, {&i, &s_view}, {&out}, Attrs().i64("dim", dim));
  }
  return self.dim() == 0 ? out.reshape({}) : out;
}

}  // namespace

AccumulateOp index_add_op("index_add",
                          "index_add(Tensor self, int dim, Tensor index, "
                          "Tensor source) -> Tensor",
                          index_add_backend);
AccumulateOp scatter_add_op("scatter_add",
                            "scatter_add(Tensor self, int dim, Tensor index, "
                            "Tensor src) -> Tensor",
                            scatter_add_backend);

}  // namespace detail

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  return detail::index_add_op(x, dim, index, source);
}
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::scatter_add_op(x, dim, index, src);
}

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
namespace kiln::detail {
namespace {

using autograd::detail::FunctionNode;

// index_add: self gets the gradient as is, source the rows of it that index picks.
// scatter_add: self likewise, src the elements of it that index points at (zero elsewhere).
Tensor accumulate_autograd(const AccumulateOp& op, const Tensor& self, int64_t dim,
                           const Tensor& index, const Tensor& source) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(self, dim, index, source);
  }
  bool is_index_add = op.name()[0] == 'i';
  DimVector source_sizes(source.sizes());
  auto node = autograd::detail::record(
      is_index_add ? "IndexAddBackward0" : "ScatterAddBackward0", {&self, &source}, {&out},
      [is_index_add, dim, index, source_sizes](FunctionNode& n, const std::vector<Tensor>& g) {
        std::vector<Tensor> grads(2);
        if (n.needs_input_grad(0)) grads[0] = g[0];
        if (!n.needs_input_grad(1)) return grads;
        Tensor grad = g[0].dim() == 0 ? g[0].reshape({1}) : g[0];
        Tensor idx = index.dim() == 0 ? index.reshape({1}) : index;
        if (is_index_add) {
          grads[1] = index_select(grad, dim, idx).reshape(source_sizes);
        } else {
          Tensor picked = gather(grad, dim, idx);
          // src may be larger than index: its other elements get zero
          for (int64_t d = 0; d < picked.dim(); ++d) {
            int64_t want = source_sizes.empty() ? 1 : source_sizes[d];
            if (picked.size(d) == want) continue;
            DimVector pad(picked.sizes());
            pad[d] = want - picked.size(d);
            picked = cat({picked, zeros(pad, picked.options())}, d);
          }
          grads[1] = picked.reshape(source_sizes);
        }
        return grads;
      });
  (void)node;
  return out;
}

const bool scatter_backwards_registered = [] {
  index_add_op.set_kernel(DispatchKey::Autograd, accumulate_autograd);
  scatter_add_op.set_kernel(DispatchKey::Autograd, accumulate_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
