// Operators that copy data into a new shape: cat, stack, repeat (composites over copy_), gather
// and index_select (primitives), one_hot, tril and triu (composites).
#include "elementwise.h"

#include "../autograd/function.h"

namespace kiln {
namespace detail {
namespace {

using IndexOp = Operator<Tensor(const Tensor&, int64_t, const Tensor&)>;

Tensor gather_backend(const IndexOp& op, const Tensor& x, int64_t dim, const Tensor& index) {
  KILN_CHECK_TYPE(index.dtype() == kLong, op.name(), "(): Expected dtype int64 for index, got ",
                  dtype_name(index.dtype()));
  int64_t ndim = std::max<int64_t>(x.dim(), 1);
  KILN_CHECK_VALUE(std::max<int64_t>(index.dim(), 1) == ndim, op.name(), "(): Index tensor must ",
                   "have the same number of dimensions as input tensor (", index.dim(), " vs ",
                   x.dim(), ")");
  dim = wrap_dim(dim, x.dim(), op.name());
  for (int64_t d = 0; d < x.dim(); ++d) {
    KILN_CHECK_VALUE(d == dim || index.sizes()[d] <= x.sizes()[d], op.name(), "(): Size does not ",
                     "match at dimension ", d, " expected index ", index.sizes(),
                     " to be smaller than self ", x.sizes(), " apart from dimension ", dim);
  }
  common_device(op.name(), {&x, &index});
  Tensor out = empty_tensor(index.sizes(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  run_kernel(op, {&x, &index}, {&out}, Attrs().i64("dim", dim));
  return out;
}

Tensor index_select_backend(const IndexOp& op, const Tensor& x, int64_t dim, const Tensor& index) {
  KILN_CHECK_TYPE(index.dtype() == kLong || index.dtype() == kInt, op.name(),
                  "(): Expected dtype int32/int64 for index, got ", dtype_name(index.dtype()));
  KILN_CHECK_VALUE(index.dim() <= 1, op.name(), "(): Index is supposed to be a vector, got a ",
                   index.dim(), "-D tensor");
  common_device(op.name(), {&x, &index});
  Tensor idx = index.dtype() == kLong ? index.reshape({-1}) : index.to(kLong).reshape({-1});
  if (x.dim() == 0) {
    wrap_dim(dim, 0, op.name());
    KILN_CHECK_VALUE(idx.numel() == 1, op.name(), "(): index_select() on a 0-dim tensor takes one ",
                     "index, got ", idx.numel());
    return x.reshape({1}).index_select(0, idx).reshape({});
  }
  dim = wrap_dim(dim, x.dim(), op.name());
  DimVector sizes(x.sizes());
  sizes[dim] = idx.numel();
  Tensor out = empty_tensor(sizes, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  run_kernel(op, {&x, &idx}, {&out}, Attrs().i64("dim", dim));
  return out;
}

}  // namespace

IndexOp gather_op("gather", "gather(Tensor self, int dim, Tensor index) -> Tensor", gather_backend);
IndexOp index_select_op("index_select",
                        "index_select(Tensor self, int dim, Tensor index) -> "
                        "Tensor",
                        index_select_backend);

}  // namespace detail

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  return detail::gather_op(x, dim, index);
}
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return detail::index_select_op(x, dim, index);
}

namespace {
Tensor cat_impl(TensorList tensors, int64_t dim);
}

namespace {
using ListOp = Operator<Tensor(TensorList, int64_t)>;

// cat is built from copy_ into parts of its output; its gradient is recorded here as one node
// (each input gets its slice of the gradient).
Tensor cat_backend(const ListOp&, TensorList tensors, int64_t dim) {
  std::vector<const Tensor*> inputs;
  bool record = false;
  for (const Tensor& t : tensors) {
    inputs.push_back(&t);
    record = record || t.requires_grad();
  }
  if (!record || !autograd::GradMode::is_enabled()) return cat_impl(tensors, dim);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = cat_impl(tensors, dim);
  }
  int64_t d = detail::wrap_dim(dim, out.dim(), "cat");
  std::vector<std::pair<int64_t, int64_t>> parts;  // (offset, length); length -1 for skipped
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    bool skipped = t.dim() == 1 && t.numel() == 0 && out.dim() != 1;
    int64_t length = skipped ? -1 : t.sizes()[d];
    parts.emplace_back(offset, length);
    if (!skipped) offset += length;
  }
  autograd::detail::record("CatBackward0", inputs, {&out},
                           [parts, d](autograd::detail::FunctionNode& n,
                                      const std::vector<Tensor>& g) {
                             std::vector<Tensor> grads(parts.size());
                             for (size_t i = 0; i < parts.size(); ++i) {
                               if (!n.needs_input_grad(i)) continue;
                               auto [start, length] = parts[i];
                               grads[i] = length < 0 ? zeros({0}, g[0].options())
                                                     : g[0].narrow(d, start, length);
                             }
                             return grads;
                           });
  return out;
}
}  // namespace

