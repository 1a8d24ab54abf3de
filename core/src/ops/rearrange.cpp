// Operators that rearrange elements without computing on them: flip, fliplr, flipud, roll, rot90,
// movedim, tile, repeat_interleave, split_with_sizes, tensor_split. All are composites of
// index_select, cat, narrow and views (no kernel of their own: see docs/architecture.md on
// composites), so their gradients come from those operators.
#include "../tensor_internal.h"

#include <kiln/ops.h>

#include <algorithm>
#include <optional>

namespace kiln {
namespace {

// dims wrapped to [0, ndim), each at most once; PyTorch's message names the repeated one.
DimVector unique_dims(IntArrayRef dims, int64_t ndim, const char* op) {
  DimVector out;
  for (int64_t d : dims) {
    int64_t w = detail::wrap_dim(d, ndim, op);
    KILN_CHECK(std::find(out.begin(), out.end(), w) == out.end(), op, ": dim ", w,
               " appears multiple times in the list of dims ", dims);
    out.push_back(w);
  }
  return out;
}

}  // namespace

Tensor flip(const Tensor& x, IntArrayRef dims) {
  DimVector wrapped = unique_dims(dims, x.dim(), "flip");
  if (x.dim() == 0) return x.clone();
  // adjacent flipped dims of a contiguous x flip as one merged dim: one pass instead of several
  std::vector<bool> flipped(static_cast<size_t>(x.dim()), false);
  for (int64_t d : wrapped) flipped[static_cast<size_t>(d)] = true;
  DimVector sizes;
  std::vector<bool> merged_flipped;
  for (int64_t d = 0; d < x.dim(); ++d) {
    bool f = flipped[static_cast<size_t>(d)];
    if (f && d > 0 && flipped[static_cast<size_t>(d - 1)] && x.is_contiguous()) {
      sizes[sizes.size() - 1] *= x.sizes()[d];
      continue;
    }
    sizes.push_back(x.sizes()[d]);
    merged_flipped.push_back(f);
  }
  Tensor in = x.is_contiguous() ? x.view(sizes) : x;
  Tensor out = in;
  for (int64_t d = 0; d < in.dim(); ++d) {
    int64_t n = in.sizes()[d];
    if (!merged_flipped[static_cast<size_t>(d)] || n < 2) continue;
    out = index_select(out, d,
                       arange(n - 1, -1, -1, TensorOptions().dtype(kLong).device(x.device())));
  }
  return out.is_same(in) ? x.clone() : out.view(x.sizes());
}

Tensor fliplr(const Tensor& x) {
  KILN_CHECK(x.dim() >= 2, "fliplr: input tensor must be at least 2-dimensional (got ", x.dim(),
             " dims)");
  return flip(x, {1});
}

Tensor flipud(const Tensor& x) {
  KILN_CHECK(x.dim() >= 1, "flipud: input tensor must be at least 1-dimensional (got a 0-dim "
                           "tensor)");
  return flip(x, {0});
}

Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty()) {
    KILN_CHECK(shifts.size() == 1,
               "roll: shifts and dimensions must align. shifts: ", shifts.size(),
               ", dims: 0 (give one shift to roll the flattened tensor)");
    return roll(x.flatten(), shifts, {0}).view(x.sizes());
  }
  KILN_CHECK(shifts.size() == dims.size(),
             "roll: shifts and dimensions must align. shifts: ", shifts.size(),
             ", dims: ", dims.size());
  if (x.dim() == 0) return x.clone();
  Tensor out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = detail::wrap_dim(dims[i], x.dim(), "roll");
    int64_t n = x.sizes()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;  // the first element moves to index s
    if (s == 0) continue;
    out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out.is_same(x) ? x.clone() : out;
}

