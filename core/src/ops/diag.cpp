// Diagonals: diagonal (a view operator: one stride steps along both dims), and the composites
// diag, diag_embed and trace.
#include "elementwise.h"

#include "../autograd/function.h"

namespace kiln {
namespace detail {
namespace {

using DiagonalOp = Operator<Tensor(const Tensor&, int64_t, int64_t, int64_t)>;

struct DiagonalGeometry {
  int64_t d1, d2, length, row0, col0;  // row0/col0: where the diagonal starts in (d1, d2)
};

DiagonalGeometry diagonal_geometry(const char* op, const Tensor& x, int64_t offset, int64_t dim1,
                                   int64_t dim2) {
  int64_t d1 = wrap_dim(dim1, x.dim(), op), d2 = wrap_dim(dim2, x.dim(), op);
  KILN_CHECK_VALUE(d1 != d2, op, "(): diagonal dimensions cannot be identical ", dim1, ", ", dim2,
                   " (input ", x.sizes(), ")");
  int64_t rows = x.sizes()[d1], cols = x.sizes()[d2];
  int64_t row0 = offset < 0 ? -offset : 0, col0 = offset > 0 ? offset : 0;
  int64_t length = std::max<int64_t>(std::min(rows - row0, cols - col0), 0);
  return {d1, d2, length, row0, col0};
}

Tensor diagonal_backend(const DiagonalOp& op, const Tensor& x, int64_t offset, int64_t dim1,
                        int64_t dim2) {
  KILN_CHECK_INDEX(x.dim() >= 2, op.name(), "(): expected a tensor of at least 2 dimensions, got ",
                   x.sizes());
  DiagonalGeometry g = diagonal_geometry(op.name(), x, offset, dim1, dim2);
  DimVector sizes, strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == g.d1 || d == g.d2) continue;
    sizes.push_back(x.sizes()[d]);
    strides.push_back(x.strides()[d]);
  }
  sizes.push_back(g.length);
  strides.push_back(x.strides()[g.d1] + x.strides()[g.d2]);
  int64_t start = x.storage_offset();
  if (g.length > 0) start += g.row0 * x.strides()[g.d1] + g.col0 * x.strides()[g.d2];
  Tensor v = make_view(x, sizes, strides, start);
  autograd::detail::note_unrecorded_view(x, v);
  return v;
}

}  // namespace

DiagonalOp diagonal_op(
    "diagonal", "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
    diagonal_backend, false);

// Matrices [..., rows, cols] (as a flat last dim) with v's last dim on the diagonal starting at
// (row0, col0): index_add, so that it differentiates again (its gradient is index_select).
Tensor embed_diagonal(const Tensor& v, int64_t rows, int64_t cols, int64_t row0, int64_t col0) {
  DimVector sizes(v.sizes());
  const size_t last = sizes.size() - 1;
  int64_t length = sizes[last];
  sizes[last] = rows * cols;
  TensorOptions longs = TensorOptions().dtype(kLong).device(v.device());
  Tensor positions = arange(length, longs) * (cols + 1) + (row0 * cols + col0);
  Tensor flat = index_add(zeros(sizes, v.options()), -1, positions, v);
  sizes[last] = rows;
  sizes.push_back(cols);
  return flat.view(sizes);
}

}  // namespace detail

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  return detail::diagonal_op(x, offset, dim1, dim2);
}

Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  KILN_CHECK_INDEX(x.dim() >= 1, "diag_embed(): expected a tensor of at least 1 dimension, got ",
                   x.sizes());
  int64_t out_dim = x.dim() + 1;
  int64_t d1 = detail::wrap_dim(dim1, out_dim, "diag_embed");
  int64_t d2 = detail::wrap_dim(dim2, out_dim, "diag_embed");
  KILN_CHECK_VALUE(d1 != d2, "diag_embed(): diagonal dimensions cannot be identical ", dim1, ", ",
                   dim2);
  int64_t m = x.sizes().back() + (offset < 0 ? -offset : offset);
  Tensor square =
      detail::embed_diagonal(x, m, m, offset < 0 ? -offset : 0, offset > 0 ? offset : 0);
  // square is [..., m (d1), m (d2)]: move its last two dims to d1 and d2
  if (d1 < d2) return movedim(square, {-2, -1}, {d1, d2});
  return movedim(square, {-1, -2}, {d2, d1});
}

Tensor diag(const Tensor& x, int64_t diagonal) {
  KILN_CHECK_VALUE(x.dim() == 1 || x.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ", x.dim(),
                   "D (input ", x.sizes(), ")");
  if (x.dim() == 1) return diag_embed(x, diagonal, 0, 1);
  return kiln::diagonal(x, diagonal, 0, 1).clone();
}

namespace {
// An operator (with no kernel) so that CPU autocast runs it in float32, as PyTorch's list does.
Tensor trace_composite(const Operator<Tensor(const Tensor&)>&, const Tensor& x) {
  KILN_CHECK_VALUE(x.dim() == 2, "trace: expected a matrix, but got tensor with dim ", x.dim(),
                   " (", x.sizes(), ")");
  return sum(kiln::diagonal(x, 0, 0, 1));
}
Operator<Tensor(const Tensor&)> trace_op("trace", "trace(Tensor self) -> Tensor", trace_composite,
                                         false);
}  // namespace

Tensor trace(const Tensor& x) { return trace_op(x); }

Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  return kiln::diagonal(*this, offset, dim1, dim2);
}
Tensor Tensor::diag(int64_t d) const { return kiln::diag(*this, d); }
Tensor Tensor::diag_embed(int64_t offset, int64_t dim1, int64_t dim2) const {
  return kiln::diag_embed(*this, offset, dim1, dim2);
}
Tensor Tensor::trace() const { return kiln::trace(*this); }

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
// diagonal's gradient is g on the same diagonal of zeros of the input's shape.
namespace kiln::detail {
namespace {

Tensor diagonal_autograd(const DiagonalOp& op, const Tensor& x, int64_t offset, int64_t dim1,
                         int64_t dim2) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(x, offset, dim1, dim2);
  }
  DiagonalGeometry geo = diagonal_geometry(op.name(), x, offset, dim1, dim2);
  DimVector sizes(x.sizes());
  autograd::detail::record_simple(
      "DiagonalBackward0", x, out,
      [sizes, geo](const Tensor& g) {
        Tensor square = embed_diagonal(g, sizes[geo.d1], sizes[geo.d2], geo.row0, geo.col0);
        if (geo.d1 < geo.d2) return movedim(square, {-2, -1}, {geo.d1, geo.d2});
        return movedim(square, {-1, -2}, {geo.d2, geo.d1});
      },
      true);
  return out;
}

const bool diagonal_backward_registered = [] {
  diagonal_op.set_kernel(DispatchKey::Autograd, diagonal_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
