// Tensor::index and index_put_ with libtorch's TensorIndex lists (kiln/indexing.h).
//
// Note [Advanced indexing is a composite]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The basic indices (integers, slices, None, Ellipsis) are views, applied left to right as
// PyTorch's applySlicing does; each index tensor is recorded at the dimension it stands at.
// The tensors then gather with kiln operators only: the indexed dimensions are permuted to the
// front and merged into one of size N, the index tensors become one linear index into it, and
// index_select picks the rows. So advanced indexing runs on every device and its gradient
// (index_add through index_select, permute and reshape) comes for free. index_put_ computes the
// updated tensor the same way (index_add, or `where` over the rows written) and copy_s it into
// the view of the basic indices, so the in-place rules of copy_ (version counter, leaves,
// rebasing a view's history) hold. Bounds, masks and repeated indices of index_put_ are read on
// the host, as PyTorch synchronizes for them too.
#include "tensor_internal.h"

#include <kiln/indexing.h>
#include <kiln/ops.h>

#include <cstring>

namespace kiln {

using detail::str;

TensorIndex::TensorIndex(const char* ellipsis) : kind_(Kind::Ellipsis) {
  KILN_CHECK_VALUE(ellipsis != nullptr && std::strcmp(ellipsis, "...") == 0,
                   "TensorIndex: expected \"...\" to represent an ellipsis index, but got \"",
                   ellipsis == nullptr ? "(null)" : ellipsis, "\"");
}

namespace {

bool is_mask(const Tensor& t) { return t.dtype() == kBool || t.dtype() == kByte; }

// [] or [0] as int64 on t's device: the index `false` / `true` stands for.
Tensor bool_index(bool value, const Tensor& like) {
  return zeros({value ? 1 : 0}, TensorOptions().dtype(kLong).device(like.device()));
}

// The views of the basic indices, and the index tensors at the dimensions of `view` they index
// (undefined where none), as PyTorch's applySlicing.
struct Sliced {
  Tensor view;
  std::vector<Tensor> tensors;
};

void record(Sliced& s, int64_t& d, Tensor index) {
  s.tensors.resize(static_cast<size_t>(d) + 1);
  s.tensors[static_cast<size_t>(d)] = std::move(index);
  ++d;
}

Sliced apply_basic(const Tensor& self, ArrayRef<TensorIndex> indices) {
  int64_t specified = 0;  // dims of self that the indices name
  int ellipses = 0;
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer:
      case TensorIndex::Kind::Slice: ++specified; break;
      case TensorIndex::Kind::Tensor:
        specified += is_mask(i.tensor()) ? i.tensor().dim() : 1;
        break;
      case TensorIndex::Kind::Ellipsis: ++ellipses; break;
      case TensorIndex::Kind::None:
      case TensorIndex::Kind::Boolean: break;
    }
  }
  KILN_CHECK_INDEX(ellipses <= 1, "index: an index can only have a single ellipsis ('...')");
  KILN_CHECK_INDEX(specified <= self.dim(), "index: too many indices for tensor of dimension ",
                   self.dim(), " (got ", specified, ")");
  Sliced s{self, {}};
  int64_t d = 0;  // current dimension of s.view
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer: s.view = s.view.select(d, i.integer()); break;
      case TensorIndex::Kind::Slice:
        s.view = s.view.slice(d, i.slice().start(), i.slice().stop(), i.slice().step());
        ++d;
        break;
      case TensorIndex::Kind::None:
        s.view = s.view.unsqueeze(d);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis: d += self.dim() - specified; break;
      case TensorIndex::Kind::Boolean:
        s.view = s.view.unsqueeze(d);
        record(s, d, bool_index(i.boolean(), self));
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = i.tensor();
        if (t.dim() == 0 && is_integral(t.dtype(), /*include_bool=*/true)) {
          if (!is_mask(t)) {
            s.view = s.view.select(d, t.item<int64_t>());
          } else {
            s.view = s.view.unsqueeze(d);
            record(s, d, bool_index(t.item<int64_t>() != 0, self));
          }
        } else {
          record(s, d, t);
        }
        break;
      }
    }
  }
  return s;
}

