// View operators: new tensors over the same storage. They need no kernel and run on every
// device; each is an operator so that autograd can record it.
#include "elementwise.h"

#include "../autograd/function.h"

#include <algorithm>
#include <optional>

namespace kiln {
namespace detail {
namespace {

using ViewOp = Operator<Tensor(const Tensor&, IntArrayRef)>;
using DimsOp = Operator<Tensor(const Tensor&, int64_t, int64_t)>;
using DimOp = Operator<Tensor(const Tensor&, int64_t)>;
using NarrowOp = Operator<Tensor(const Tensor&, int64_t, int64_t, int64_t)>;
using SliceOp = Operator<Tensor(const Tensor&, int64_t, std::optional<int64_t>,
                                std::optional<int64_t>, int64_t)>;
using StridedOp = Operator<Tensor(const Tensor&, IntArrayRef, IntArrayRef, int64_t)>;

// The result of a view operator: a view of x's storage. See Note [Views made without recording].
Tensor view_of(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  Tensor v = make_view(x, sizes, strides, offset);
  autograd::detail::note_unrecorded_view(x, v);
  return v;
}

// Sizes with one -1 inferred; ValueError when numel does not match.
DimVector infer_size(const char* op, IntArrayRef sizes, int64_t numel) {
  DimVector out(sizes);
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      KILN_CHECK_VALUE(infer < 0, op, ": only one dimension can be inferred");
      infer = static_cast<int>(i);
    } else {
      KILN_CHECK_VALUE(sizes[i] >= 0, op, ": invalid shape dimension ", sizes[i]);
      KILN_CHECK_VALUE(!__builtin_mul_overflow(known, sizes[i], &known), op, ": shape '", sizes,
                       "' is too large: the product of its sizes overflows int64");
    }
  }
  if (infer >= 0) {
    KILN_CHECK_VALUE(known != 0 && numel % known == 0, op, ": shape '", sizes,
                     "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    KILN_CHECK_VALUE(known == numel, op, ": shape '", sizes, "' is invalid for input of size ",
                     numel);
  }
  return out;
}

// Strides for viewing (sizes, strides) as new_sizes without copying, as PyTorch's
// computeStride; nullopt when impossible (or when a stride would overflow int64).
std::optional<DimVector> view_strides(const char* op, IntArrayRef sizes, IntArrayRef strides,
                                      IntArrayRef new_sizes, ScalarType dtype) {
  DimVector out(new_sizes.size());
  if (product(sizes) == 0) {
    checked_numel(op, new_sizes, dtype);  // Note [Checked sizes]: the strides must fit
    return contiguous_strides(new_sizes);
  }
  if (sizes.empty()) return DimVector(new_sizes.size(), 1);  // a 0-dim tensor: all sizes are 1
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base = strides.empty() ? 1 : strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    int64_t chunk = 0;
    if (d > 0 && __builtin_mul_overflow(tensor_numel, chunk_base, &chunk)) return std::nullopt;
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != chunk)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        if (__builtin_mul_overflow(view_numel, chunk_base, &out[view_d])) return std::nullopt;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Tensor view_backend(const ViewOp& op, const Tensor& x, IntArrayRef sizes) {
  DimVector shape = infer_size(op.name(), sizes, x.numel());
  auto strides = view_strides(op.name(), x.sizes(), x.strides(), shape, x.dtype());
  KILN_CHECK_VALUE(strides.has_value(), op.name(), ": view size is not compatible with input ",
                   "tensor's size and stride (at least one dimension spans across two ",
                   "contiguous subspaces). Use .reshape(...) instead.");
  return view_of(x, shape, *strides, x.storage_offset());
}

Tensor reshape_backend(const ViewOp& op, const Tensor& x, IntArrayRef sizes) {
  DimVector shape = infer_size(op.name(), sizes, x.numel());
  auto strides = view_strides(op.name(), x.sizes(), x.strides(), shape, x.dtype());
  if (strides) return view_of(x, shape, *strides, x.storage_offset());
  return x.clone().view(shape);
}

Tensor expand_backend(const ViewOp& op, const Tensor& x, IntArrayRef sizes) {
  KILN_CHECK_VALUE(sizes.size() >= static_cast<size_t>(x.dim()), op.name(), ": the number of ",
                   "sizes provided (", sizes.size(), ") must be greater or equal to the number ",
                   "of dimensions in the tensor (", x.dim(), ")");
  size_t n = sizes.size(), lead = n - static_cast<size_t>(x.dim());
  DimVector out_sizes(n), out_strides(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t want = sizes[i];
    if (i < lead) {
      KILN_CHECK_VALUE(want >= 0, op.name(), ": the expanded size of the tensor (", want,
                       ") isn't allowed in a leading, non-existing dimension ", i);
      out_sizes[i] = want;
      out_strides[i] = 0;
      continue;
    }
    int64_t have = x.sizes()[i - lead];
    if (want == -1) want = have;
    KILN_CHECK_VALUE(have == want || have == 1, op.name(), ": the expanded size of the tensor (",
                     want, ") must match the existing size (", have, ") at non-singleton ",
                     "dimension ", i, ".  Target sizes: ", sizes, ".  Tensor sizes: ", x.sizes());
    out_sizes[i] = want;
    out_strides[i] = have == want ? x.strides()[i - lead] : 0;
  }
  checked_numel(op.name(), out_sizes, x.dtype());
  return view_of(x, out_sizes, out_strides, x.storage_offset());
}

Tensor permute_backend(const ViewOp& op, const Tensor& x, IntArrayRef dims) {
  KILN_CHECK_VALUE(static_cast<int64_t>(dims.size()) == x.dim(), op.name(), ": number of dims ",
                   "don't match in permute (got ", dims.size(), " for a tensor of ", x.dim(),
                   " dimensions)");
  DimVector sizes(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], x.dim(), op.name());
    KILN_CHECK_VALUE(!seen[d], op.name(), ": repeated dim ", d, " in ", dims);
    seen[d] = true;
    sizes[i] = x.sizes()[d];
    strides[i] = x.strides()[d];
  }
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor transpose_backend(const DimsOp& op, const Tensor& x, int64_t d0, int64_t d1) {
  if (x.dim() == 0) return view_of(x, {}, {}, x.storage_offset());
  d0 = wrap_dim(d0, x.dim(), op.name());
  d1 = wrap_dim(d1, x.dim(), op.name());
  DimVector sizes(x.sizes()), strides(x.strides());
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor narrow_backend(const NarrowOp& op, const Tensor& x, int64_t dim, int64_t start,
                      int64_t length) {
  KILN_CHECK_INDEX(x.dim() > 0, op.name(), "() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, x.dim(), op.name());
  int64_t size = x.sizes()[dim];
  if (start < 0) start += size;
  KILN_CHECK_INDEX(start >= 0 && start <= size, op.name(), ": start (", start,
                   ") out of range for dimension ", dim, " of size ", size);
  KILN_CHECK_VALUE(length >= 0 && length <= size - start, op.name(), ": start (", start,
                   ") + length (", length, ") exceeds dimension size (", size, ").");
  DimVector sizes(x.sizes());
  sizes[dim] = length;
  return view_of(x, sizes, x.strides(), x.storage_offset() + start * x.strides()[dim]);
}

Tensor slice_backend(const SliceOp& op, const Tensor& x, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  KILN_CHECK_INDEX(x.dim() > 0, op.name(), "() cannot be applied to a 0-dim tensor.");
  KILN_CHECK_VALUE(step > 0, op.name(), ": slice step must be positive (got ", step, ")");
  dim = wrap_dim(dim, x.dim(), op.name());
  int64_t size = x.sizes()[dim];
  auto clamp_index = [size](int64_t i) {
    if (i < 0) i += size;
    return std::clamp<int64_t>(i, 0, size);
  };
  int64_t s = start ? clamp_index(*start) : 0;
  int64_t e = end ? clamp_index(*end) : size;
  int64_t length = e > s ? (e - s - 1) / step + 1 : 0;
  DimVector sizes(x.sizes()), strides(x.strides());
  sizes[dim] = length;
  // stride * step overflows only when length <= 1, and then any stride will do
  int64_t stride = 0;
  if (!__builtin_mul_overflow(strides[dim], step, &stride)) strides[dim] = stride;
  return view_of(x, sizes, strides, x.storage_offset() + s * x.strides()[dim]);
}

Tensor as_strided_backend(const StridedOp& op, const Tensor& x, IntArrayRef sizes,
                          IntArrayRef strides, int64_t offset) {
  KILN_CHECK_VALUE(sizes.size() == strides.size(), op.name(), ": mismatch in length of sizes (",
                   sizes.size(), ") and strides (", strides.size(), ")");
  KILN_CHECK_VALUE(offset >= 0, op.name(), ": negative storage offset ", offset);
  int64_t numel = checked_numel(op.name(), sizes, x.dtype());
  int64_t last = offset;  // the last element addressed, unless it overflows
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    KILN_CHECK_VALUE(strides[i] >= 0, op.name(), ": negative stride ", strides[i], " in ", strides);
    int64_t span = 0;
    if (sizes[i] > 0) {
      overflow = overflow || __builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
                 __builtin_add_overflow(last, span, &last);
    }
  }
  int64_t capacity = static_cast<int64_t>(x.storage()->nbytes() / x.element_size());
  KILN_CHECK_VALUE(numel == 0 || (!overflow && last < capacity), op.name(), ": setStorage: sizes ",
                   sizes, ", strides ", strides, " and storage offset ", offset,
                   " need more elements than the storage holds (", capacity, ")");
  return view_of(x, sizes, strides, offset);
}

Tensor unsqueeze_backend(const DimOp& op, const Tensor& x, int64_t dim) {
  dim = wrap_dim(dim, x.dim() + 1, op.name());
  DimVector sizes(x.sizes()), strides(x.strides());
  // as PyTorch, size * stride of the next dimension; any stride serves a dimension of size 1,
  // so 1 where that overflows
  int64_t stride = 1;
  if (dim < x.dim() && __builtin_mul_overflow(x.sizes()[dim], x.strides()[dim], &stride)) {
    stride = 1;
  }
  sizes.insert(static_cast<size_t>(dim), 1);
  strides.insert(static_cast<size_t>(dim), stride);
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor squeeze_dim_backend(const DimOp& op, const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return view_of(x, {}, {}, x.storage_offset());
  dim = wrap_dim(dim, x.dim(), op.name());
  if (x.sizes()[dim] != 1) return view_of(x, x.sizes(), x.strides(), x.storage_offset());
  DimVector sizes(x.sizes()), strides(x.strides());
  sizes.erase(static_cast<size_t>(dim));
  strides.erase(static_cast<size_t>(dim));
  return view_of(x, sizes, strides, x.storage_offset());
}

using UnaryViewOp = Operator<Tensor(const Tensor&)>;
Tensor squeeze_backend(const UnaryViewOp&, const Tensor& x) {
  DimVector sizes, strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (x.sizes()[d] == 1) continue;
    sizes.push_back(x.sizes()[d]);
    strides.push_back(x.strides()[d]);
  }
  return view_of(x, sizes, strides, x.storage_offset());
}

Tensor select_backend_impl(const DimsOp& op, const Tensor& x, int64_t dim, int64_t index) {
  KILN_CHECK_INDEX(x.dim() > 0, op.name(), "() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, x.dim(), op.name());
  int64_t size = x.sizes()[dim];
  KILN_CHECK_INDEX(index >= -size && index < size, op.name(), "(): index ", index,
                   " out of range for tensor of size ", x.sizes(), " at dimension ", dim);
  if (index < 0) index += size;
  DimVector sizes(x.sizes()), strides(x.strides());
  sizes.erase(static_cast<size_t>(dim));
  strides.erase(static_cast<size_t>(dim));
  return view_of(x, sizes, strides, x.storage_offset() + index * x.strides()[dim]);
}

}  // namespace

ViewOp view_op("view", "view(Tensor(a) self, SymInt[] size) -> Tensor(a)", view_backend, false);
ViewOp reshape_op("reshape", "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
                  reshape_backend, false);
ViewOp expand_op("expand", "expand(Tensor(a) self, SymInt[] size) -> Tensor(a)", expand_backend,
                 false);
ViewOp permute_op("permute", "permute(Tensor(a) self, int[] dims) -> Tensor(a)", permute_backend,
                  false);
DimsOp transpose_op("transpose", "transpose(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
                    transpose_backend, false);
DimsOp select_op("select", "select(Tensor(a) self, int dim, int index) -> Tensor(a)",
                 select_backend_impl, false);
NarrowOp narrow_op("narrow", "narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)",
                   narrow_backend, false);
SliceOp slice_op("slice",
                 "slice(Tensor(a) self, int dim, int? start, int? end, int step=1) -> Tensor(a)",
                 slice_backend, false);
StridedOp as_strided_op("as_strided",
                        "as_strided(Tensor(a) self, int[] size, int[] stride, int offset) -> "
                        "Tensor(a)",
                        as_strided_backend, false);
DimOp unsqueeze_op("unsqueeze", "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
                   unsqueeze_backend, false);
DimOp squeeze_dim_op("squeeze.dim", "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
                     squeeze_dim_backend, false);
UnaryViewOp squeeze_op("squeeze", "squeeze(Tensor(a) self) -> Tensor(a)", squeeze_backend, false);

}  // namespace detail