Tensor rot90(const Tensor& x, int64_t k, IntArrayRef dims) {
  KILN_CHECK(dims.size() == 2,
             "rot90: expected total rotation dims == 2, but got dims = ", dims.size());
  KILN_CHECK(x.dim() >= 2, "rot90: expected total dims >= 2, but got total dims = ", x.dim());
  int64_t d0 = detail::wrap_dim(dims[0], x.dim(), "rot90");
  int64_t d1 = detail::wrap_dim(dims[1], x.dim(), "rot90");
  KILN_CHECK(d0 != d1, "rot90: expected rotation dims to be different, but got dim0 = ", d0,
             " and dim1 = ", d1);
  switch (((k % 4) + 4) % 4) {
    case 1: return flip(x, {d1}).transpose(d0, d1);
    case 2: return flip(x, {d0, d1});
    case 3: return flip(x, {d0}).transpose(d0, d1);
    default: return x.clone();
  }
}

Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination) {
  KILN_CHECK(source.size() == destination.size(),
             "movedim: Invalid source or destination dims: ", "source (", source,
             " dims) should contain the same number of dims as destination (", destination,
             " dims)");
  int64_t n = x.dim();
  DimVector src, dst;
  for (size_t i = 0; i < source.size(); ++i) {
    src.push_back(detail::wrap_dim(source[i], n, "movedim"));
    dst.push_back(detail::wrap_dim(destination[i], n, "movedim"));
  }
  auto check_unique = [](const DimVector& v, IntArrayRef given, const char* which) {
    for (size_t i = 0; i < v.size(); ++i) {
      KILN_CHECK(std::find(v.begin() + static_cast<std::ptrdiff_t>(i) + 1, v.end(), v[i]) ==
                     v.end(),
                 "movedim: repeated dim in `", which, "` (", given, ")");
    }
  };
  check_unique(src, source, "source");
  check_unique(dst, destination, "destination");
  if (n == 0) return x.view(x.sizes());
  // order[dst[i]] = src[i]; the remaining positions take the unmoved dims in order
  DimVector order(static_cast<size_t>(n), -1);
  std::vector<bool> moved(static_cast<size_t>(n), false);
  for (size_t i = 0; i < src.size(); ++i) {
    order[static_cast<size_t>(dst[i])] = src[i];
    moved[static_cast<size_t>(src[i])] = true;
  }
  int64_t next = 0;
  for (auto& o : order) {
    if (o >= 0) continue;
    while (moved[static_cast<size_t>(next)]) ++next;
    o = next++;
  }
  return x.permute(order);
}

Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
  return movedim(x, IntArrayRef{source}, IntArrayRef{destination});
}

Tensor tile(const Tensor& x, IntArrayRef reps) {
  DimVector full(reps);
  while (static_cast<int64_t>(full.size()) < x.dim()) full.insert(0, 1);
  return x.repeat(full);
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  KILN_CHECK(repeats >= 0, "repeat_interleave: repeats can not be negative (got ", repeats, ")");
  if (!dim) return repeat_interleave(x.flatten(), repeats, 0);
  Tensor in = x.dim() == 0 ? x.reshape({1}) : x;
  int64_t d = detail::wrap_dim(*dim, in.dim(), "repeat_interleave");
  DimVector sizes(in.sizes());
  sizes.insert(static_cast<size_t>(d + 1), repeats);
  int64_t n = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(in.sizes()[d], repeats, &n),
                   "repeat_interleave: ", repeats, " repeats of dimension ", d, " of sizes ",
                   in.sizes(), " overflow int64");
  detail::checked_numel("repeat_interleave", sizes, x.dtype());
  return in.unsqueeze(d + 1).expand(sizes).contiguous().flatten(d, d + 1);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  return x.split(split_size, dim);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  return x.chunk(chunks, dim);
}

std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef split_sizes, int64_t dim) {
  KILN_CHECK_INDEX(x.dim() > 0, "split_with_sizes: expected a tensor with at least one dimension");
  int64_t d = detail::wrap_dim(dim, x.dim(), "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    KILN_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, ",
               "but got split_sizes=", split_sizes);
    KILN_CHECK(!__builtin_add_overflow(total, s, &total), "split_with_sizes: split_sizes ",
               split_sizes, " overflow int64");
  }
  KILN_CHECK(total == x.sizes()[d], "split_with_sizes expects split_sizes to sum exactly to ",
             x.sizes()[d], " (input tensor's size at dimension ", d,
             "), but got split_sizes=", split_sizes);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(x.narrow(d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim) {
  KILN_CHECK(x.dim() > 0, "tensor_split: expected at least a 1-dimensional tensor, but got a ",
             "tensor with 0 dims");
  KILN_CHECK(sections > 0, "tensor_split: number of sections must be larger than 0, got ",
             sections);
  int64_t d = detail::wrap_dim(dim, x.dim(), "tensor_split");
  int64_t n = x.sizes()[d];
  // the first n % sections pieces have one element more
  DimVector sizes;
  for (int64_t i = 0; i < sections; ++i) sizes.push_back(n / sections + (i < n % sections));
  return split_with_sizes(x, sizes, d);
}

std::vector<Tensor> tensor_split(const Tensor& x, IntArrayRef indices, int64_t dim) {
  KILN_CHECK(x.dim() > 0, "tensor_split: expected at least a 1-dimensional tensor, but got a ",
             "tensor with 0 dims");
  int64_t d = detail::wrap_dim(dim, x.dim(), "tensor_split");
  int64_t n = x.sizes()[d];
  // piece i is x[indices[i-1]:indices[i]] along d with Python's slice rules (negative indices
  // count from the end, out-of-range ones clamp, a decreasing pair gives an empty piece)
  auto clamp_index = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  std::vector<Tensor> out;
  int64_t begin = 0;
  for (size_t i = 0; i <= indices.size(); ++i) {
    int64_t end = i < indices.size() ? clamp_index(indices[i]) : n;
    out.push_back(x.narrow(d, begin, std::max<int64_t>(end - begin, 0)));
    begin = end;
  }
  return out;
}

}  // namespace kiln