// PyTorch's at::index rules over `src`: masks expanded to int64 indices, each index checked and
// wrapped, all broadcast to one shape.
struct Advanced {
  std::vector<int64_t> dims;  // indexed dims of src, ascending
  std::vector<Tensor> index;  // int64, non-negative, broadcast to `shape`
  std::vector<int64_t> shape;
  bool adjacent = true;  // dims consecutive: the result puts `shape` at dims[0]
};

Advanced prepare(const char* op, const Tensor& src, const std::vector<Tensor>& tensors) {
  Advanced a;
  std::vector<Tensor> raw;
  for (size_t k = 0, d = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    if (!t.defined()) {
      ++d;
      continue;
    }
    KILN_CHECK_INDEX(t.dtype() == kLong || is_mask(t), op, ": tensors used as indices must be ",
                     "long, byte or bool tensors (got ", dtype_name(t.dtype()), ")");
    if (!is_mask(t)) {
      a.dims.push_back(static_cast<int64_t>(d++));
      raw.push_back(t);
      continue;
    }
    for (int64_t j = 0; j < t.dim(); ++j) {
      auto sd = static_cast<int64_t>(d) + j;
      KILN_CHECK_INDEX(sd < src.dim() && t.size(j) == src.size(sd), op, ": The shape of the ",
                       "mask ", t.sizes(), " at index ", j, " does not match the shape of the ",
                       "indexed tensor ", src.sizes(), " at index ", sd);
    }
    Tensor nz = nonzero(t);
    for (int64_t j = 0; j < t.dim(); ++j) {
      a.dims.push_back(static_cast<int64_t>(d++));
      raw.push_back(nz.select(1, j));
    }
  }
  for (size_t k = 0; k < raw.size(); ++k) {
    std::vector<int64_t> next = k == 0 ? raw[k].sizes().vec() : a.shape;
    try {
      next = broadcast_shapes(next, raw[k].sizes());
    } catch (const ValueError&) {
      std::string shapes;
      for (const Tensor& r : raw) shapes += str(shapes.empty() ? "" : ", ", r.sizes());
      throw IndexError(str(op, ": shape mismatch: indexing tensors could not be broadcast ",
                           "together with shapes ", shapes));
    }
    a.shape = next;
  }
  for (size_t k = 0; k < raw.size(); ++k) {
    int64_t size = src.size(a.dims[k]);
    Tensor i = raw[k];
    if (i.numel() > 0) {
      int64_t lo = i.min().item<int64_t>();
      int64_t hi = i.max().item<int64_t>();
      int64_t bad = hi >= size ? hi : lo;
      KILN_CHECK_INDEX(lo >= -size && hi < size, op, ": index ", bad, " is out of bounds for ",
                       "dimension ", a.dims[k], " with size ", size);
      if (lo < 0) i = where(i < 0, i + size, i);
    }
    a.index.push_back(i.expand(a.shape));
    if (k > 0 && a.dims[k] != a.dims[k - 1] + 1) a.adjacent = false;
  }
  return a;
}

// src with the indexed dims first, merged into one: [N, other dims...], and the linear index
// into that first dim, flattened.
struct Merged {
  Tensor rows;
  Tensor index;
  std::vector<int64_t> order;  // the permutation of src's dims that was applied
};

Merged merge(const Tensor& src, const Advanced& a) {
  Merged m;
  std::vector<int64_t> rows_sizes{1};
  std::vector<bool> indexed(static_cast<size_t>(src.dim()), false);
  for (int64_t d : a.dims) {
    m.order.push_back(d);
    rows_sizes[0] *= src.size(d);  // a product of src's sizes: fits (Note [Checked sizes])
    indexed[static_cast<size_t>(d)] = true;
  }
  for (int64_t d = 0; d < src.dim(); ++d) {
    if (indexed[static_cast<size_t>(d)]) continue;
    m.order.push_back(d);
    rows_sizes.push_back(src.size(d));
  }
  m.rows = src.permute(m.order).reshape(rows_sizes);
  Tensor linear = a.index.back();
  int64_t stride = src.size(a.dims.back());
  for (size_t k = a.dims.size() - 1; k-- > 0;) {
    linear = linear + a.index[k] * stride;
    stride *= src.size(a.dims[k]);
  }
  m.index = linear.reshape({-1});
  return m;
}