Tensor Tensor::view(IntArrayRef sizes) const { return detail::view_op(*this, sizes); }
Tensor Tensor::reshape(IntArrayRef sizes) const { return detail::reshape_op(*this, sizes); }
Tensor Tensor::expand(IntArrayRef sizes) const { return detail::expand_op(*this, sizes); }
Tensor Tensor::permute(IntArrayRef dims) const { return detail::permute_op(*this, dims); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  return detail::transpose_op(*this, d0, d1);
}
Tensor Tensor::t() const {
  KILN_CHECK_VALUE(dim() <= 2, "t(): expects a tensor with <= 2 dimensions, but self is ", dim(),
                   "D");
  return dim() < 2 ? detail::transpose_op(*this, 0, 0) : detail::transpose_op(*this, 0, 1);
}
Tensor Tensor::select(int64_t dim, int64_t index) const {
  return detail::select_op(*this, dim, index);
}
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return detail::narrow_op(*this, dim, start, length);
}
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  return detail::slice_op(*this, dim, start, end, step);
}
Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides,
                          std::optional<int64_t> offset) const {
  return detail::as_strided_op(*this, sizes, strides, offset.value_or(storage_offset()));
}
Tensor Tensor::unsqueeze(int64_t dim) const { return detail::unsqueeze_op(*this, dim); }
Tensor Tensor::squeeze(int64_t dim) const { return detail::squeeze_dim_op(*this, dim); }
Tensor Tensor::squeeze() const { return detail::squeeze_op(*this); }

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  start_dim = detail::wrap_dim(start_dim, dim(), "flatten");
  end_dim = detail::wrap_dim(end_dim, dim(), "flatten");
  KILN_CHECK_VALUE(start_dim <= end_dim, "flatten: start_dim (", start_dim,
                   ") cannot come after end_dim (", end_dim, ")");
  DimVector sizes;
  for (int64_t d = 0; d < start_dim; ++d) sizes.push_back(this->sizes()[d]);
  int64_t n = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) n *= this->sizes()[d];
  sizes.push_back(n);
  for (int64_t d = end_dim + 1; d < dim(); ++d) sizes.push_back(this->sizes()[d]);
  return reshape(sizes);
}

