// Composites of sort: argsort, msort, kthvalue, median, nanmedian, searchsorted, bucketize, unique
// and unique_consecutive. Their values come out of gather (or a detached value plus a zero with
// a gradient), so their gradients need no formula of their own. See Note [Sort order].
#include "elementwise.h"

#include <kiln/indexing.h>

#include <limits>

namespace kiln {
namespace {

// values with dim dropped unless keepdim (values has a size-1 dim there).
Tensor maybe_squeeze(const Tensor& t, int64_t dim, bool keepdim) {
  return keepdim || t.dim() == 0 ? t : t.squeeze(dim);
}

// The element of each line of x along dim at sorted position `pos` (int64, keepdim shape), as
// (value, index): the value is gathered from x, so its gradient reaches that index.
std::tuple<Tensor, Tensor> pick_sorted(const Tensor& x, const Tensor& sorted_indices, int64_t dim,
                                       const Tensor& pos, bool keepdim) {
  Tensor idx = gather(sorted_indices, dim, pos);
  Tensor values = gather(x, dim, idx);
  return {maybe_squeeze(values, dim, keepdim), maybe_squeeze(idx, dim, keepdim)};
}

Tensor full_long(IntArrayRef sizes, int64_t v, Device device) {
  return full(sizes, v, TensorOptions().dtype(kLong).device(device));
}

DimVector keep_sizes(const Tensor& x, int64_t dim) {
  DimVector sizes(x.sizes());
  sizes[dim] = 1;
  return sizes;
}

// The lower median of each line (ignoring NaN when `ignore_nan`, else NaN when the line has one,
// at its first NaN), as PyTorch's median.dim and nanmedian.dim.
std::tuple<Tensor, Tensor> median_along(const char* op, const Tensor& x, int64_t dim, bool keepdim,
                                        bool ignore_nan) {
  dim = detail::wrap_dim(dim, x.dim(), op);
  if (x.dim() == 0) return {x.clone(), zeros({}, TensorOptions().dtype(kLong).device(x.device()))};
  int64_t n = x.sizes()[dim];
  KILN_CHECK_INDEX(n > 0, op, "(): cannot compute the median of dimension ", dim, " of size 0 ",
                   "(input ", x.sizes(), " on ", x.device(), ")");
  auto [sorted, order] = sort(x, /*stable=*/true, dim, /*descending=*/false);
  Tensor nan = isnan(x);
  Tensor nan_count = sum(nan, {dim}, /*keepdim=*/true);  // int64
  if (ignore_nan) {
    // the lower median of the n - nan_count leading values (NaN sorts last)
    Tensor pos = clamp_min(floor_divide(n - nan_count - 1, 2), 0);
    return pick_sorted(x, order, dim, pos, keepdim);
  }
  Tensor pos = full_long(keep_sizes(x, dim), (n - 1) / 2, x.device());
  if (x.is_floating_point()) {
    // a line with NaN gives its first NaN: the first of the NaNs sorted to its end
    pos = where(gt(nan_count, 0), n - nan_count, pos);
  }
  return pick_sorted(x, order, dim, pos, keepdim);
}

// The median of all elements, whose gradient PyTorch shares evenly among the elements equal to
// it (NaN: among the NaNs): the value stays exact, and a zero with that gradient is added.
Tensor median_all(const char* op, const Tensor& x, bool ignore_nan) {
  if (x.numel() == 0) return full({}, std::numeric_limits<double>::quiet_NaN(), x.options());
  Tensor r = std::get<0>(median_along(op, x.detach().reshape({-1}), 0, false, ignore_nan));
  if (!x.requires_grad()) return r;
  Tensor mask = x.is_floating_point() && isnan(r).item<bool>() ? isnan(x) : eq(x, r);
  Tensor share = mask.to(x.dtype()) / sum(mask);
  return r + sum(where(mask, (x - x.detach()) * share, zeros({}, x.options())));
}

}  // namespace

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  return std::get<1>(sort(x, dim, descending));
}
Tensor argsort(const Tensor& x, bool stable, int64_t dim, bool descending) {
  return std::get<1>(sort(x, stable, dim, descending));
}
Tensor msort(const Tensor& x) { return std::get<0>(sort(x, 0, false)); }

