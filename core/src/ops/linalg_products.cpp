// More products, as composites of mm, bmm and elementwise operators: mv, vdot, outer, cross,
// and the scaled sums addmv, addr, baddbmm and addbmm. mv and the scaled sums are operators (no
// kernel of their own) so that autocast lists them as PyTorch does.
#include "elementwise.h"

namespace kiln {
namespace detail {
namespace {

using MatOp = Operator<Tensor(const Tensor&, const Tensor&)>;
using AddmmOp =
    Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&)>;

void check_rank(const char* op, const Tensor& t, int64_t rank, const char* what) {
  KILN_CHECK_VALUE(t.dim() == rank, op, ": expected ", what, " to be a ", rank, "-D tensor, but ",
                   "got a ", t.dim(), "-D tensor ", t.sizes());
}

// beta * self + alpha * product, as PyTorch's addmm family: self broadcast to the product's
// shape; beta = 0 ignores self (its NaN and inf do not propagate).
Tensor scaled_sum(const char* op, const Tensor& self, const Tensor& product, const Scalar& beta,
                  const Scalar& alpha) {
  IntArrayRef s = self.sizes(), p = product.sizes();
  bool fits = s.size() <= p.size();
  for (size_t i = 1; fits && i <= s.size(); ++i) {
    fits = s[s.size() - i] == 1 || s[s.size() - i] == p[p.size() - i];
  }
  KILN_CHECK_VALUE(fits, op, ": self ", s, " cannot be broadcast to the product's shape ", p);
  Tensor scaled = alpha.to_double() == 1.0 ? product : product * alpha;
  if (beta.to_double() == 0.0) return scaled + zeros_like(self).to(scaled.dtype());
  return beta.to_double() == 1.0 ? self + scaled : self * beta + scaled;
}

Tensor mv_composite(const MatOp& op, const Tensor& mat, const Tensor& vec) {
  check_rank(op.name(), mat, 2, "mat");
  check_rank(op.name(), vec, 1, "vec");
  KILN_CHECK_VALUE(mat.sizes()[1] == vec.sizes()[0], op.name(), ": size mismatch, got input (",
                   mat.sizes()[0], "), mat (", mat.sizes()[0], "x", mat.sizes()[1], "), vec (",
                   vec.sizes()[0], ")");
  return mm(mat, vec.unsqueeze(1)).squeeze(1);
}

Tensor addmv_composite(const AddmmOp& op, const Tensor& self, const Tensor& mat, const Tensor& vec,
                       const Scalar& beta, const Scalar& alpha) {
  return scaled_sum(op.name(), self, mv(mat, vec), beta, alpha);
}

Tensor addr_composite(const AddmmOp& op, const Tensor& self, const Tensor& vec1, const Tensor& vec2,
                      const Scalar& beta, const Scalar& alpha) {
  check_rank(op.name(), vec1, 1, "vec1");
  check_rank(op.name(), vec2, 1, "vec2");
  return scaled_sum(op.name(), self, outer(vec1, vec2), beta, alpha);
}

Tensor baddbmm_composite(const AddmmOp& op, const Tensor& self, const Tensor& batch1,
                         const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  check_rank(op.name(), batch1, 3, "batch1");
  check_rank(op.name(), batch2, 3, "batch2");
  return scaled_sum(op.name(), self, bmm(batch1, batch2), beta, alpha);
}

Tensor addbmm_composite(const AddmmOp& op, const Tensor& self, const Tensor& batch1,
                        const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  check_rank(op.name(), batch1, 3, "batch1");
  check_rank(op.name(), batch2, 3, "batch2");
  // the sum over the batch is one mm: [n, B * k] @ [B * k, p]
  int64_t b = batch1.sizes()[0], n = batch1.sizes()[1], k = batch1.sizes()[2];
  KILN_CHECK_VALUE(batch2.sizes()[0] == b && batch2.sizes()[1] == k, op.name(), ": batch1 ",
                   batch1.sizes(), " and batch2 ", batch2.sizes(), " cannot be multiplied");
  Tensor left = batch1.permute({1, 0, 2}).reshape({n, b * k});
  Tensor product = mm(left, batch2.reshape({b * k, batch2.sizes()[2]}));
  return scaled_sum(op.name(), self, product, beta, alpha);
}

}  // namespace

MatOp mv_op("mv", "mv(Tensor self, Tensor vec) -> Tensor", mv_composite, false);
AddmmOp addmv_op("addmv",
                 "addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> "
                 "Tensor",
                 addmv_composite, false);
AddmmOp addr_op("addr",
                "addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> "
                "Tensor",
                addr_composite, false);
AddmmOp baddbmm_op("baddbmm",
                   "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
                   "alpha=1) -> Tensor",
                   baddbmm_composite, false);
AddmmOp addbmm_op("addbmm",
                  "addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
                  "alpha=1) -> Tensor",
                  addbmm_composite, false);

}  // namespace detail