std::vector<Tensor> Tensor::unbind(int64_t dim) const {
  KILN_CHECK_INDEX(this->dim() > 0, "unbind: dimension specified as 0 but tensor has no ",
                   "dimensions");
  dim = detail::wrap_dim(dim, this->dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < sizes()[dim]; ++i) out.push_back(select(dim, i));
  return out;
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  KILN_CHECK_VALUE(split_size > 0, "split: split_size must be positive (got ", split_size, ")");
  dim = detail::wrap_dim(dim, this->dim(), "split");
  std::vector<Tensor> out;
  for (int64_t start = 0; start < sizes()[dim]; start += split_size) {
    out.push_back(narrow(dim, start, std::min(split_size, sizes()[dim] - start)));
  }
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  KILN_CHECK_VALUE(chunks > 0, "chunk: chunks must be positive (got ", chunks, ")");
  int64_t size = sizes()[detail::wrap_dim(dim, this->dim(), "chunk")];
  return split(std::max<int64_t>((size + chunks - 1) / chunks, 1), dim);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) { return x.unbind(dim); }
Tensor reshape(const Tensor& x, IntArrayRef sizes) { return x.reshape(sizes); }
Tensor squeeze(const Tensor& x) { return x.squeeze(); }
Tensor squeeze(const Tensor& x, int64_t dim) { return x.squeeze(dim); }
Tensor unsqueeze(const Tensor& x, int64_t dim) { return x.unsqueeze(dim); }
Tensor flatten(const Tensor& x, int64_t s, int64_t e) { return x.flatten(s, e); }
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) { return x.transpose(d0, d1); }
Tensor permute(const Tensor& x, IntArrayRef dims) { return x.permute(dims); }
Tensor narrow(const Tensor& x, int64_t d, int64_t s, int64_t l) { return x.narrow(d, s, l); }
Tensor select(const Tensor& x, int64_t d, int64_t i) { return x.select(d, i); }

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
namespace kiln::detail {
namespace {

using autograd::detail::record_simple;
using autograd::detail::sum_to;

// Runs a view operator below the Autograd layer.
template <class Op, class... Args>
Tensor below(const Op& op, Args... args) {
  ExcludeDispatchKeyGuard guard(DispatchKey::Autograd);
  return op(args...);
}

Tensor reshape_autograd(const ViewOp& op, const Tensor& x, IntArrayRef sizes) {
  Tensor out = below(op, x, sizes);
  DimVector in_sizes(x.sizes());
  bool view = out.is_same_storage(x);
  record_simple(
      op.name() == std::string("view") ? "ViewBackward0" : "ReshapeAliasBackward0", x, out,
      [in_sizes](const Tensor& g) { return g.reshape(in_sizes); }, view);
  return out;
}

Tensor expand_autograd(const ViewOp& op, const Tensor& x, IntArrayRef sizes) {
  Tensor out = below(op, x, sizes);
  DimVector in_sizes(x.sizes());
  record_simple(
      "ExpandBackward0", x, out,
      [in_sizes](const Tensor& g) { return autograd::detail::sum_to(g, in_sizes); }, true);
  return out;
}

Tensor permute_autograd(const ViewOp& op, const Tensor& x, IntArrayRef dims) {
  Tensor out = below(op, x, dims);
  DimVector inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], x.dim(), "permute")] = i;
  record_simple(
      "PermuteBackward0", x, out, [inverse](const Tensor& g) { return g.permute(inverse); }, true);
  return out;
}

