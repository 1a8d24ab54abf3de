// Reductions over a list of dimensions: sum, prod, amax, amin, all, any. Each operator is a small
// struct (identity, load, combine, finish) plugged into the two loops of Note [Reduction layouts].
// Floating sums and products are blocked and pairwise (runs split in halves down to kLeaf
// elements, rows folded in a cascade of levels of 16), so their error grows with log(n).
#include "arith.hpp"
#include "reduce.hpp"
#include "registry.hpp"

#include <cstring>
#include <memory>

namespace kiln::cpu {
namespace {

using sdk::kernel;

constexpr int64_t kLeaf = 1024;     // contiguous elements summed directly before splitting
constexpr int64_t kColSpan = 4096;  // columns accumulated together in the outer layout
constexpr int64_t kSlice = 16384;   // elements per parallel slice of one large reduction
constexpr int kLevels = 4;          // cascade levels; each folds 16 entries of the one below
constexpr int kFan = 16;

// ---- the operators ------------------------------------------------------------------------------

// float for 16-bit floats and float32, double for float64, wrapping uint64 for integers
template <class T>
using sum_acc_t = std::conditional_t<is_floating_v<T>, compute_t<T>, uint64_t>;

template <class T>
struct Sum {
  using C = compute_t<T>;
  using acc_t = sum_acc_t<T>;
  static constexpr bool kCascade = is_floating_v<T>;
  static constexpr bool kNeedsElements = false;
  static acc_t identity() { return acc_t(0); }
  static acc_t load(C x) {
    if constexpr (is_floating_v<T>) {
      return x;
    } else {
      return static_cast<acc_t>(static_cast<int64_t>(x));  // sign-extend, then wrap
    }
  }
  template <class V>
  static V combine(V a, V b) {
    return a + b;
  }
  static C finish(acc_t a) { return static_cast<C>(a); }
};

template <class T>
struct Prod : Sum<T> {
  using typename Sum<T>::acc_t;
  static acc_t identity() { return acc_t(1); }
  template <class V>
  static V combine(V a, V b) {
    return a * b;
  }
};

template <class T>
struct AMax {
  using C = compute_t<T>;
  using acc_t = C;
  static constexpr bool kCascade = false;
  static constexpr bool kNeedsElements = true;
  static acc_t identity() { return lowest_value<C>(); }
  static acc_t load(C x) { return x; }
  template <class V>
  static V combine(V a, V b) {
    return nan_max(a, b);
  }
  static C finish(acc_t a) { return a; }
};

template <class T>
struct AMin : AMax<T> {
  using typename AMax<T>::acc_t;
  static acc_t identity() { return highest_value<acc_t>(); }
  template <class V>
  static V combine(V a, V b) {
    return nan_min(a, b);
  }
};

template <class T>
struct All {  // bool only; bytes so that the loops vectorize
  using acc_t = uint8_t;
  static constexpr bool kCascade = false;
  static constexpr bool kNeedsElements = false;
  static acc_t identity() { return 1; }
  static acc_t load(bool x) { return x; }
  template <class V>
  static V combine(V a, V b) {
    return a & b;
  }
  static bool finish(acc_t a) { return a != 0; }
};

template <class T>
struct Any : All<T> {
  static uint8_t identity() { return 0; }
  template <class V>
  static V combine(V a, V b) {
    return a | b;
  }
};

// ---- building blocks ----------------------------------------------------------------------------

// Reduces n contiguous elements with a vector's worth of independent accumulators.
template <class Op, class E>
typename Op::acc_t reduce_contiguous(const E* x, int64_t n) {
  using A = typename Op::acc_t;
  auto combine = [](auto a, auto b) { return Op::combine(a, b); };
  if constexpr (std::is_same_v<E, bool> && std::is_same_v<A, uint8_t>) {  // all, any
    return fold(reinterpret_cast<const uint8_t*>(x), n, Op::identity(), combine);
  } else if constexpr (std::is_same_v<E, A> && !std::is_same_v<A, bool>) {
    return fold(x, n, Op::identity(), combine);
  }
  // the rest convert each element (integer sums and products widen to 64 bits): plain lanes
  constexpr int kLanes = 64 / sizeof(A) < 8 ? 8 : 64 / sizeof(A);
  A lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = Op::identity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] = Op::combine(lane[j], Op::load(x[i + j]));
  }
  for (; i < n; ++i) lane[0] = Op::combine(lane[0], Op::load(x[i]));
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) lane[j] = Op::combine(lane[j], lane[j + w]);
  }
  return lane[0];
}