Tensor mv(const Tensor& mat, const Tensor& vec) { return detail::mv_op(mat, vec); }
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
             const Scalar& alpha) {
  return detail::addmv_op(self, mat, vec, beta, alpha);
}
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
            const Scalar& alpha) {
  return detail::addr_op(self, vec1, vec2, beta, alpha);
}
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  return detail::baddbmm_op(self, batch1, batch2, beta, alpha);
}
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
              const Scalar& alpha) {
  return detail::addbmm_op(self, batch1, batch2, beta, alpha);
}

Tensor vdot(const Tensor& a, const Tensor& b) { return dot(a, b); }  // real: no conjugate

Tensor outer(const Tensor& a, const Tensor& b) {
  KILN_CHECK_VALUE(a.dim() == 1 && b.dim() == 1, "outer: expected 1-D tensors, got ", a.sizes(),
                   " and ", b.sizes());
  return a.reshape({a.numel(), 1}) * b;
}
Tensor ger(const Tensor& a, const Tensor& b) { return outer(a, b); }

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  KILN_CHECK_VALUE(a.dim() == b.dim(), "linalg.cross: inputs must have the same number of ",
                   "dimensions, got ", a.sizes(), " and ", b.sizes());
  DimVector sizes = detail::broadcast_dims(a.sizes(), b.sizes());
  int64_t d = -1;
  if (dim) {
    d = detail::wrap_dim(*dim, static_cast<int64_t>(sizes.size()), "cross");
  } else {  // torch.cross's default: the first dimension of size 3
    for (size_t i = 0; i < sizes.size() && d < 0; ++i) {
      if (sizes[i] == 3) d = static_cast<int64_t>(i);
    }
    KILN_CHECK_VALUE(d >= 0, "cross: no dimension of size 3 in input ", sizes);
  }
  KILN_CHECK_VALUE(sizes[d] == 3, "linalg.cross: inputs dimension ", d, " must have length 3. ",
                   "Got ", a.sizes(), " and ", b.sizes());
  Tensor x = a.expand(sizes), y = b.expand(sizes);
  auto part = [d](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return cat({part(x, 1) * part(y, 2) - part(x, 2) * part(y, 1),
              part(x, 2) * part(y, 0) - part(x, 0) * part(y, 2),
              part(x, 0) * part(y, 1) - part(x, 1) * part(y, 0)},
             d);
}

Tensor Tensor::dot(const Tensor& other) const { return kiln::dot(*this, other); }
Tensor Tensor::vdot(const Tensor& other) const { return kiln::vdot(*this, other); }
Tensor Tensor::mv(const Tensor& vec) const { return kiln::mv(*this, vec); }
Tensor Tensor::outer(const Tensor& vec2) const { return kiln::outer(*this, vec2); }
Tensor Tensor::cross(const Tensor& other, std::optional<int64_t> dim) const {
  return kiln::cross(*this, other, dim);
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta,
                     const Scalar& alpha) const {
  return kiln::addmv(*this, mat, vec, beta, alpha);
}
Tensor Tensor::addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
                    const Scalar& alpha) const {
  return kiln::addr(*this, vec1, vec2, beta, alpha);
}
Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                       const Scalar& alpha) const {
  return kiln::baddbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                      const Scalar& alpha) const {
  return kiln::addbmm(*this, batch1, batch2, beta, alpha);
}

}  // namespace kiln