namespace {
Tensor cat_impl(TensorList tensors, int64_t dim) {
  KILN_CHECK_VALUE(!tensors.empty(), "cat(): expected a non-empty list of Tensors");
  // 1-D empty tensors are skipped, as in PyTorch (legacy behaviour)
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    if (!(t.dim() == 1 && t.numel() == 0)) {
      ref = &t;
      break;
    }
  }
  if (ref == nullptr) return tensors[0].clone();
  KILN_CHECK_VALUE(ref->dim() > 0, "cat(): zero-dimensional tensor cannot be concatenated");
  dim = detail::wrap_dim(dim, ref->dim(), "cat");
  ScalarType dtype = tensors[0].dtype();
  DimVector sizes(ref->sizes());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    dtype = promote_types(dtype, t.dtype());
    KILN_CHECK_VALUE(t.device() == ref->device(), "cat(): expected all tensors to be on the same ",
                     "device, but found ", ref->device().str(), " and ", t.device().str());
    if (t.dim() == 1 && t.numel() == 0) continue;
    KILN_CHECK_VALUE(t.dim() == ref->dim(),
                     "cat(): Tensors must have same number of dimensions: ", "got ", ref->dim(),
                     " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      KILN_CHECK_VALUE(d == dim || t.sizes()[d] == ref->sizes()[d], "cat(): Sizes of tensors must ",
                       "match except in dimension ", dim, ". Expected size ", ref->sizes()[d],
                       " but got size ", t.sizes()[d], " for tensor number ", i, " in the list.");
    }
    KILN_CHECK_VALUE(!__builtin_add_overflow(total, t.sizes()[dim], &total), "cat(): the ",
                     "sizes in dimension ", dim, " of the tensors add up to more than 2^63 - 1 ",
                     "(tensor number ", i, " has size ", t.sizes()[dim], ")");
  }
  sizes[dim] = total;
  detail::checked_numel("cat", sizes, dtype);
  Tensor out = detail::empty_tensor(sizes, dtype, ref->device());
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) continue;
    out.narrow(dim, offset, t.sizes()[dim]).copy_(t);
    offset += t.sizes()[dim];
  }
  return out;
}
}  // namespace

namespace {
Tensor stack_backend(const ListOp&, TensorList tensors, int64_t dim) {
  KILN_CHECK_VALUE(!tensors.empty(), "stack expects a non-empty TensorList");
  for (size_t i = 1; i < tensors.size(); ++i) {
    KILN_CHECK_VALUE(tensors[i].sizes().equals(tensors[0].sizes()), "stack expects each tensor to ",
                     "be equal size, but got ", tensors[0].sizes(), " at entry 0 and ",
                     tensors[i].sizes(), " at entry ", i);
  }
  dim = detail::wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  for (const Tensor& t : tensors) expanded.push_back(t.unsqueeze(dim));
  return cat(expanded, dim);
}

// Composite operators (not plain functions) so that autocast can promote their inputs.
ListOp cat_op("cat", "cat(Tensor[] tensors, int dim=0) -> Tensor", cat_backend, false);
ListOp stack_op("stack", "stack(Tensor[] tensors, int dim=0) -> Tensor", stack_backend, false);
}  // namespace

Tensor cat(TensorList tensors, int64_t dim) { return cat_op(tensors, dim); }
Tensor stack(TensorList tensors, int64_t dim) { return stack_op(tensors, dim); }