// Reduces a run of n elements of T at byte step `step`: pairwise for Op::kCascade.
template <class Op, class T>
typename Op::acc_t reduce_run(const char* x, int64_t n, int64_t step) {
  if constexpr (!is_16bit_float_v<T>) {
    if (step == static_cast<int64_t>(sizeof(T)) && (!Op::kCascade || n <= kLeaf)) {
      return reduce_contiguous<Op>(reinterpret_cast<const T*>(x), n);
    }
  }
  const int64_t leaf = step == static_cast<int64_t>(sizeof(T)) ? kLeaf : kChunk;
  if (n > kChunk) {
    if constexpr (Op::kCascade) {
      int64_t half = ((n + 1) / 2 + leaf - 1) / leaf * leaf;
      if (half >= n) half = kChunk;
      // in address order (as arguments the halves could run backwards, which defeats the
      // hardware prefetcher)
      typename Op::acc_t left = reduce_run<Op, T>(x, half, step);
      typename Op::acc_t right = reduce_run<Op, T>(x + half * step, n - half, step);
      return Op::combine(left, right);
    } else {
      typename Op::acc_t acc = Op::identity();
      for (int64_t off = 0; off < n; off += kChunk) {
        acc = Op::combine(acc, reduce_run<Op, T>(x + off * step, std::min(kChunk, n - off), step));
      }
      return acc;
    }
  }
  Buffer<compute_t<T>> buf;  // 16-bit floats converted, strided elements gathered
  load_chunk<T>(x, step, n, buf.v);
  return reduce_contiguous<Op>(buf.v, n);
}

// Folds rows of w accumulators added one at a time, in levels of kFan, so that each entry takes
// part in about kLevels * kFan additions however many rows are added (one level without
// cascade). Storage for its levels is the caller's: levels() * w accumulators.
template <class Op>
class Cascade {
 public:
  using A = typename Op::acc_t;
  static constexpr int levels() { return Op::kCascade ? kLevels : 1; }

  Cascade(int64_t w, A* storage) : w_(w), level_(storage) {
    for (int l = 0; l < levels(); ++l) reset(l);
  }

  // level 0 += f(j) for j in [j0, j0 + n): a slice of the row being added
  template <class F>
  void add(int64_t j0, int64_t n, const F& f) {
    A* l0 = level_ + j0;
    for (int64_t j = 0; j < n; ++j) l0[j] = Op::combine(l0[j], f(j));
  }

  // level 0 += src[j] for j in [j0, j0 + n), src holding accumulator values (a row that needs no
  // conversion): lane by lane on GCC vectors, since selects such as nan_max's would not vectorize
  void add_values(int64_t j0, int64_t n, const A* src) {
    A* l0 = level_ + j0;
    int64_t j = 0;
    if constexpr (!std::is_same_v<A, bool>) {
      using V = typename Vec16<A>::type;
      for (; j + Vec16<A>::kLanes <= n; j += Vec16<A>::kLanes) {
        V a, b;
        std::memcpy(&a, l0 + j, sizeof a);
        std::memcpy(&b, src + j, sizeof b);
        a = Op::combine(a, b);
        std::memcpy(l0 + j, &a, sizeof a);
      }
    }
    for (; j < n; ++j) l0[j] = Op::combine(l0[j], src[j]);
  }

  // the row is complete: fold the levels that are full
  void end_row() {
    for (int l = 0; l + 1 < levels() && ++count_[l] == kFan; ++l) {
      fold(l);
      count_[l] = 0;
    }
  }

  void result(A* out) {
    for (int l = 0; l + 1 < levels(); ++l) fold(l);
    const A* top = level_ + (levels() - 1) * w_;
    for (int64_t j = 0; j < w_; ++j) out[j] = top[j];
  }

 private:
  void reset(int l) {
    A* v = level_ + l * w_;
    for (int64_t j = 0; j < w_; ++j) v[j] = Op::identity();
  }
  void fold(int l) {
    A* up = level_ + (l + 1) * w_;
    const A* down = level_ + l * w_;
    for (int64_t j = 0; j < w_; ++j) up[j] = Op::combine(up[j], down[j]);
    reset(l);
  }

  int64_t w_;
  A* level_;
  int count_[kLevels] = {};
};

// Combines n partial results in a balanced tree, in order.
template <class Op>
typename Op::acc_t tree_combine(const typename Op::acc_t* v, int64_t n) {
  if (n == 1) return v[0];
  int64_t half = n / 2;
  return Op::combine(tree_combine<Op>(v, half), tree_combine<Op>(v + half, n - half));
}

template <class Op, class T>
void store(char* out, int64_t step, int64_t w, const typename Op::acc_t* acc) {
  for (int64_t j = 0; j < w; ++j) {
    *reinterpret_cast<T*>(out + j * step) = static_cast<T>(Op::finish(acc[j]));
  }
}

// ---- inner layout -------------------------------------------------------------------------------