std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  dim = detail::wrap_dim(dim, x.dim(), "kthvalue");
  int64_t n = x.dim() == 0 ? 1 : x.sizes()[dim];
  KILN_CHECK_INDEX(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ",
                   dim, ": k = ", k, " for size ", n, " (input ", x.sizes(), " on ", x.device(),
                   "); pick k between 1 and ", n);
  if (x.dim() == 0) return {x.clone(), zeros({}, TensorOptions().dtype(kLong).device(x.device()))};
  Tensor order = std::get<1>(sort(x, /*stable=*/true, dim, /*descending=*/false));
  return pick_sorted(x, order, dim, full_long(keep_sizes(x, dim), k - 1, x.device()), keepdim);
}

Tensor median(const Tensor& x) { return median_all("median", x, false); }
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  return median_along("median", x, dim, keepdim, false);
}
Tensor nanmedian(const Tensor& x) { return median_all("nanmedian", x, true); }
std::tuple<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim) {
  return median_along("nanmedian", x, dim, keepdim, true);
}

// The most frequent value of each line (the smallest of those tied) and the last index where it
// occurs: runs of equal values in sorted order, each position counting its run so far.
std::tuple<Tensor, Tensor> mode(const Tensor& x, int64_t dim, bool keepdim) {
  dim = detail::wrap_dim(dim, x.dim(), "mode");
  if (x.dim() == 0) return {x.clone(), zeros({}, TensorOptions().dtype(kLong).device(x.device()))};
  int64_t n = x.sizes()[dim];
  KILN_CHECK_INDEX(n > 0, "mode(): Expected reduction dim ", dim, " to have non-zero size ",
                   "(input ", x.sizes(), " on ", x.device(), ")");
  auto [s, order] = sort(x.detach(), /*stable=*/true, dim, /*descending=*/false);
  DimVector shape(x.dim(), 1);
  shape[dim] = n;
  Tensor positions =
      arange(n, TensorOptions().dtype(kLong).device(x.device())).view(shape).expand(x.sizes());
  Tensor first = ones(keep_sizes(x, dim), TensorOptions().dtype(kBool).device(x.device()));
  Tensor is_new = cat({first, ne(s.narrow(dim, 1, n - 1), s.narrow(dim, 0, n - 1))}, dim);
  Tensor start = std::get<0>(cummax(where(is_new, positions, 0), dim));
  Tensor count = positions - start + 1;
  Tensor best = std::get<1>(max(count, dim, /*keepdim=*/true));  // the first largest count
  return pick_sorted(x, order, dim, best, keepdim);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  const char* op = "searchsorted";
  if (side) {
    KILN_CHECK_VALUE(*side == "left" || *side == "right", op, "(): side can only be 'left' or ",
                     "'right' but got '", *side, "'");
    KILN_CHECK_VALUE(!right || *side == "right", op, "(): side and right can't be set to ",
                     "opposites, got side of left while right was True");
    right = *side == "right";
  }
  KILN_CHECK_VALUE(sorted_sequence.dim() >= 1, op, "(): boundaries tensor should have positive ",
                   "dimension, but got 0 dimension");
  Tensor seq = sorted_sequence;
  if (sorter.defined()) {
    KILN_CHECK_VALUE(sorter.sizes().equals(seq.sizes()), op, "(): boundary and sorter must have ",
                     "the same size, but got boundary tensor ", seq.sizes(), " and got sorter ",
                     "tensor ", sorter.sizes());
    seq = gather(seq, -1, sorter.to(kLong));
  }
  bool one_d = seq.dim() == 1;
  if (!one_d) {
    bool same_lead = self.dim() == seq.dim();
    for (int64_t d = 0; same_lead && d + 1 < seq.dim(); ++d) {
      same_lead = self.sizes()[d] == seq.sizes()[d];
    }
    KILN_CHECK_VALUE(same_lead, op, "(): boundaries tensor should be 1 dimension or the first N-1 ",
                     "dimensions of boundaries tensor and input value tensor must match, but we ",
                     "got boundaries tensor ", seq.sizes(), " and input value tensor ",
                     self.sizes());
  }
  ScalarType common = promote_types(seq.dtype(), self.dtype());
  Tensor b = seq.to(common), v = self.to(common);
  // boundaries [..., 1, m] against values [..., k, 1]: how many lie below (or not above) each
  Tensor below = right ? le(b.unsqueeze(-2), v.unsqueeze(-1))
                       : lt(b.unsqueeze(-2), v.unsqueeze(-1));
  if (one_d) below = right ? le(b, v.unsqueeze(-1)) : lt(b, v.unsqueeze(-1));
  Tensor count = sum(below, {-1});
  return out_int32 ? count.to(kInt) : count;
}
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  Tensor v = detail::wrap_scalar(self, detail::scalar_result_type(sorted_sequence, self),
                                 sorted_sequence.device());
  return searchsorted(sorted_sequence, v, out_int32, right, side, sorter);
}
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  KILN_CHECK_VALUE(boundaries.dim() == 1, "bucketize(): boundaries tensor must be 1 dimension, ",
                   "but got dim(", boundaries.dim(), ")");
  return searchsorted(boundaries, self, out_int32, right);
}
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  KILN_CHECK_VALUE(boundaries.dim() == 1, "bucketize(): boundaries tensor must be 1 dimension, ",
                   "but got dim(", boundaries.dim(), ")");
  return searchsorted(boundaries, self, out_int32, right);
}