Tensor repeat(const Tensor& x, IntArrayRef repeats) {
  KILN_CHECK_VALUE(static_cast<int64_t>(repeats.size()) >= x.dim(), "repeat: number of repeat ",
                   "dims (", repeats.size(), ") can not be smaller than number of dimensions of ",
                   "tensor (", x.dim(), ")");
  size_t lead = repeats.size() - static_cast<size_t>(x.dim());
  // view x as [1, s0, 1, s1, ...], expand to [r0, s0, r1, s1, ...], copy, fold pairs
  DimVector view_sizes, expand_sizes, out_sizes;
  for (size_t i = 0; i < repeats.size(); ++i) {
    KILN_CHECK_VALUE(repeats[i] >= 0, "repeat: repeats can not be negative (got ", repeats, ")");
    int64_t s = i < lead ? 1 : x.sizes()[i - lead];
    view_sizes.push_back(1);
    view_sizes.push_back(s);
    expand_sizes.push_back(repeats[i]);
    expand_sizes.push_back(s);
    int64_t n = 0;
    KILN_CHECK_VALUE(!__builtin_mul_overflow(repeats[i], s, &n), "repeat: repeats ", repeats,
                     " of a tensor of sizes ", x.sizes(), " overflow int64 in dimension ", i);
    out_sizes.push_back(n);
  }
  detail::checked_numel("repeat", out_sizes, x.dtype());
  return x.reshape(view_sizes).expand(expand_sizes).contiguous().view(out_sizes);
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  KILN_CHECK_TYPE(indices.dtype() == kLong, "one_hot is only applicable to index tensor (int64), ",
                  "got ", dtype_name(indices.dtype()));
  if (num_classes == -1) {
    KILN_CHECK_VALUE(indices.numel() > 0, "one_hot: can not infer total number of classes from ",
                     "empty tensor.");
    num_classes = max(indices).item<int64_t>() + 1;
  }
  if (indices.numel() > 0) {
    KILN_CHECK_VALUE(min(indices).item<int64_t>() >= 0, "one_hot: Class values must be ",
                     "non-negative.");
    KILN_CHECK_VALUE(max(indices).item<int64_t>() < num_classes, "one_hot: Class values must be ",
                     "smaller than num_classes.");
  }
  Tensor classes = arange(num_classes, TensorOptions().dtype(kLong).device(indices.device()));
  return eq(indices.unsqueeze(-1), classes).to(kLong);
}

namespace {
// mask[i, j] = (j - i) >= diagonal for triu, <= for tril, over the last two dims of x.
Tensor triangle_mask(const Tensor& x, int64_t diagonal, bool upper, const char* op) {
  KILN_CHECK_VALUE(x.dim() >= 2, op, ": input tensor must have at least 2 dimensions");
  TensorOptions opts = TensorOptions().dtype(kLong).device(x.device());
  Tensor rows = arange(x.size(-2), opts).unsqueeze(1);
  Tensor cols = arange(x.size(-1), opts).unsqueeze(0);
  Tensor offset = cols - rows;
  return upper ? ge(offset, diagonal) : le(offset, diagonal);
}
}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  return where(triangle_mask(x, diagonal, false, "tril"), x, zeros({}, x.options()));
}
Tensor triu(const Tensor& x, int64_t diagonal) {
  return where(triangle_mask(x, diagonal, true, "triu"), x, zeros({}, x.options()));
}

Tensor Tensor::repeat(IntArrayRef repeats) const { return kiln::repeat(*this, repeats); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return kiln::gather(*this, dim, index);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return kiln::index_select(*this, dim, index);
}
Tensor Tensor::tril(int64_t diagonal) const { return kiln::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return kiln::triu(*this, diagonal); }

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
// gather and index_select read x at indices; their gradients add g back at the same indices
// (scatter_add, index_add in scatter.cpp), so repeated indices accumulate.
namespace kiln::detail {
namespace {

Tensor index_autograd(const IndexOp& op, const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, dim, index);
  }
  bool is_gather = op.name()[0] == 'g';
  DimVector sizes(x.sizes());
  autograd::detail::record_simple(
      is_gather ? "GatherBackward0" : "IndexSelectBackward0", x, out,
      [is_gather, sizes, dim, index](const Tensor& g) {
        // a 0-dim x is seen as one element along dim, as the forward does
        DimVector sizes1 = sizes.empty() ? DimVector{1} : sizes;
        Tensor zero = zeros(sizes1, g.options());
        Tensor idx = index.dim() == 0 ? index.reshape({1}) : index;
        Tensor grad = g.dim() == 0 ? g.reshape({1}) : g;
        Tensor r = is_gather ? scatter_add(zero, dim, idx, grad) : index_add(zero, dim, idx, grad);
        return r.reshape(sizes);
      },
      /*view=*/false);
  return out;
}

const bool shape_backwards_registered = [] {
  gather_op.set_kernel(DispatchKey::Autograd, index_autograd);
  index_select_op.set_kernel(DispatchKey::Autograd, index_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
