// max_dim and min_dim: the extreme along one dimension and the first index where it occurs; NaN
// counts as the extreme. Same two layouts as Note [Reduction layouts], on one dimension.
#include "arith.hpp"
#include "reduce.hpp"
#include "registry.hpp"

namespace kiln::cpu {
namespace {

using sdk::kernel;

constexpr int64_t kColSpan = 4096;  // columns compared together in the outer layout
constexpr int64_t kSlice = 16384;

template <class T, bool Max>
struct Extreme {
  using C = compute_t<T>;
  // v replaces best: strictly more extreme, or the first NaN (no || and &&: see nan_max)
  static bool better(C v, C best) {
    const bool v_nan = is_nan(v), best_nan = is_nan(best);
    if constexpr (Max) {
      return (v > best) | (v_nan & !best_nan);
    } else {
      return (v < best) | (v_nan & !best_nan);
    }
  }
  template <class V>
  static V pick(V a, V b) {
    if constexpr (Max) {
      return nan_max(a, b);
    } else {
      return nan_min(a, b);
    }
  }
};

template <class C>
struct Found {
  C value;
  int64_t index;
};

// The extreme of n >= 1 contiguous values, with independent lanes.
template <class X, class C>
C chunk_extreme(const C* v, int64_t n) {
  if constexpr (!std::is_same_v<C, bool>) {
    return fold(v, n, v[0], [](auto a, auto b) { return X::pick(a, b); });
  }
  constexpr int kLanes = 64 / sizeof(C) < 8 ? 8 : 64 / sizeof(C);
  C lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = v[0];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] = X::pick(lane[j], v[i + j]);
  }
  for (; i < n; ++i) lane[0] = X::pick(lane[0], v[i]);
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) lane[j] = X::pick(lane[j], lane[j + w]);
  }
  return lane[0];
}

// Updates `found` with positions [base, base + n) of the run at x (byte step `step`): a chunk's
// extreme is found with vector lanes, its first position only when it beats `found`.
template <class T, bool Max>
void scan_run(const char* x, int64_t n, int64_t step, int64_t base, Found<compute_t<T>>& found) {
  using X = Extreme<T, Max>;
  using C = compute_t<T>;
  Buffer<C> buf;
  for (int64_t off = 0; off < n && !is_nan(found.value); off += kChunk) {
    int64_t m = std::min(kChunk, n - off);
    const C* v = buf.v;
    if (!is_16bit_float_v<T> && step == static_cast<int64_t>(sizeof(T))) {
      v = reinterpret_cast<const C*>(x + off * step);
    } else {
      load_chunk<T>(x + off * step, step, m, buf.v);
    }
    C e = chunk_extreme<X>(v, m);
    if (!X::better(e, found.value)) continue;
    int64_t j = 0;
    if (is_nan(e)) {
      while (!is_nan(v[j])) ++j;
    } else {
      while (v[j] != e) ++j;
    }
    found = {v[j], base + off + j};
  }
}

template <class T>
compute_t<T> load_one(const char* x) {
  return static_cast<compute_t<T>>(*reinterpret_cast<const T*>(x));
}

struct ArgPlan {
  int nkept = 0;  // dimensions other than dim, outermost first by input stride
  int64_t size[kMaxDims], x[kMaxDims], values[kMaxDims], indices[kMaxDims];
  int64_t outputs = 1;
  int64_t run = 1, step = 0;  // along dim
};