// Reduces positions [lo, hi) of the flattened reduced dimensions of one output at x.
template <class Op, class T>
typename Op::acc_t reduce_range(const char* x, const ReducePlan& p, int64_t lo, int64_t hi) {
  const int last = p.nred - 1;
  const int64_t run = p.red_size[last], step = p.red_x[last];
  Odometer<1> outer(last, p.red_size, {p.red_x});
  outer.seek(lo / run);
  typename Op::acc_t storage[kLevels];
  Cascade<Op> acc(1, storage);
  for (int64_t j = lo % run; lo < hi; j = 0, outer.next()) {
    int64_t n = std::min(run - j, hi - lo);
    typename Op::acc_t r = reduce_run<Op, T>(x + outer.off[0] + j * step, n, step);
    acc.add(0, 1, [r](int64_t) { return r; });
    acc.end_row();
    lo += n;
  }
  typename Op::acc_t result = Op::identity();
  acc.result(&result);
  return result;
}

template <class Op, class T>
void reduce_inner(const ReducePlan& p, const char* x, char* out) {
  using A = typename Op::acc_t;
  const int64_t total = p.reduced;
  Odometer<2> outputs(p.nkept, p.kept_size, {p.kept_x, p.kept_out});
  if (p.outputs >= 16 || p.outputs * total <= 2 * kGrain) {
    parallel_for(p.outputs, std::max<int64_t>(1, kGrain / total), [&](int64_t b, int64_t e) {
      Odometer<2> o = outputs;
      o.seek(b);
      for (int64_t i = b; i < e; ++i, o.next()) {
        A acc = reduce_range<Op, T>(x + o.off[0], p, 0, total);
        store<Op, T>(out + o.off[1], 0, 1, &acc);
      }
    });
    return;
  }
  // few large outputs: each splits into fixed slices reduced in parallel
  const int64_t slices = std::min<int64_t>(64, (total + kSlice - 1) / kSlice);
  for (int64_t i = 0; i < p.outputs; ++i) {
    outputs.seek(i);
    A partial[64];
    std::fill(partial, partial + 64, Op::identity());
    parallel_for(slices, 1, [&](int64_t b, int64_t e) {
      for (int64_t s = b; s < e; ++s) {
        partial[s] = reduce_range<Op, T>(x + outputs.off[0], p, total * s / slices,
                                         total * (s + 1) / slices);
      }
    });
    A acc = tree_combine<Op>(partial, slices);
    store<Op, T>(out + outputs.off[1], 0, 1, &acc);
  }
}

// ---- outer layout -------------------------------------------------------------------------------

// result[j] = reduction over rows [r0, r1) of the w columns at x (column byte step cs). Whole
// rows of the span are read in address order, which the hardware prefetcher follows.
template <class Op, class T>
void reduce_rows(const char* x, const ReducePlan& p, int64_t r0, int64_t r1, int64_t w, int64_t cs,
                 typename Op::acc_t* result) {
  using A = typename Op::acc_t;
  Scratch<A, 1024> storage(Cascade<Op>::levels() * w);
  Cascade<Op> acc(w, storage.get());
  Odometer<1> rows(p.nred, p.red_size, {p.red_x});
  rows.seek(r0);
  Buffer<compute_t<T>> buf;
  const bool direct = !is_16bit_float_v<T> && cs == static_cast<int64_t>(sizeof(T));
  for (int64_t r = r0; r < r1; ++r, rows.next()) {
    const char* row = x + rows.off[0];
    if (direct) {
      if constexpr (std::is_same_v<T, A> || (std::is_same_v<T, bool> && sizeof(A) == 1)) {
        acc.add_values(0, w, reinterpret_cast<const A*>(row));  // bool rows read as bytes
      } else {  // integer sums and products widen each element
        const T* v = reinterpret_cast<const T*>(row);
        acc.add(0, w, [v](int64_t j) { return Op::load(static_cast<compute_t<T>>(v[j])); });
      }
    } else {  // 16-bit floats converted, strided columns gathered, a chunk at a time
      for (int64_t j0 = 0; j0 < w; j0 += kChunk) {
        const int64_t n = std::min(kChunk, w - j0);
        load_chunk<T>(row + j0 * cs, cs, n, buf.v);
        if constexpr (std::is_same_v<compute_t<T>, A>) {
          acc.add_values(j0, n, buf.v);
        } else {
          const compute_t<T>* v = buf.v;
          acc.add(j0, n, [v](int64_t j) { return Op::load(v[j]); });
        }
      }
    }
    acc.end_row();
  }
  acc.result(result);
}