Tensor transpose_autograd(const DimsOp& op, const Tensor& x, int64_t d0, int64_t d1) {
  Tensor out = below(op, x, d0, d1);
  record_simple(
      "TransposeBackward0", x, out, [d0, d1](const Tensor& g) { return g.transpose(d0, d1); },
      true);
  return out;
}

// The gradient of a view that picks part of x: zeros of x's sizes with g written into the part.
// Recorded itself (its gradient is the same part of the incoming gradient) for create_graph.
using Part = std::function<Tensor(const Tensor&)>;
Tensor place_into_zeros(const Tensor& g, IntArrayRef sizes, const Part& part) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = zeros(sizes, g.options());
    part(out).copy_(g);
  }
  record_simple("PlaceBackward0", g, out, part, false);
  return out;
}

Tensor select_autograd(const DimsOp& op, const Tensor& x, int64_t dim, int64_t index) {
  Tensor out = below(op, x, dim, index);
  DimVector sizes(x.sizes());
  record_simple(
      "SelectBackward0", x, out,
      [sizes, dim, index](const Tensor& g) {
        return place_into_zeros(g, sizes, [=](const Tensor& t) { return t.select(dim, index); });
      },
      true);
  return out;
}

Tensor narrow_autograd(const NarrowOp& op, const Tensor& x, int64_t dim, int64_t start,
                       int64_t length) {
  Tensor out = below(op, x, dim, start, length);
  DimVector sizes(x.sizes());
  record_simple(
      "NarrowBackward0", x, out,
      [sizes, dim, start, length](const Tensor& g) {
        return place_into_zeros(g, sizes,
                                [=](const Tensor& t) { return t.narrow(dim, start, length); });
      },
      true);
  return out;
}