// The permutation that moves the broadcast dims (the first nb) of a gathered [B..., rest...]
// tensor to dim `at` of the result, where the indexed dims were.
std::vector<int64_t> place_broadcast_dims(int64_t nb, int64_t ndim, int64_t at) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < at; ++d) perm.push_back(nb + d);
  for (int64_t d = 0; d < nb; ++d) perm.push_back(d);
  for (int64_t d = nb + at; d < ndim; ++d) perm.push_back(d);
  return perm;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  }
  return inv;
}

// The sizes of the gathered rows [B..., rest...] for the merged tensor.
std::vector<int64_t> gathered_sizes(const Advanced& a, const Merged& m) {
  std::vector<int64_t> sizes = a.shape;
  for (int64_t d = 1; d < m.rows.dim(); ++d) sizes.push_back(m.rows.size(d));
  return sizes;
}

Tensor gather_advanced(const Tensor& src, const Advanced& a) {
  Merged m = merge(src, a);
  Tensor out = m.rows.index_select(0, m.index).reshape(gathered_sizes(a, m));
  if (!a.adjacent || a.dims.front() == 0) return out;
  auto nb = static_cast<int64_t>(a.shape.size());
  return out.permute(place_broadcast_dims(nb, out.dim(), a.dims.front()));
}

bool has_tensors(const Sliced& s) {
  for (const Tensor& t : s.tensors) {
    if (t.defined()) return true;
  }
  return false;
}

// The rows of `index` (flattened) that write last, for index_put_ without accumulate, and
// which of the n rows they write.
std::pair<Tensor, std::vector<unsigned char>> last_writers(const Tensor& index, int64_t n) {
  std::vector<unsigned char> bytes = detail::host_bytes(index);
  std::vector<int64_t> last(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < index.numel(); ++i) {
    last[static_cast<size_t>(detail::host_long(bytes.data(), kLong, i))] = i;
  }
  std::vector<int64_t> positions;
  std::vector<unsigned char> written(static_cast<size_t>(n), 0);
  for (int64_t r = 0; r < n; ++r) {
    if (last[static_cast<size_t>(r)] < 0) continue;
    positions.push_back(last[static_cast<size_t>(r)]);
    written[static_cast<size_t>(r)] = 1;
  }
  Tensor pos = empty({static_cast<int64_t>(positions.size())},
                     TensorOptions().dtype(kLong).device(index.device()));
  if (!positions.empty()) {
    pos.copy_(from_blob(positions.data(), {static_cast<int64_t>(positions.size())}, kLong));
  }
  return {pos, written};
}

