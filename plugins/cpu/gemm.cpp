// Matrix products with plain loops: for float64 and the integers, for products too small to be
// worth a oneDNN call, and where oneDNN has no kernel. Tiles of kRows x kCols outputs accumulate
// in a stack buffer; each row of b is converted once per tile and reused for kRows rows. The tile
// update is the only hot loop, so it alone is compiled for AVX2 and AVX-512 as well as the
// baseline, chosen when the plugin loads (target_clones).
#include "arith.hpp"
#include "matmul.hpp"

namespace kiln::cpu {
namespace {

constexpr int64_t kRows = 8;
constexpr int64_t kCols = 256;

// float for 16-bit floats and float32, double for float64, wrapping uint64 for integers
template <class T>
using gemm_acc_t = std::conditional_t<is_floating_v<T>, compute_t<T>, uint64_t>;

#if defined(__clang__)  // clang 14 clones no function template: baseline x86-64 there
#define KILN_GEMM_CLONES
#else
#define KILN_GEMM_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif

// acc[i * kCols + j] += a[i] * b[j] for i < rows, j < w.
template <class Acc>
KILN_GEMM_CLONES void tile_update(Acc* __restrict acc, const Acc* __restrict a, int64_t rows,
                                  const Acc* __restrict b, int64_t w) {
  for (int64_t i = 0; i < rows; ++i) {
    Acc* row = acc + i * kCols;
    const Acc ai = a[i];
    for (int64_t j = 0; j < w; ++j) row[j] += ai * b[j];
  }
}

template <class T>
void gemm_typed(const MatmulShape& s, const char* a, const char* b, char* out) {
  using Acc = gemm_acc_t<T>;
  using C = compute_t<T>;
  constexpr int64_t item = sizeof(T);
  const int64_t row_tiles = (s.m + kRows - 1) / kRows;
  const int64_t col_tiles = (s.n + kCols - 1) / kCols;
  const int64_t tasks = s.batch * row_tiles * col_tiles;
  const int64_t tile_work = kRows * kCols * std::max<int64_t>(s.k, 1);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / tile_work);
  parallel_for(tasks, grain, [&](int64_t begin, int64_t end) {
    Buffer<Acc, kRows * kCols> acc;
    Buffer<C, kCols> row;
    Buffer<Acc, kCols> brow;
    Acc acol[kRows];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t bt = t / (row_tiles * col_tiles);
      const int64_t i0 = t / col_tiles % row_tiles * kRows, rows = std::min(kRows, s.m - i0);
      const int64_t j0 = t % col_tiles * kCols, w = std::min(kCols, s.n - j0);
      const char* at = a + (bt * s.sa[0] + i0 * s.sa[1]) * item;
      const char* bt_ = b + (bt * s.sb[0] + j0 * s.sb[2]) * item;
      for (int64_t j = 0; j < rows * kCols; ++j) acc.v[j] = Acc(0);
      for (int64_t p = 0; p < s.k; ++p) {
        load_chunk<T>(bt_ + p * s.sb[1] * item, s.sb[2] * item, w, row.v);
        for (int64_t j = 0; j < w; ++j) brow.v[j] = static_cast<Acc>(row.v[j]);
        for (int64_t i = 0; i < rows; ++i) {
          const char* ap = at + (i * s.sa[1] + p * s.sa[2]) * item;
          acol[i] = static_cast<Acc>(static_cast<C>(*reinterpret_cast<const T*>(ap)));
        }
        tile_update<Acc>(acc.v, acol, rows, brow.v, w);
      }
      char* ot = out + (bt * s.sc[0] + i0 * s.sc[1] + j0 * s.sc[2]) * item;
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < w; ++j) row.v[j] = static_cast<C>(acc.v[i * kCols + j]);
        store_chunk<T>(ot + i * s.sc[1] * item, s.sc[2] * item, w, row.v);
      }
    }
  });
}

}  // namespace

void gemm_loop(const MatmulShape& s, int32_t dtype, const void* a, const void* b, void* out) {
  visit<Dtypes::numeric>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemm_typed<T>(s, static_cast<const char*>(a), static_cast<const char*>(b),
                  static_cast<char*>(out));
  });
}

}  // namespace kiln::cpu