template <class Op, class T>
void reduce_outer(const ReducePlan& p, const char* x, char* out) {
  using A = typename Op::acc_t;
  const int last = p.nkept - 1;
  const int64_t width = p.kept_size[last], cs = p.kept_x[last], os = p.kept_out[last];
  const int64_t span = std::min(width, kColSpan);
  const int64_t blocks = (width + span - 1) / span;
  const int64_t tasks = p.outputs / width * blocks;
  const int64_t rows = p.reduced;
  Odometer<2> planes(last, p.kept_size, {p.kept_x, p.kept_out});
  if (tasks >= 4 || p.outputs * rows <= 2 * kGrain) {
    parallel_for(tasks, std::max<int64_t>(1, kGrain / (rows * span)), [&](int64_t b, int64_t e) {
      Odometer<2> plane = planes;
      Scratch<A, 256> acc(span);
      for (int64_t t = b; t < e; ++t) {
        plane.seek(t / blocks);
        int64_t c0 = t % blocks * span, w = std::min(span, width - c0);
        reduce_rows<Op, T>(x + plane.off[0] + c0 * cs, p, 0, rows, w, cs, acc.get());
        store<Op, T>(out + plane.off[1] + c0 * os, os, w, acc.get());
      }
    });
    return;
  }
  // few spans and many rows: fixed slices of rows in parallel, combined in order
  for (int64_t t = 0; t < tasks; ++t) {
    planes.seek(t / blocks);
    int64_t c0 = t % blocks * span, w = std::min(span, width - c0);
    const int64_t slices = std::min<int64_t>(16, std::max<int64_t>(1, rows * w / kSlice));
    std::unique_ptr<A[]> partial(new A[static_cast<size_t>((slices + 1) * w)]);
    parallel_for(slices, 1, [&](int64_t b, int64_t e) {
      for (int64_t s = b; s < e; ++s) {
        const int64_t r0 = rows * s / slices, r1 = rows * (s + 1) / slices;
        reduce_rows<Op, T>(x + planes.off[0] + c0 * cs, p, r0, r1, w, cs, partial.get() + s * w);
      }
    });
    A* acc = partial.get() + slices * w;
    A column[16];
    for (int64_t j = 0; j < w; ++j) {
      for (int64_t s = 0; s < slices; ++s) column[s] = partial[static_cast<size_t>(s * w + j)];
      acc[j] = tree_combine<Op>(column, slices);
    }
    store<Op, T>(out + planes.off[1] + c0 * os, os, w, acc);
  }
}

// ---- kernels ------------------------------------------------------------------------------------

template <class Op, class T>
void reduce(const Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  if (x.ndim > kMaxDims) throw std::invalid_argument("reduction: too many dimensions");
  if (out.dtype != x.dtype) {
    throw std::invalid_argument(std::string("reduction: output dtype ") +
                                sdk::dtype_name(out.dtype) + " differs from input dtype " +
                                sdk::dtype_name(x.dtype));
  }
  bool mask[kMaxDims];
  reduced_mask(call, 0, x, mask);
  ReducePlan p = make_plan(x, out, mask);
  if (p.outputs == 0) return;
  const char* xp = static_cast<const char*>(x.data);
  char* op = static_cast<char*>(out.data);
  if (p.reduced == 0) {
    if (Op::kNeedsElements) {
      throw std::invalid_argument("cannot reduce over dimension " + std::to_string(p.empty_dim) +
                                  " of size 0: the operation has no identity");
    }
    typename Op::acc_t identity = Op::identity();
    Odometer<1> o(p.nkept, p.kept_size, {p.kept_out});
    for (int64_t i = 0; i < p.outputs; ++i, o.next()) store<Op, T>(op + o.off[0], 0, 1, &identity);
    return;
  }
  if (p.inner_reduced) {
    reduce_inner<Op, T>(p, xp, op);
  } else {
    reduce_outer<Op, T>(p, xp, op);
  }
}

template <template <class> class Op, Dtypes S>
void reduce_kernel(const Call& call) {
  visit<S>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce<Op<T>, T>(call);
  });
}

template <template <class> class Op>
void logical_reduce_kernel(const Call& call) {  // all, any: bool in, bool out
  if (call.input(0).dtype != KILN_BOOL) throw_unsupported(call.input(0).dtype);
  reduce<Op<bool>, bool>(call);
}

}  // namespace

void register_reduce(KernelTable& table) {
  table.add("sum", kernel<reduce_kernel<Sum, Dtypes::numeric>>);
  table.add("prod", kernel<reduce_kernel<Prod, Dtypes::numeric>>);
  table.add("amax", kernel<reduce_kernel<AMax, Dtypes::all>>);
  table.add("amin", kernel<reduce_kernel<AMin, Dtypes::all>>);
  table.add("all", kernel<logical_reduce_kernel<All>>);
  table.add("any", kernel<logical_reduce_kernel<Any>>);
}

}  // namespace kiln::cpu