// `view` with `value` put where the advanced indices point (Note [Advanced indexing is a
// composite]).
Tensor put_advanced(const Tensor& view, const Advanced& a, const Tensor& value, bool accumulate) {
  Merged m = merge(view, a);
  std::vector<int64_t> sizes = gathered_sizes(a, m);
  auto nb = static_cast<int64_t>(a.shape.size());
  Tensor v = value;
  std::vector<int64_t> result_sizes = sizes;
  std::vector<int64_t> perm;
  if (a.adjacent && a.dims.front() != 0) {
    perm = place_broadcast_dims(nb, static_cast<int64_t>(sizes.size()), a.dims.front());
    for (size_t i = 0; i < perm.size(); ++i) result_sizes[i] = sizes[static_cast<size_t>(perm[i])];
  }
  try {
    v = v.expand(result_sizes);
  } catch (const Error&) {
    throw ValueError(str("index_put_: shape mismatch: value tensor of shape ", value.sizes(),
                         " cannot be broadcast to indexing result of shape ",
                         IntArrayRef(result_sizes)));
  }
  if (!perm.empty()) v = v.permute(inverse(perm));
  std::vector<int64_t> rows_sizes = m.rows.sizes().vec();
  rows_sizes[0] = m.index.numel();
  v = v.reshape(rows_sizes);
  Tensor updated;
  if (accumulate) {
    updated = index_add(m.rows, 0, m.index, v);
  } else {
    auto [pos, written] = last_writers(m.index, m.rows.size(0));
    Tensor rows = m.index.index_select(0, pos);
    Tensor scattered = index_add(zeros_like(m.rows), 0, rows, v.index_select(0, pos));
    std::vector<int64_t> mask_sizes(static_cast<size_t>(m.rows.dim()), 1);
    mask_sizes[0] = m.rows.size(0);
    Tensor mask = from_blob(written.data(), mask_sizes, kBool).to(view.device(), kBool, true);
    updated = where(mask, scattered, m.rows);
  }
  std::vector<int64_t> permuted_sizes;
  for (int64_t d : m.order) permuted_sizes.push_back(view.size(d));
  return updated.reshape(permuted_sizes).permute(inverse(m.order));
}

}  // namespace

Tensor Tensor::index(ArrayRef<TensorIndex> indices) const {
  Sliced s = apply_basic(*this, indices);
  if (!has_tensors(s)) return s.view;
  return gather_advanced(s.view, prepare("index", s.view, s.tensors));
}

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return index(ArrayRef<TensorIndex>(indices.begin(), indices.size()));
}

Tensor Tensor::operator[](const Tensor& index) const { return this->index({index}); }

const Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Tensor& value,
                                 bool accumulate) const {
  Sliced s = apply_basic(*this, indices);
  if (!has_tensors(s)) {
    if (accumulate) {
      s.view.add_(value);
    } else {
      s.view.copy_(value);
    }
    return *this;
  }
  KILN_CHECK_TYPE(value.dtype() == dtype(), "index_put_: Index put requires the source and ",
                  "destination dtypes match, got ", dtype_name(dtype()), " for the destination ",
                  "and ", dtype_name(value.dtype()), " for the source.");
  Advanced a = prepare("index_put_", s.view, s.tensors);
  s.view.copy_(put_advanced(s.view, a, value, accumulate));
  return *this;
}

const Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& value,
                                 bool accumulate) const {
  return index_put_(ArrayRef<TensorIndex>(indices.begin(), indices.size()), value, accumulate);
}

const Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Scalar& value) const {
  Sliced s = apply_basic(*this, indices);
  if (!has_tensors(s)) {
    s.view.fill_(value);
    return *this;
  }
  Tensor v = full({}, value, TensorOptions().dtype(dtype()).device(device()));
  Advanced a = prepare("index_put_", s.view, s.tensors);
  s.view.copy_(put_advanced(s.view, a, v, /*accumulate=*/false));
  return *this;
}

const Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices,
                                 const Scalar& value) const {
  return index_put_(ArrayRef<TensorIndex>(indices.begin(), indices.size()), value);
}

Tensor nonzero(const Tensor& x) {
  std::vector<unsigned char> bytes = detail::host_bytes(x);
  std::vector<int64_t> coords;
  std::vector<int64_t> at(static_cast<size_t>(x.dim()), 0);  // the multi-index of element i
  int64_t count = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (detail::host_double(bytes.data(), x.dtype(), i) != 0) {
      coords.insert(coords.end(), at.begin(), at.end());
      ++count;
    }
    for (int64_t d = x.dim(); d-- > 0;) {
      if (++at[static_cast<size_t>(d)] < x.size(d)) break;
      at[static_cast<size_t>(d)] = 0;
    }
  }
  Tensor out = empty({count, x.dim()}, TensorOptions().dtype(kLong).device(x.device()));
  if (!coords.empty()) out.copy_(from_blob(coords.data(), {count, x.dim()}, kLong));
  out.storage()->reset_version();  // a new tensor is at version 0
  return out;
}

}  // namespace kiln
