// flash_attention and flash_attention_backward, the optional attention primitives
// (docs/primitives.md), after "FlashAttention: Fast and Memory-Efficient Exact Attention with
// IO-Awareness" and "FlashAttention-2".
//
// q [B, L, E], k [B, S, E], v [B, S, Ev] are contiguous, float32 or bfloat16; every product
// accumulates in float32. The forward walks a tile of kRows queries against tiles of kCols keys
// with an online softmax (running maximum m, running sum l, the output rescaled by
// exp(m_old - m_new)), so no more than kRows x kCols logits exist at once; it also writes each
// query's logsumexp m + log(l). The backward recomputes the probabilities p = exp(s - lse) tile
// by tile: one pass over key tiles accumulates dK and dV, another over query tiles dQ, so no
// two threads write the same gradient. Tasks (batch x tile) run on TBB. The tile products are
// loops in "axpy" form (a row of the result += a scalar times a contiguous row), the only hot
// code, compiled for AVX-512 and AVX2 as well as the baseline, chosen when the plugin loads.
//
// The optional mask is float32 with sizes [b..., L, S] (any strides, 0 where broadcast), the
// batch sizes multiplying to B; `causal` masks key j > query i. A query that sees no key gets
// NaN (as the composite's softmax of -inf logits) and a NaN logsumexp.
#include "loops.hpp"
#include "registry.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::cpu {
namespace {

using sdk::kernel;

constexpr int64_t kRows = 32;  // queries per tile
constexpr int64_t kCols = 64;  // keys per tile
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

#if defined(__clang__)
#define KILN_ATTN_CLONES
#else
#define KILN_ATTN_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif

// out[i * n + j] = sum_e a[i * k + e] * bt[e * n + j]: a [m, k] times bt [k, n].
KILN_ATTN_CLONES void tile_product_generic(float* __restrict out, const float* __restrict a,
                                           int64_t m, int64_t k, const float* __restrict bt,
                                           int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = out + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t e = 0; e < k; ++e) {
      const float x = a[i * k + e];
      const float* b = bt + e * n;
      for (int64_t j = 0; j < n; ++j) row[j] += x * b[j];
    }
  }
}

// acc[i * w + c] += sum_j p[i * n + j] * rows[j * w + c]: p [m, n] times rows [n, w].
KILN_ATTN_CLONES void tile_accumulate_generic(float* __restrict acc, const float* __restrict p,
                                              int64_t m, int64_t n, const float* __restrict rows,
                                              int64_t w) {
  for (int64_t i = 0; i < m; ++i) {
    float* out = acc + i * w;
    for (int64_t j = 0; j < n; ++j) {
      const float x = p[i * n + j];
      if (x == 0.0f) continue;
      const float* r = rows + j * w;
      for (int64_t c = 0; c < w; ++c) out[c] += x * r[c];
    }
  }
}

// acc[j * w + c] += sum_i p[i * n + j] * rows[i * w + c]: p^T [n, m] times rows [m, w].
KILN_ATTN_CLONES void tile_accumulate_t_generic(float* __restrict acc, const float* __restrict p,
                                                int64_t m, int64_t n, const float* __restrict rows,
                                                int64_t w) {
  for (int64_t i = 0; i < m; ++i) {
    const float* r = rows + i * w;
    for (int64_t j = 0; j < n; ++j) {
      const float x = p[i * n + j];
      if (x == 0.0f) continue;
      float* out = acc + j * w;
      for (int64_t c = 0; c < w; ++c) out[c] += x * r[c];
    }
  }
}

