// Selection and counting composites: meshgrid, masked_select, masked_scatter, index_fill, take,
// take_along_dim, count_nonzero, cartesian_prod, combinations, bincount and histc. Each is written
// from indexing primitives (index_select, gather, index_add, nonzero) and elementwise operators,
// so it runs on every device and its gradient comes from theirs.
#include "elementwise.h"

#include <kiln/indexing.h>
#include <kiln/warning.h>

#include <cmath>

namespace kiln {
namespace {

TensorOptions long_options(const Tensor& like) {
  return TensorOptions().dtype(kLong).device(like.device());
}

// index (any integer dtype) with negative entries counted from the end of a dim of `size`;
// IndexError when one is out of range.
Tensor wrap_indices(const char* op, const Tensor& index, int64_t size) {
  KILN_CHECK_TYPE(!index.is_floating_point() && index.dtype() != kBool, op,
                  "(): Expected a long tensor for index, but got ", dtype_name(index.dtype()));
  Tensor idx = index.to(kLong);
  if (idx.numel() == 0) return idx;
  int64_t lo = amin(idx).item<int64_t>(), hi = amax(idx).item<int64_t>();
  KILN_CHECK_INDEX(lo >= -size && hi < size, op, "(): index ", lo < -size ? lo : hi,
                   " is out of bounds for size ", size);
  return lo < 0 ? where(lt(idx, 0), idx + size, idx) : idx;
}

}  // namespace

std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing) {
  KILN_CHECK_VALUE(indexing == "ij" || indexing == "xy", "torch.meshgrid: indexing must be one ",
                   "of \"xy\" or \"ij\", but received: ", indexing);
  KILN_CHECK_VALUE(!tensors.empty(), "meshgrid expects a non-empty TensorList");
  std::vector<Tensor> inputs(tensors.begin(), tensors.end());
  for (const Tensor& t : inputs) {
    KILN_CHECK_VALUE(t.dim() <= 1, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list ",
                     "but got: ", t.sizes());
    KILN_CHECK_TYPE(t.dtype() == inputs[0].dtype(), "meshgrid expects all tensors to have the ",
                    "same dtype (got ", dtype_name(inputs[0].dtype()), " and ",
                    dtype_name(t.dtype()), ")");
    KILN_CHECK_VALUE(t.device() == inputs[0].device(), "meshgrid expects all tensors to have the ",
                     "same device (got ", inputs[0].device(), " and ", t.device(), ")");
  }
  bool swap = indexing == "xy" && inputs.size() >= 2;
  if (swap) std::swap(inputs[0], inputs[1]);
  DimVector sizes;
  for (const Tensor& t : inputs) sizes.push_back(t.numel());
  std::vector<Tensor> grids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    DimVector shape(inputs.size(), 1);
    shape[i] = -1;
    grids.push_back(inputs[i].view(shape).expand(sizes));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}