ArgPlan make_arg_plan(const kiln_tensor& x, const kiln_tensor& values, const kiln_tensor& indices,
                      int64_t dim) {
  if (x.ndim > kMaxDims || values.ndim != x.ndim || indices.ndim != x.ndim) {
    throw std::invalid_argument("max_dim/min_dim: input has " + std::to_string(x.ndim) +
                                " dimensions, values " + std::to_string(values.ndim) +
                                " and indices " + std::to_string(indices.ndim));
  }
  if (dim < 0 || dim >= std::max<int64_t>(x.ndim, 1)) {
    throw std::out_of_range("dim " + std::to_string(dim) + " is out of range for a tensor of " +
                            std::to_string(x.ndim) + " dimensions");
  }
  if (indices.dtype != KILN_I64 || values.dtype != x.dtype) {
    throw std::invalid_argument("max_dim/min_dim: outputs must be " +
                                std::string(sdk::dtype_name(x.dtype)) + " and int64");
  }
  const int64_t item = static_cast<int64_t>(sdk::dtype_size(x.dtype));
  ArgPlan p;
  if (x.ndim > 0) {
    p.run = x.sizes[dim];
    p.step = x.strides[dim] * item;
  }
  for (int32_t d = 0; d < x.ndim; ++d) {
    if (d == dim) continue;
    p.outputs *= x.sizes[d];
    if (x.sizes[d] == 1) continue;
    int i = p.nkept++;
    for (; i > 0 && p.x[i - 1] < x.strides[d] * item; --i) {  // insertion sort, outermost first
      p.size[i] = p.size[i - 1];
      p.x[i] = p.x[i - 1];
      p.values[i] = p.values[i - 1];
      p.indices[i] = p.indices[i - 1];
    }
    p.size[i] = x.sizes[d];
    p.x[i] = x.strides[d] * item;
    p.values[i] = values.strides[d] * item;
    p.indices[i] = indices.strides[d] * static_cast<int64_t>(sizeof(int64_t));
  }
  return p;
}

// dim is innermost (or the only one): one run per output
template <class T, bool Max>
void arg_inner(const ArgPlan& p, const char* x, char* values, char* indices) {
  using C = compute_t<T>;
  Odometer<3> outputs(p.nkept, p.size, {p.x, p.values, p.indices});
  auto store = [&](const Odometer<3>& o, Found<C> f) {
    *reinterpret_cast<T*>(values + o.off[1]) = static_cast<T>(f.value);
    *reinterpret_cast<int64_t*>(indices + o.off[2]) = f.index;
  };
  if (p.outputs >= 16 || p.outputs * p.run <= 2 * kGrain) {
    parallel_for(p.outputs, std::max<int64_t>(1, kGrain / p.run), [&](int64_t b, int64_t e) {
      Odometer<3> o = outputs;
      o.seek(b);
      for (int64_t i = b; i < e; ++i, o.next()) {
        Found<C> f{load_one<T>(x + o.off[0]), 0};
        scan_run<T, Max>(x + o.off[0], p.run, p.step, 0, f);
        store(o, f);
      }
    });
    return;
  }
  // few long runs: fixed slices in parallel, the earliest winning ties
  const int64_t slices = std::min<int64_t>(64, (p.run + kSlice - 1) / kSlice);
  for (int64_t i = 0; i < p.outputs; ++i) {
    outputs.seek(i);
    const char* base = x + outputs.off[0];
    Found<C> part[64] = {};
    parallel_for(slices, 1, [&](int64_t b, int64_t e) {
      for (int64_t s = b; s < e; ++s) {
        int64_t lo = p.run * s / slices, hi = p.run * (s + 1) / slices;
        part[s] = {load_one<T>(base + lo * p.step), lo};
        scan_run<T, Max>(base + lo * p.step, hi - lo, p.step, lo, part[s]);
      }
    });
    Found<C> f = part[0];
    for (int64_t s = 1; s < slices; ++s) {
      if (Extreme<T, Max>::better(part[s].value, f.value)) f = part[s];
    }
    store(outputs, f);
  }
}

// best[j] and index[j] over rows [r0, r1) of the w columns at x (column byte step cs): whole rows
// of the span are compared against the vector of best values, in address order.
template <class T, bool Max>
void arg_rows(const ArgPlan& p, const char* x, int64_t r0, int64_t r1, int64_t w, int64_t cs,
              compute_t<T>* best, int64_t* index) {
  using X = Extreme<T, Max>;
  Buffer<compute_t<T>> row;
  for (int64_t j0 = 0; j0 < w; j0 += kChunk) {
    load_chunk<T>(x + r0 * p.step + j0 * cs, cs, std::min(kChunk, w - j0), best + j0);
  }
  for (int64_t j = 0; j < w; ++j) index[j] = r0;
  for (int64_t r = r0 + 1; r < r1; ++r) {
    for (int64_t j0 = 0; j0 < w; j0 += kChunk) {
      const int64_t m = std::min(kChunk, w - j0);
      load_chunk<T>(x + r * p.step + j0 * cs, cs, m, row.v);
      compute_t<T>* b = best + j0;
      int64_t* ix = index + j0;
      for (int64_t j = 0; j < m; ++j) {
        bool replace = X::better(row.v[j], b[j]);
        b[j] = replace ? row.v[j] : b[j];
        ix[j] = replace ? r : ix[j];
      }
    }
  }
}