#if defined(__x86_64__)
// C[m, n] = (accumulate ? C : 0) + A B with A(r, kk) = a[r * ars + kk * aks], B [k, n] (row
// stride ldb) and C (row stride ldc): blocks of R rows x 64 columns held in AVX-512 registers
// (4 R accumulators), masked at the edges.
template <int R>
__attribute__((target("avx512f,fma"))) void gemm_rows_avx512(float* c, int64_t ldc, const float* a,
                                                             int64_t ars, int64_t aks,
                                                             const float* b, int64_t ldb, int64_t n,
                                                             int64_t k, bool accumulate) {
  for (int64_t j0 = 0; j0 < n; j0 += 64) {
    __mmask16 mask[4];
    for (int v = 0; v < 4; ++v) {
      const int64_t left = std::clamp<int64_t>(n - j0 - 16 * v, 0, 16);
      mask[v] = static_cast<__mmask16>((1u << left) - 1u);
    }
    __m512 acc[R][4];
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < 4; ++v) {
        acc[r][v] = accumulate ? _mm512_maskz_loadu_ps(mask[v], c + r * ldc + j0 + 16 * v)
                               : _mm512_setzero_ps();
      }
    }
    for (int64_t kk = 0; kk < k; ++kk) {
      const float* bp = b + kk * ldb + j0;
      __m512 bv[4];
      for (int v = 0; v < 4; ++v) bv[v] = _mm512_maskz_loadu_ps(mask[v], bp + 16 * v);
      for (int r = 0; r < R; ++r) {
        const __m512 av = _mm512_set1_ps(a[r * ars + kk * aks]);
        for (int v = 0; v < 4; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < 4; ++v) {
        _mm512_mask_storeu_ps(c + r * ldc + j0 + 16 * v, mask[v], acc[r][v]);
      }
    }
  }
}

bool has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return has;
}

// gemm_rows_avx512 over every row of C [m, n]; false (nothing done) without AVX-512.
bool gemm_tile_avx512(float* c, int64_t ldc, const float* a, int64_t ars, int64_t aks,
                      const float* b, int64_t ldb, int64_t m, int64_t n, int64_t k,
                      bool accumulate) {
  if (!has_avx512()) return false;
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    gemm_rows_avx512<4>(c + i * ldc, ldc, a + i * ars, ars, aks, b, ldb, n, k, accumulate);
  }
  for (; i < m; ++i) {
    gemm_rows_avx512<1>(c + i * ldc, ldc, a + i * ars, ars, aks, b, ldb, n, k, accumulate);
  }
  return true;
}
#else
bool gemm_tile_avx512(float*, int64_t, const float*, int64_t, int64_t, const float*, int64_t,
                      int64_t, int64_t, int64_t, bool) {
  return false;
}
#endif

// out [m, n] = a [m, k] times bt [k, n].
void tile_product(float* out, const float* a, int64_t m, int64_t k, const float* bt, int64_t n) {
  if (!gemm_tile_avx512(out, n, a, k, 1, bt, n, m, n, k, false)) {
    tile_product_generic(out, a, m, k, bt, n);
  }
}

// acc [m, w] += p [m, n] times rows [n, w].
void tile_accumulate(float* acc, const float* p, int64_t m, int64_t n, const float* rows,
                     int64_t w) {
  if (!gemm_tile_avx512(acc, w, p, n, 1, rows, w, m, w, n, true)) {
    tile_accumulate_generic(acc, p, m, n, rows, w);
  }
}

// acc [n, w] += p^T (p [m, n]) times rows [m, w].
void tile_accumulate_t(float* acc, const float* p, int64_t m, int64_t n, const float* rows,
                       int64_t w) {
  if (!gemm_tile_avx512(acc, w, p, 1, n, rows, w, n, w, m, true)) {
    tile_accumulate_t_generic(acc, p, m, n, rows, w);
  }
}

// The sum and the maximum of x[0, n), in kLanes independent partial results (lanes the
// vectorizer keeps; one chain would serialize on the adder's latency).
constexpr int64_t kLanes = 16;

KILN_ATTN_CLONES float row_sum(const float* __restrict x, int64_t n) {
  float part[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t c = 0; c < kLanes; ++c) part[c] += x[j + c];
  }
  float sum = 0.0f;
  for (; j < n; ++j) sum += x[j];
  for (int64_t c = 0; c < kLanes; ++c) sum += part[c];
  return sum;
}