std::vector<Tensor> meshgrid(TensorList tensors) {
  KILN_WARN_ONCE("torch.meshgrid: in an upcoming release, it will be required to pass the ",
                 "indexing argument.");
  return meshgrid(tensors, "ij");
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  KILN_CHECK_TYPE(mask.dtype() == kBool, "masked_select: expected BoolTensor for mask, got ",
                  dtype_name(mask.dtype()));
  DimVector sizes = detail::broadcast_dims(x.sizes(), mask.sizes());
  return x.expand(sizes).index({mask.expand(sizes)});
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  KILN_CHECK_TYPE(mask.dtype() == kBool, "masked_scatter_: expected BoolTensor for mask, got ",
                  dtype_name(mask.dtype()));
  KILN_CHECK_TYPE(source.dtype() == x.dtype(), "masked_scatter: expected self and source to ",
                  "have same dtypes but got ", dtype_name(x.dtype()), " and ",
                  dtype_name(source.dtype()));
  Tensor m = mask.expand(x.sizes()).reshape({-1});
  Tensor position = cumsum(m, 0) - 1;  // the source element each true takes
  int64_t needed = x.numel() == 0 ? 0 : position[-1].item<int64_t>() + 1;
  KILN_CHECK_VALUE(source.numel() >= needed, "masked_scatter: Number of elements of source (",
                   source.numel(), ") < number of ones in mask (", needed, ")");
  if (needed == 0) return x.clone();
  Tensor taken = source.reshape({-1}).index_select(0, clamp_min(position, 0));
  return where(m, taken, x.reshape({-1})).view(x.sizes());
}

Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value) {
  KILN_CHECK_VALUE(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, ",
                   "but got tensor with ", value.dim(), " dimension(s).");
  KILN_CHECK_VALUE(index.dim() <= 1, "index_fill_(): Index is supposed to be a vector, got ",
                   index.sizes());
  int64_t d = detail::wrap_dim(dim, x.dim(), "index_fill");
  int64_t size = x.dim() == 0 ? 1 : x.sizes()[d];
  Tensor idx = wrap_indices("index_fill", index.reshape({-1}), size);
  Tensor positions = arange(size, long_options(x));
  Tensor hit = any(eq(positions.unsqueeze(1), idx.unsqueeze(0)), 1);  // [size]
  DimVector shape(std::max<int64_t>(x.dim(), 1), 1);
  shape[d] = size;
  Tensor filled = value.to(x.dtype());
  return where(hit.view(shape).reshape(x.dim() == 0 ? DimVector{} : shape), filled, x);
}
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  return index_fill(x, dim, index, full({}, value, x.options()));
}

Tensor take(const Tensor& x, const Tensor& index) {
  Tensor idx = wrap_indices("take", index, x.numel());
  return x.reshape({-1}).index_select(0, idx.reshape({-1})).view(index.sizes());
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  KILN_CHECK_TYPE(indices.dtype() == kLong, "torch.take_along_dim(): dtype of indices should be ",
                  "Long but got ", dtype_name(indices.dtype()));
  if (!dim) return x.reshape({-1}).gather(0, indices.reshape({-1}));
  KILN_CHECK_VALUE(x.dim() == indices.dim(), "torch.take_along_dim(): input and indices should ",
                   "have the same number of dimensions, but got ", x.dim(), " dimensions for ",
                   "input, and ", indices.dim(), " dimensions for indices");
  int64_t d = detail::wrap_dim(*dim, x.dim(), "take_along_dim");
  DimVector x_sizes(x.sizes()), i_sizes(indices.sizes());
  x_sizes[d] = 1;
  i_sizes[d] = 1;
  DimVector common = detail::broadcast_dims(x_sizes, i_sizes);
  x_sizes = common;
  i_sizes = common;
  x_sizes[d] = x.sizes()[d];
  i_sizes[d] = indices.sizes()[d];
  return x.expand(x_sizes).gather(d, indices.expand(i_sizes));
}

Tensor count_nonzero(const Tensor& x, IntArrayRef dims) { return sum(ne(x, 0), dims); }
Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim) {
  if (!dim) return sum(ne(x, 0));
  return sum(ne(x, 0), {*dim});
}

