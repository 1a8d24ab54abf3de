// make_plan: see Note [Reduction layouts] in reduce.hpp.
#include "reduce.hpp"

namespace kiln::cpu {

void reduced_mask(const Call& call, int32_t attr, const kiln_tensor& x, bool* mask) {
  int32_t n = 0;
  const int64_t* dims = call.attr_list(attr, &n);
  for (int32_t d = 0; d < x.ndim; ++d) mask[d] = false;
  for (int32_t i = 0; i < n; ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= std::max<int64_t>(x.ndim, 1)) {
      throw std::out_of_range("dim " + std::to_string(d) + " is out of range for a tensor of " +
                              std::to_string(x.ndim) + " dimensions");
    }
    if (d < x.ndim) mask[d] = true;
  }
}

ReducePlan make_plan(const kiln_tensor& x, const kiln_tensor& out, const bool* reduced) {
  if (x.ndim > kMaxDims || out.ndim != x.ndim) {
    throw std::invalid_argument("reduction: input has " + std::to_string(x.ndim) +
                                " dimensions and output " + std::to_string(out.ndim) +
                                " (the output keeps the input's rank; at most " +
                                std::to_string(kMaxDims) + ")");
  }
  struct Dim {
    int64_t size, xs, os;
    bool red;
  };
  const int64_t item = static_cast<int64_t>(sdk::dtype_size(x.dtype));
  const int64_t out_item = static_cast<int64_t>(sdk::dtype_size(out.dtype));
  ReducePlan p;
  Dim dims[kMaxDims];
  int n = 0;
  for (int32_t d = 0; d < x.ndim; ++d) {
    int64_t size = x.sizes[d];
    if (reduced[d]) {
      p.reduced *= size;
      if (size == 0 && p.empty_dim < 0) p.empty_dim = d;
    } else {
      p.outputs *= size;
    }
    if (size == 1) continue;
    dims[n++] = {size, x.strides[d] * item, reduced[d] ? 0 : out.strides[d] * out_item, reduced[d]};
  }
  // outermost first: a stable insertion sort by input stride, descending
  for (int i = 1; i < n; ++i) {
    Dim d = dims[i];
    int j = i;
    for (; j > 0 && dims[j - 1].xs < d.xs; --j) dims[j] = dims[j - 1];
    dims[j] = d;
  }
  int m = 0;
  for (int i = 0; i < n; ++i) {
    Dim& last = dims[m > 0 ? m - 1 : 0];
    bool merge = m > 0 && last.red == dims[i].red && last.xs == dims[i].xs * dims[i].size &&
                 (dims[i].red || last.os == dims[i].os * dims[i].size);
    if (merge) {
      last.size *= dims[i].size;
      last.xs = dims[i].xs;
      last.os = dims[i].os;
    } else {
      dims[m++] = dims[i];
    }
  }
  for (int i = 0; i < m; ++i) {
    if (dims[i].red) {
      p.red_size[p.nred] = dims[i].size;
      p.red_x[p.nred++] = dims[i].xs;
    } else {
      p.kept_size[p.nkept] = dims[i].size;
      p.kept_x[p.nkept] = dims[i].xs;
      p.kept_out[p.nkept++] = dims[i].os;
    }
  }
  p.inner_reduced = m == 0 || dims[m - 1].red;
  if (p.nred == 0) {  // every reduced dimension has size 1: reduce over one element
    p.red_size[0] = 1;
    p.red_x[0] = 0;
    p.nred = 1;
  }
  return p;
}

}  // namespace kiln::cpu