KILN_ATTN_CLONES float row_max(const float* __restrict x, int64_t n, float start) {
  float part[kLanes];
  for (int64_t c = 0; c < kLanes; ++c) part[c] = start;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t c = 0; c < kLanes; ++c) part[c] = x[j + c] > part[c] ? x[j + c] : part[c];
  }
  float top = start;
  for (; j < n; ++j) top = x[j] > top ? x[j] : top;
  for (int64_t c = 0; c < kLanes; ++c) top = part[c] > top ? part[c] : top;
  return top;
}

// x[j] = exp(x[j] - shift) for j < n, returning their sum; exp(-inf) is 0. A polynomial
// (Cephes' expf: 2^i times a degree-6 fit of e^f on |f| <= ln(2) / 2, relative error about
// 2e-7) written without calls, so that the loop vectorizes: the softmax's exponentials would
// otherwise cost more than the tile products.
KILN_ATTN_CLONES float exp_shifted(float* __restrict x, int64_t n, float shift) {
  for (int64_t j = 0; j < n; ++j) {
    const float v = x[j] - shift;
    const float c = std::min(std::max(v, -87.0f), 88.0f);
    const float t = c * 1.44269504088896341f;
    const float r = (t + 12582912.0f) - 12582912.0f;  // round to nearest
    const float f = c - r * 0.693359375f + r * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * f + 1.3981999507e-3f;
    p = p * f + 8.3334519073e-3f;
    p = p * f + 4.1665795894e-2f;
    p = p * f + 1.6666665459e-1f;
    p = p * f + 5.0000001201e-1f;
    p = p * f * f + f + 1.0f;
    const int32_t bits = (static_cast<int32_t>(r) + 127) << 23;
    const float e = p * std::bit_cast<float>(bits);
    x[j] = v < -87.0f ? 0.0f : e;
  }
  return row_sum(x, n);
}

// Rows [r0, r0 + m) of a contiguous [rows, w] matrix of T as float: dst [m, w].
template <class T>
void load_rows(const T* src, int64_t r0, int64_t m, int64_t w, float* dst) {
  load_chunk<T>(reinterpret_cast<const char*>(src + r0 * w), sizeof(T), m * w, dst);
}

// The same rows transposed: dst [w, m].
template <class T>
void load_rows_t(const T* src, int64_t r0, int64_t m, int64_t w, float* dst) {
  for (int64_t r = 0; r < m; ++r) {
    const T* row = src + (r0 + r) * w;
    for (int64_t c = 0; c < w; ++c) dst[c * m + r] = static_cast<float>(row[c]);
  }
}

template <class T>
void store_rows(const float* src, T* dst, int64_t r0, int64_t m, int64_t w) {
  T* out = dst + r0 * w;
  for (int64_t i = 0; i < m * w; ++i) out[i] = T(src[i]);
}

// The shapes, the mask and the attributes of one call.
struct Problem {
  int64_t batch, queries, keys, dim, vdim;
  float scale;
  bool causal;
  const kiln_tensor* mask;  // null when absent

  Problem(const sdk::Call& call, const kiln_tensor& q, const kiln_tensor& k, const kiln_tensor& v,
          const kiln_tensor* m)
      : batch(q.sizes[0]),
        queries(q.sizes[1]),
        keys(k.sizes[1]),
        dim(q.sizes[2]),
        vdim(v.sizes[2]),
        scale(static_cast<float>(call.attr_f64(0))),
        causal(call.attr_i64(1) != 0),
        mask(m) {}

  int64_t query_tiles() const { return (queries + kRows - 1) / kRows; }
  int64_t key_tiles() const { return (keys + kCols - 1) / kCols; }
  // The number of keys query i0 + rows - 1 sees: keys past it are masked when causal.
  int64_t key_end(int64_t last_query) const {
    return causal ? std::min(keys, last_query + 1) : keys;
  }