// dim is outer to a kept dimension: spans of columns, or fixed slices of rows when there are few
// spans, in parallel
template <class T, bool Max>
void arg_outer(const ArgPlan& p, const char* x, char* values, char* indices) {
  using C = compute_t<T>;
  const int last = p.nkept - 1;
  const int64_t width = p.size[last], cs = p.x[last];
  const int64_t span = std::min(width, kColSpan);
  const int64_t blocks = (width + span - 1) / span;
  const int64_t tasks = p.outputs / width * blocks;
  Odometer<3> planes(last, p.size, {p.x, p.values, p.indices});
  auto store = [&](const Odometer<3>& plane, int64_t c0, int64_t w, const C* best,
                   const int64_t* index) {
    for (int64_t j = 0; j < w; ++j) {
      *reinterpret_cast<T*>(values + plane.off[1] + (c0 + j) * p.values[last]) =
          static_cast<T>(best[j]);
      *reinterpret_cast<int64_t*>(indices + plane.off[2] + (c0 + j) * p.indices[last]) = index[j];
    }
  };
  if (tasks >= 4 || p.outputs * p.run <= 2 * kGrain) {
    const int64_t grain = std::max<int64_t>(1, kGrain / (p.run * span));
    parallel_for(tasks, grain, [&](int64_t b, int64_t e) {
      Odometer<3> plane = planes;
      Scratch<C, 256> best(span);
      Scratch<int64_t, 256> index(span);
      for (int64_t t = b; t < e; ++t) {
        plane.seek(t / blocks);
        int64_t c0 = t % blocks * span, w = std::min(span, width - c0);
        arg_rows<T, Max>(p, x + plane.off[0] + c0 * cs, 0, p.run, w, cs, best.get(), index.get());
        store(plane, c0, w, best.get(), index.get());
      }
    });
    return;
  }
  for (int64_t t = 0; t < tasks; ++t) {
    planes.seek(t / blocks);
    int64_t c0 = t % blocks * span, w = std::min(span, width - c0);
    const int64_t slices = std::min<int64_t>(16, std::max<int64_t>(1, p.run * w / kSlice));
    std::unique_ptr<C[]> best(new C[static_cast<size_t>(slices * w)]);
    std::unique_ptr<int64_t[]> index(new int64_t[static_cast<size_t>(slices * w)]);
    const char* base = x + planes.off[0] + c0 * cs;
    parallel_for(slices, 1, [&](int64_t b, int64_t e) {
      for (int64_t s = b; s < e; ++s) {
        arg_rows<T, Max>(p, base, p.run * s / slices, p.run * (s + 1) / slices, w, cs,
                         best.get() + s * w, index.get() + s * w);
      }
    });
    for (int64_t s = 1; s < slices; ++s) {  // in order: the earliest slice wins ties
      for (int64_t j = 0; j < w; ++j) {
        if (Extreme<T, Max>::better(best[s * w + j], best[j])) {
          best[j] = best[s * w + j];
          index[j] = index[s * w + j];
        }
      }
    }
    store(planes, c0, w, best.get(), index.get());
  }
}

template <bool Max>
void arg_kernel(const Call& call) {
  const kiln_tensor& x = call.input(0);
  visit<Dtypes::all>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ArgPlan p = make_arg_plan(x, call.output(0), call.output(1), call.attr_i64(0));
    if (p.outputs == 0) return;
    if (p.run == 0) {
      throw std::invalid_argument("cannot reduce over dimension " +
                                  std::to_string(call.attr_i64(0)) + " of size 0");
    }
    const char* xp = static_cast<const char*>(x.data);
    char* values = static_cast<char*>(call.output(0).data);
    char* indices = static_cast<char*>(call.output(1).data);
    if (p.nkept > 0 && p.run > 1 && p.x[p.nkept - 1] < p.step) {
      arg_outer<T, Max>(p, xp, values, indices);
    } else {
      arg_inner<T, Max>(p, xp, values, indices);
    }
  });
}

}  // namespace

void register_reduce_arg(KernelTable& table) {
  table.add("max_dim", kernel<arg_kernel<true>>);
  table.add("min_dim", kernel<arg_kernel<false>>);
}

}  // namespace kiln::cpu
