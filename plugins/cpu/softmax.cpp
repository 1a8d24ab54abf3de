// softmax_lastdim and softmax_lastdim_backward (See Note [Fused softmax] in
// core/src/ops/softmax.cpp): softmax or log_softmax over the last dimension of contiguous rows,
// one row at a time in float32 for float32 and the 16-bit floats (converted in and rounded once
// out) and in float64 for float64; rows split across TBB's threads.
#include "loops.hpp"
#include "registry.hpp"
#include "vecmath.hpp"

#include <array>
#include <cmath>
#include <tuple>

namespace kiln::cpu {
namespace {

using sdk::kernel;

constexpr int kLanes = 16;  // partial sums and maxima: a vector's worth, which GCC vectorizes

template <class C>
[[gnu::always_inline]] inline C exp_of(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return vm::exp(x);
  } else {
    return std::exp(x);
  }
}

// The largest of x[0..n) (NaN is skipped here; it makes its row NaN through exp below).
template <class C>
[[gnu::always_inline]] inline C row_max(const C* x, int64_t n) {
  C part[kLanes];
  for (int k = 0; k < kLanes; ++k) part[k] = -INFINITY;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) part[k] = x[i + k] > part[k] ? x[i + k] : part[k];
  }
  C m = -INFINITY;
  for (int k = 0; k < kLanes; ++k) m = part[k] > m ? part[k] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// The sum of x[0..n), in kLanes partial sums.
template <class C>
[[gnu::always_inline]] inline C row_sum(const C* x, int64_t n) {
  C part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) part[k] += x[i + k];
  }
  C s = 0;
  for (int k = 0; k < kLanes; ++k) s += part[k];
  for (; i < n; ++i) s += x[i];
  return s;
}

// The sum of x[i] y[i] over [0, n), in kLanes partial sums.
template <class C>
[[gnu::always_inline]] inline C row_dot(const C* x, const C* y, int64_t n) {
  C part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) part[k] += x[i + k] * y[i + k];
  }
  C s = 0;
  for (int k = 0; k < kLanes; ++k) s += part[k];
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

// y = softmax(x) or log_softmax(x) over one row of n values (y is not x: it holds exp(x - max)
// on the way).
template <class C>
[[gnu::always_inline]] inline void forward_row(const C* x, C* y, int64_t n, bool log) {
  const C m = row_max(x, n);
  for (int64_t i = 0; i < n; ++i) y[i] = exp_of(x[i] - m);
  const C s = row_sum(y, n);
  if (log) {
    const C shift = m + std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - shift;
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] / s;
}

// grad_x = y (g - sum(g y)), or g - exp(y) sum(g) for log_softmax, over one row; gx may be g.
template <class C>
[[gnu::always_inline]] inline void backward_row(const C* g, const C* y, C* gx, int64_t n,
                                                bool log) {
  if (log) {
    const C s = row_sum(g, n);
    for (int64_t i = 0; i < n; ++i) gx[i] = g[i] - exp_of(y[i]) * s;
    return;
  }
  const C dot = row_dot(g, y, n);
  for (int64_t i = 0; i < n; ++i) gx[i] = y[i] * (g[i] - dot);
}

template <class C>
void forward_rows(const C* x, C* y, int64_t n, bool log) {
  forward_row(x, y, n, log);
}
template <class C>
KILN_CPU_AVX512 void forward_rows_avx512(const C* x, C* y, int64_t n, bool log) {
  forward_row(x, y, n, log);
}
template <class C>
void backward_rows(const C* g, const C* y, C* gx, int64_t n, bool log) {
  backward_row(g, y, gx, n, log);
}
template <class C>
KILN_CPU_AVX512 void backward_rows_avx512(const C* g, const C* y, C* gx, int64_t n, bool log) {
  backward_row(g, y, gx, n, log);
}

// Calls f(row pointers...) for each of the rows of n elements of the operands (output first),
// converting 16-bit rows to float buffers and back.
template <class T, size_t N, class F>
void for_rows(const kiln_tensor& out, const std::array<const kiln_tensor*, N>& in, const F& f) {
  using C = compute_t<T>;
  const int64_t n = out.sizes[out.ndim - 1];
  int64_t rows = 1;
  for (int32_t d = 0; d + 1 < out.ndim; ++d) rows *= out.sizes[d];
  const int64_t grain = std::max<int64_t>(1, kGrainHeavy / std::max<int64_t>(n, 1));
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    if constexpr (is_16bit_float_v<T>) {
      Scratch<C, 2048> buf((N + 1) * n);
      C* o = buf.get();
      for (int64_t r = begin; r < end; ++r) {
        std::array<const C*, N> src{};
        for (size_t k = 0; k < N; ++k) {
          C* b = o + (k + 1) * n;
          load_chunk<T>(static_cast<const char*>(in[k]->data) + r * n * sizeof(T), sizeof(T), n, b);
          src[k] = b;
        }
        std::apply([&](auto... s) { f(o, s..., n); }, src);
        store_chunk<T>(static_cast<char*>(out.data) + r * n * sizeof(T), sizeof(T), n, o);
      }
    } else {
      for (int64_t r = begin; r < end; ++r) {
        std::array<const C*, N> src{};
        for (size_t k = 0; k < N; ++k) src[k] = static_cast<const C*>(in[k]->data) + r * n;
        std::apply([&](auto... s) { f(static_cast<C*>(out.data) + r * n, s..., n); }, src);
      }
    }
  });
}

void softmax_lastdim_kernel(const Call& call) {
  const bool log = call.attr_i64(0) != 0;
  visit<Dtypes::floating>(call.input(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const bool wide = has_avx512();
    for_rows<T, 1>(call.output(0), {&call.input(0)}, [&](C* y, const C* x, int64_t n) {
      wide ? forward_rows_avx512(x, y, n, log) : forward_rows(x, y, n, log);
    });
  });
}

void softmax_lastdim_backward_kernel(const Call& call) {
  const bool log = call.attr_i64(0) != 0;
  visit<Dtypes::floating>(call.input(1).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const bool wide = has_avx512();
    for_rows<T, 2>(call.output(0), {&call.input(0), &call.input(1)},
                   [&](C* gx, const C* g, const C* y, int64_t n) {
                     wide ? backward_rows_avx512(g, y, gx, n, log)
                          : backward_rows(g, y, gx, n, log);
                   });
  });
}

}  // namespace

void register_softmax(KernelTable& table) {
  table.add("softmax_lastdim", kernel<softmax_lastdim_kernel>);
  table.add("softmax_lastdim_backward", kernel<softmax_lastdim_backward_kernel>);
}

}  // namespace kiln::cpu