  // The first element of batch b's [L, S] mask.
  const float* mask_base(int64_t b) const {
    const float* p = static_cast<const float*>(mask->data);
    for (int32_t d = mask->ndim - 3; d >= 0; --d) {
      p += (b % mask->sizes[d]) * mask->strides[d];
      b /= mask->sizes[d];
    }
    return p;
  }

  // s [m, n] of queries i0.. and keys j0..: scaled logits plus the mask, -inf where causal.
  void finish_logits(float* s, const float* mask_b, int64_t i0, int64_t m, int64_t j0,
                     int64_t n) const {
    for (int64_t i = 0; i < m; ++i) {
      float* row = s + i * n;
      for (int64_t j = 0; j < n; ++j) row[j] *= scale;
      if (mask_b != nullptr) {
        const int64_t rs = mask->strides[mask->ndim - 2], cs = mask->strides[mask->ndim - 1];
        const float* mrow = mask_b + (i0 + i) * rs + j0 * cs;
        for (int64_t j = 0; j < n; ++j) row[j] += mrow[j * cs];
      }
      if (causal) {
        for (int64_t j = std::max<int64_t>(0, i0 + i + 1 - j0); j < n; ++j) row[j] = kNegInf;
      }
    }
  }
};

template <class T>
void forward_typed(const Problem& pb, const T* q, const T* k, const T* v, T* out, float* lse) {
  const int64_t qt = pb.query_tiles();
  parallel_for(pb.batch * qt, 1, [&](int64_t begin, int64_t end) {
    const int64_t e = pb.dim, ev = pb.vdim;
    std::vector<float> qf(kRows * e), kt(e * kCols), vf(kCols * ev), s(kRows * kCols);
    std::vector<float> acc(kRows * ev), m(kRows), l(kRows);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / qt, i0 = task % qt * kRows;
      const int64_t rows = std::min(kRows, pb.queries - i0);
      const T *qb = q + b * pb.queries * e, *kb = k + b * pb.keys * e, *vb = v + b * pb.keys * ev;
      const float* mask_b = pb.mask ? pb.mask_base(b) : nullptr;
      load_rows(qb, i0, rows, e, qf.data());
      std::fill(acc.begin(), acc.end(), 0.0f);
      std::fill(m.begin(), m.end(), kNegInf);
      std::fill(l.begin(), l.end(), 0.0f);
      const int64_t key_end = pb.key_end(i0 + rows - 1);
      for (int64_t j0 = 0; j0 < key_end; j0 += kCols) {
        const int64_t cols = std::min(kCols, key_end - j0);
        load_rows_t(kb, j0, cols, e, kt.data());
        load_rows(vb, j0, cols, ev, vf.data());
        tile_product(s.data(), qf.data(), rows, e, kt.data(), cols);
        pb.finish_logits(s.data(), mask_b, i0, rows, j0, cols);
        for (int64_t i = 0; i < rows; ++i) {
          float* row = s.data() + i * cols;
          const float top = row_max(row, cols, m[i]);
          if (top == kNegInf) {  // nothing seen yet: this tile adds nothing
            for (int64_t j = 0; j < cols; ++j) row[j] = 0.0f;
            continue;
          }
          const float alpha = std::exp(m[i] - top);  // 0 on the first keys seen
          l[i] = l[i] * alpha + exp_shifted(row, cols, top);
          m[i] = top;
          if (alpha != 1.0f) {
            float* o = acc.data() + i * ev;
            for (int64_t c = 0; c < ev; ++c) o[c] *= alpha;
          }
        }
        tile_accumulate(acc.data(), s.data(), rows, cols, vf.data(), ev);
      }
      for (int64_t i = 0; i < rows; ++i) {
        const float inv = l[i] > 0.0f ? 1.0f / l[i] : std::numeric_limits<float>::quiet_NaN();
        float* o = acc.data() + i * ev;
        for (int64_t c = 0; c < ev; ++c) o[c] *= inv;
        lse[b * pb.queries + i0 + i] = l[i] > 0.0f ? m[i] + std::log(l[i])
                                                   : std::numeric_limits<float>::quiet_NaN();
      }
      store_rows(acc.data(), out + b * pb.queries * ev, i0, rows, ev);
    }
  });
}