Tensor slice_autograd(const SliceOp& op, const Tensor& x, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step) {
  Tensor out = below(op, x, dim, start, end, step);
  DimVector sizes(x.sizes());
  record_simple(
      "SliceBackward0", x, out,
      [sizes, dim, start, end, step](const Tensor& g) {
        return place_into_zeros(g, sizes,
                                [=](const Tensor& t) { return t.slice(dim, start, end, step); });
      },
      true);
  return out;
}

Tensor unsqueeze_autograd(const DimOp& op, const Tensor& x, int64_t dim) {
  Tensor out = below(op, x, dim);
  DimVector sizes(x.sizes());
  record_simple(
      "UnsqueezeBackward0", x, out, [sizes](const Tensor& g) { return g.reshape(sizes); }, true);
  return out;
}

Tensor squeeze_dim_autograd(const DimOp& op, const Tensor& x, int64_t dim) {
  Tensor out = below(op, x, dim);
  DimVector sizes(x.sizes());
  record_simple(
      "SqueezeBackward1", x, out, [sizes](const Tensor& g) { return g.reshape(sizes); }, true);
  return out;
}

Tensor squeeze_autograd(const UnaryViewOp& op, const Tensor& x) {
  Tensor out = below(op, x);
  DimVector sizes(x.sizes());
  record_simple(
      "SqueezeBackward0", x, out, [sizes](const Tensor& g) { return g.reshape(sizes); }, true);
  return out;
}