namespace {
// unique values of the flattened s in order, where is_new marks the first of each run: the
// values, each element's run (inverse, in s's order) and the run lengths.
std::tuple<Tensor, Tensor, Tensor> runs_of(const Tensor& s, const Tensor& is_new) {
  Tensor values = s.index({is_new});
  Tensor run = cumsum(is_new, 0) - 1;
  Tensor starts = nonzero(is_new).reshape({-1});
  Tensor ends =
      cat({starts.narrow(0, 1, starts.numel() - 1), full_long({1}, s.numel(), s.device())});
  return {values, run, ends - starts};
}

Tensor first_of_runs(const Tensor& s) {
  int64_t n = s.numel();
  Tensor first = ones({1}, TensorOptions().dtype(kBool).device(s.device()));
  return cat({first, ne(s.narrow(0, 1, n - 1), s.narrow(0, 0, n - 1))});
}

Tensor empty_long(Device device) { return zeros({0}, TensorOptions().dtype(kLong).device(device)); }
}  // namespace

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& self, bool /*sorted*/,
                                            bool return_inverse, bool return_counts) {
  Tensor x = self.detach().reshape({-1});
  Tensor inverse = return_inverse
                       ? zeros(self.sizes(), TensorOptions().dtype(kLong).device(self.device()))
                       : empty_long(self.device());
  if (x.numel() == 0) return {x.clone(), inverse, empty_long(self.device())};
  auto [s, order] = sort(x, /*stable=*/true, 0, false);
  auto [values, run, counts] = runs_of(s, first_of_runs(s));
  if (return_inverse) {
    inverse = scatter_add(zeros({x.numel()}, run.options()), 0, order, run).reshape(self.sizes());
  }
  return {values, inverse, return_counts ? counts : empty_long(self.device())};
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse,
                                                      bool return_counts,
                                                      std::optional<int64_t> dim) {
  KILN_CHECK(!dim || self.dim() <= 1, "unique_consecutive(): dim is supported for 1-D (or 0-D) ",
             "inputs only in kiln, got dim = ", *dim, " for input ", self.sizes(),
             "; flatten or loop over the other dimensions");
  Tensor x = self.detach().reshape({-1});
  if (x.numel() == 0) {
    Tensor inverse = return_inverse
                         ? zeros(self.sizes(), TensorOptions().dtype(kLong).device(self.device()))
                         : empty_long(self.device());
    return {x.clone(), inverse, empty_long(self.device())};
  }
  auto [values, run, counts] = runs_of(x, first_of_runs(x));
  return {values, return_inverse ? run.reshape(self.sizes()) : empty_long(self.device()),
          return_counts ? counts : empty_long(self.device())};
}

Tensor Tensor::argsort(int64_t dim, bool descending) const {
  return kiln::argsort(*this, dim, descending);
}
Tensor Tensor::msort() const { return kiln::msort(*this); }
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return kiln::kthvalue(*this, k, dim, keepdim);
}
Tensor Tensor::median() const { return kiln::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const {
  return kiln::median(*this, dim, keepdim);
}
Tensor Tensor::nanmedian() const { return kiln::nanmedian(*this); }
std::tuple<Tensor, Tensor> Tensor::mode(int64_t dim, bool keepdim) const {
  return kiln::mode(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim) const {
  return kiln::nanmedian(*this, dim, keepdim);
}

}  // namespace kiln