void flash_attention_kernel(const sdk::Call& call) {
  const kiln_tensor &q = call.input(0), &k = call.input(1), &v = call.input(2);
  const Problem pb(call, q, k, v, call.num_inputs() > 3 ? &call.input(3) : nullptr);
  float* lse = static_cast<float*>(call.output(1).data);
  if (q.dtype == KILN_F32) {
    forward_typed(pb, static_cast<const float*>(q.data), static_cast<const float*>(k.data),
                  static_cast<const float*>(v.data), static_cast<float*>(call.output(0).data), lse);
  } else if (q.dtype == KILN_BF16) {
    forward_typed(pb, static_cast<const BFloat16*>(q.data), static_cast<const BFloat16*>(k.data),
                  static_cast<const BFloat16*>(v.data), static_cast<BFloat16*>(call.output(0).data),
                  lse);
  } else {
    throw_unsupported(q.dtype);
  }
}

// The tensors of one backward call, and the per-query delta = rowsum(dO * O).
template <class T>
struct Backward {
  const Problem& pb;
  const T *g, *q, *k, *v;
  const float *lse, *delta;

  // For queries i0.. (rows) and keys j0.. (cols) of batch b, with qf [rows, E], gf [rows, Ev],
  // kt [E, cols] and vt [Ev, cols] loaded: p [rows, cols] and ds [rows, cols] (scaled).
  void probabilities(int64_t b, int64_t i0, int64_t rows, int64_t j0, int64_t cols, const float* qf,
                     const float* gf, const float* kt, const float* vt, float* p, float* ds) const {
    tile_product(p, qf, rows, pb.dim, kt, cols);
    pb.finish_logits(p, pb.mask ? pb.mask_base(b) : nullptr, i0, rows, j0, cols);
    tile_product(ds, gf, rows, pb.vdim, vt, cols);
    for (int64_t i = 0; i < rows; ++i) {
      const float top = lse[b * pb.queries + i0 + i], d = delta[b * pb.queries + i0 + i];
      float *pr = p + i * cols, *dr = ds + i * cols;
      exp_shifted(pr, cols, top);
      for (int64_t j = 0; j < cols; ++j) dr[j] = pr[j] * (dr[j] - d) * pb.scale;
    }
  }
};