Tensor as_strided_autograd(const StridedOp& op, const Tensor& x, IntArrayRef sizes,
                           IntArrayRef strides, int64_t offset) {
  KILN_CHECK(!(autograd::GradMode::is_enabled() && x.requires_grad()), op.name(),
             ": the gradient of as_strided is not implemented; use view operators that are ",
             "differentiable (view, narrow, select, expand, ...) on tensors that require grad");
  return below(op, x, sizes, strides, offset);
}

const bool view_backwards_registered = [] {
  view_op.set_kernel(DispatchKey::Autograd, reshape_autograd);
  reshape_op.set_kernel(DispatchKey::Autograd, reshape_autograd);
  expand_op.set_kernel(DispatchKey::Autograd, expand_autograd);
  permute_op.set_kernel(DispatchKey::Autograd, permute_autograd);
  transpose_op.set_kernel(DispatchKey::Autograd, transpose_autograd);
  select_op.set_kernel(DispatchKey::Autograd, select_autograd);
  narrow_op.set_kernel(DispatchKey::Autograd, narrow_autograd);
  slice_op.set_kernel(DispatchKey::Autograd, slice_autograd);
  unsqueeze_op.set_kernel(DispatchKey::Autograd, unsqueeze_autograd);
  squeeze_dim_op.set_kernel(DispatchKey::Autograd, squeeze_dim_autograd);
  squeeze_op.set_kernel(DispatchKey::Autograd, squeeze_autograd);
  as_strided_op.set_kernel(DispatchKey::Autograd, as_strided_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