Tensor cartesian_prod(TensorList tensors) {
  for (const Tensor& t : tensors) {
    KILN_CHECK_VALUE(t.dim() == 1, "Expect a 1D vector, but got shape ", t.sizes());
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = meshgrid(tensors, "ij");
  for (Tensor& g : grids) g = g.flatten();
  return stack(grids, 1);
}

Tensor combinations(const Tensor& x, int64_t r, bool with_replacement) {
  KILN_CHECK_VALUE(x.dim() == 1, "Expect a 1D vector, but got shape ", x.sizes());
  KILN_CHECK_VALUE(r >= 0, "Expect a non-negative number, but got ", r);
  if (r == 0) return empty({0}, x.options());
  // index grids of r dims, kept where each index is above (or not below) the one before it
  Tensor positions = arange(x.numel(), long_options(x));
  std::vector<Tensor> copies(static_cast<size_t>(r), positions);
  std::vector<Tensor> grids = meshgrid(copies, "ij");
  Tensor keep = ones(grids[0].sizes(), TensorOptions().dtype(kBool).device(x.device()));
  for (int64_t i = 1; i < r; ++i) {
    keep = logical_and(keep,
                       with_replacement ? le(grids[i - 1], grids[i]) : lt(grids[i - 1], grids[i]));
  }
  std::vector<Tensor> columns;
  for (const Tensor& g : grids) columns.push_back(x.index_select(0, g.index({keep})));
  return stack(columns, 1);
}

Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength) {
  KILN_CHECK_VALUE(x.dim() == 1 && !x.is_floating_point() && x.dtype() != kBool,
                   "bincount only supports 1-d non-negative integral inputs (got ",
                   dtype_name(x.dtype()), " ", x.sizes(), ")");
  KILN_CHECK_VALUE(minlength >= 0, "bincount: minlength should be >= 0 (got ", minlength, ")");
  KILN_CHECK_VALUE(!weights.defined() || weights.sizes().equals(x.sizes()), "bincount: weights ",
                   "should be 1-d and have the same length as input (input ", x.sizes(),
                   ", weights ", weights.defined() ? weights.sizes() : IntArrayRef(), ")");
  int64_t length = minlength;
  if (x.numel() > 0) {
    KILN_CHECK_VALUE(amin(x).item<int64_t>() >= 0, "bincount only supports 1-d non-negative ",
                     "integral inputs");
    length = std::max(length, amax(x).item<int64_t>() + 1);
  }
  Tensor idx = x.to(kLong);
  if (!weights.defined())
    return index_add(zeros({length}, long_options(x)), 0, idx, ones_like(idx));
  ScalarType t = weights.dtype() == kFloat || weights.dtype() == kDouble ? weights.dtype()
                                                                         : kDouble;
  Tensor w = weights.to(t);
  return index_add(zeros({length}, w.options()), 0, idx, w);
}

Tensor histc(const Tensor& x, int64_t bins, const Scalar& min, const Scalar& max) {
  KILN_CHECK_TYPE(x.is_floating_point(), "torch.histc: input tensor and hist tensor should have ",
                  "the same dtype, but got input ", dtype_name(x.dtype()), " and hist float");
  KILN_CHECK_VALUE(bins > 0, "torch.histc(): bins must be > 0, but got ", bins);
  double lo = min.to_double(), hi = max.to_double();
  if (lo == hi && x.numel() > 0) {
    lo = amin(x).item<double>();
    hi = amax(x).item<double>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  KILN_CHECK_VALUE(lo < hi, "torch.histc(): max must be larger than min (min ", lo, ", max ", hi,
                   ")");
  KILN_CHECK_VALUE(std::isfinite(lo) && std::isfinite(hi), "torch.histc(): range of [", lo, ", ",
                   hi, "] is not finite");
  Tensor v = x.detach().reshape({-1}).to(kDouble);
  Tensor inside = logical_and(ge(v, lo), le(v, hi));
  Tensor pos = floor((v - lo) * (static_cast<double>(bins) / (hi - lo))).to(kLong);
  pos = clamp(pos, 0, bins - 1);  // x == max falls in the last bin
  Tensor counts = index_add(zeros({bins}, TensorOptions().dtype(kDouble).device(x.device())), 0,
                            pos, inside.to(kDouble));
  return counts.to(x.dtype());
}

Tensor Tensor::masked_select(const Tensor& mask) const { return kiln::masked_select(*this, mask); }
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return kiln::masked_scatter(*this, mask, source);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Scalar& value) const {
  return kiln::index_fill(*this, dim, index, value);
}
Tensor Tensor::take(const Tensor& index) const { return kiln::take(*this, index); }
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return kiln::take_along_dim(*this, indices, dim);
}
Tensor Tensor::count_nonzero(std::optional<int64_t> dim) const {
  return kiln::count_nonzero(*this, dim);
}
Tensor Tensor::count_nonzero(IntArrayRef dims) const { return kiln::count_nonzero(*this, dims); }
Tensor Tensor::bincount(const Tensor& weights, int64_t minlength) const {
  return kiln::bincount(*this, weights, minlength);
}
Tensor Tensor::histc(int64_t bins, const Scalar& min, const Scalar& max) const {
  return kiln::histc(*this, bins, min, max);
}

}  // namespace kiln