template <class T>
void backward_typed(const Problem& pb, const T* g, const T* q, const T* k, const T* v, const T* o,
                    const float* lse, T* gq, T* gk, T* gv) {
  const int64_t e = pb.dim, ev = pb.vdim, qt = pb.query_tiles(), kt_count = pb.key_tiles();
  std::vector<float> delta(pb.batch * pb.queries);
  parallel_for(pb.batch * pb.queries, 64, [&](int64_t begin, int64_t end) {
    std::vector<float> gf(ev), of(ev);
    for (int64_t r = begin; r < end; ++r) {
      load_rows(g, r, 1, ev, gf.data());
      load_rows(o, r, 1, ev, of.data());
      float sum = 0.0f;
      for (int64_t c = 0; c < ev; ++c) sum += gf[c] * of[c];
      delta[r] = sum;
    }
  });
  const Backward<T> bw{pb, g, q, k, v, lse, delta.data()};
  // dK and dV: one task per key tile
  parallel_for(pb.batch * kt_count, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qf(kRows * e), gf(kRows * ev), kt(e * kCols), vt(ev * kCols);
    std::vector<float> p(kRows * kCols), ds(kRows * kCols), dk(kCols * e), dv(kCols * ev);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / kt_count, j0 = task % kt_count * kCols;
      const int64_t cols = std::min(kCols, pb.keys - j0);
      load_rows_t(k + b * pb.keys * e, j0, cols, e, kt.data());
      load_rows_t(v + b * pb.keys * ev, j0, cols, ev, vt.data());
      std::fill(dk.begin(), dk.end(), 0.0f);
      std::fill(dv.begin(), dv.end(), 0.0f);
      const int64_t first = pb.causal ? j0 / kRows * kRows : 0;
      for (int64_t i0 = first; i0 < pb.queries; i0 += kRows) {
        const int64_t rows = std::min(kRows, pb.queries - i0);
        load_rows(q + b * pb.queries * e, i0, rows, e, qf.data());
        load_rows(g + b * pb.queries * ev, i0, rows, ev, gf.data());
        bw.probabilities(b, i0, rows, j0, cols, qf.data(), gf.data(), kt.data(), vt.data(),
                         p.data(), ds.data());
        tile_accumulate_t(dv.data(), p.data(), rows, cols, gf.data(), ev);
        tile_accumulate_t(dk.data(), ds.data(), rows, cols, qf.data(), e);
      }
      store_rows(dk.data(), gk + b * pb.keys * e, j0, cols, e);
      store_rows(dv.data(), gv + b * pb.keys * ev, j0, cols, ev);
    }
  });
  // dQ: one task per query tile
  parallel_for(pb.batch * qt, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qf(kRows * e), gf(kRows * ev), kt(e * kCols), vt(ev * kCols);
    std::vector<float> kf(kCols * e), p(kRows * kCols), ds(kRows * kCols), dq(kRows * e);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / qt, i0 = task % qt * kRows;
      const int64_t rows = std::min(kRows, pb.queries - i0);
      load_rows(q + b * pb.queries * e, i0, rows, e, qf.data());
      load_rows(g + b * pb.queries * ev, i0, rows, ev, gf.data());
      std::fill(dq.begin(), dq.end(), 0.0f);
      const int64_t key_end = pb.key_end(i0 + rows - 1);
      for (int64_t j0 = 0; j0 < key_end; j0 += kCols) {
        const int64_t cols = std::min(kCols, key_end - j0);
        load_rows_t(k + b * pb.keys * e, j0, cols, e, kt.data());
        load_rows_t(v + b * pb.keys * ev, j0, cols, ev, vt.data());
        load_rows(k + b * pb.keys * e, j0, cols, e, kf.data());
        bw.probabilities(b, i0, rows, j0, cols, qf.data(), gf.data(), kt.data(), vt.data(),
                         p.data(), ds.data());
        tile_accumulate(dq.data(), ds.data(), rows, cols, kf.data(), e);
      }
      store_rows(dq.data(), gq + b * pb.queries * e, i0, rows, e);
    }
  });
}

void flash_attention_backward_kernel(const sdk::Call& call) {
  const kiln_tensor &g = call.input(0), &q = call.input(1), &k = call.input(2), &v = call.input(3),
                    &o = call.input(4);
  const Problem pb(call, q, k, v, call.num_inputs() > 6 ? &call.input(6) : nullptr);
  const float* lse = static_cast<const float*>(call.input(5).data);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    backward_typed(pb, static_cast<const T*>(g.data), static_cast<const T*>(q.data),
                   static_cast<const T*>(k.data), static_cast<const T*>(v.data),
                   static_cast<const T*>(o.data), lse, static_cast<T*>(call.output(0).data),
                   static_cast<T*>(call.output(1).data), static_cast<T*>(call.output(2).data));
  };
  if (q.dtype == KILN_F32) {
    run(float{});
  } else if (q.dtype == KILN_BF16) {
    run(BFloat16{});
  } else {
    throw_unsupported(q.dtype);
  }
}

}  // namespace

void register_attention(KernelTable& table) {
  table.add("flash_attention", kernel<flash_attention_kernel>);
  table.add("flash_attention_backward", kernel<flash_attention_backward_kernel>);
}

}  // namespace kiln::cpu
