// The arithmetic limit of this CPU, measured: every thread runs independent chains of the
// widest multiply-add the CPU has (AVX-512 FMA for float32, AVX512-BF16's vdpbf16ps for
// bfloat16 products into float32), so a benchmark can print how far a kernel is from the
// hardware, not only from another framework. The figures are GFLOP/s over all threads, a
// multiply-add counted as two operations; 0 where the CPU lacks the instructions.
//
// Memory: stream_add_gbs() runs STREAM's "add" (c = a + b on float32) over all threads with
// non-temporal stores, the most a three-array elementwise kernel can move per second.
//
// AMX tiles are not probed: on a CPU with AMX, the bfloat16 figure is the AVX512-BF16 limit,
// below what oneDNN reaches there, and bf16_amx_present() says so.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "bench_common.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace bench {
namespace peak_detail {

constexpr int kChains = 12;  // independent accumulators: latency 4-6 cycles, 2 pipes

#if defined(__x86_64__)
// Everything below is compiled for AVX-512 (and called only where the CPU has it).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bf16,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bf16,fma")
#endif

// One multiply-add into acc: float32 FMA, or AVX512-BF16's 32 bfloat16 products.
struct Fma {
  static __m512 step(__m512 acc) {
    return _mm512_fmadd_ps(_mm512_set1_ps(1.0f), _mm512_set1_ps(1e-9f), acc);
  }
};
struct Bf16Dot {
  static __m512 step(__m512 acc) {
    const __m512bh one = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3f80));
    return _mm512_dpbf16_ps(acc, one, one);
  }
};

// kChains independent chains of Op::step, iters rounds; returns the sum of every lane, which
// keeps the chains live (_mm512_reduce_add_ps trips -Wuninitialized in GCC 12's own header).
template <class Op>
float chains(long iters) {
  __m512 acc[kChains];
  for (auto& a : acc) a = _mm512_setzero_ps();
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kChains; ++k) acc[k] = Op::step(acc[k]);
  }
  __m512 s = acc[0];
  for (int k = 1; k < kChains; ++k) s = _mm512_add_ps(s, acc[k]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

inline void stream_add(const float* a, const float* b, float* c, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_stream_ps(c + i, _mm512_add_ps(_mm512_load_ps(a + i), _mm512_load_ps(b + i)));
  for (; i < n; ++i) c[i] = a[i] + b[i];
  _mm_sfence();
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

// GFLOP/s of `threads` threads each running chains(iters); flop = operations per iteration.
template <class Chains>
double run(Chains chains, int threads, double flop) {
  const long iters = 20'000'000;
  std::vector<float> sink(static_cast<size_t>(threads));
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[t] = chains(iters); });
  for (auto& t : pool) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return threads * static_cast<double>(iters) * flop / s / 1e9;
}

// The best of three runs: the limit is what the hardware can do, not a typical run.
template <class Chains>
double best_of_three(Chains chains, int threads, double flop) {
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    double g = run(chains, threads, flop);
    if (g > best) best = g;
  }
  return best;
}

}  // namespace peak_detail

// float32 multiply-add limit over `threads` threads (AVX-512 FMA); 0 without AVX-512.
inline double f32_fma_peak_gflops(int threads) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512f")) return 0;
  return peak_detail::best_of_three(peak_detail::chains<peak_detail::Fma>, threads,
                                    peak_detail::kChains * 16 * 2.0);
#else
  (void)threads;
  return 0;
#endif
}

// bfloat16 product limit (float32 accumulation) over `threads` threads, AVX512-BF16's
// vdpbf16ps: 32 products and 32 additions per instruction; 0 without AVX512-BF16.
inline double bf16_dot_peak_gflops(int threads) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512bf16")) return 0;
  return peak_detail::best_of_three(peak_detail::chains<peak_detail::Bf16Dot>, threads,
                                    peak_detail::kChains * 32 * 2.0);
#else
  (void)threads;
  return 0;
#endif
}

// GB/s of c = a + b over `floats` float32 elements (bytes read and written, as kiln-bench counts
// its add), each of `threads` threads on a 64-byte-aligned slice; 0 without AVX-512.
inline double stream_add_gbs(int threads, size_t floats) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512f")) return 0;
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  size_t slice = floats / static_cast<size_t>(threads) / 16 * 16;
  size_t bytes = slice * static_cast<size_t>(threads) * sizeof(float);
  std::unique_ptr<float, Free> a(static_cast<float*>(std::aligned_alloc(64, bytes)));
  std::unique_ptr<float, Free> b(static_cast<float*>(std::aligned_alloc(64, bytes)));
  std::unique_ptr<float, Free> c(static_cast<float*>(std::aligned_alloc(64, bytes)));
  std::fill_n(a.get(), bytes / sizeof(float), 1.0f);
  std::fill_n(b.get(), bytes / sizeof(float), 2.0f);
  std::fill_n(c.get(), bytes / sizeof(float), 0.0f);
  auto add = [&] {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
      size_t at = static_cast<size_t>(t) * slice;
      pool.emplace_back([&, at] {
        peak_detail::stream_add(a.get() + at, b.get() + at, c.get() + at, slice);
      });
    }
    peak_detail::stream_add(a.get(), b.get(), c.get(), slice);
    for (auto& th : pool) th.join();
  };
  return 3.0 * static_cast<double>(bytes) / median_seconds(add, 3, 9) / 1e9;
#else
  (void)threads;
  (void)floats;
  return 0;
#endif
}

// Whether the CPU has AMX with bfloat16 tiles (CPUID leaf 7: EDX bits 22 and 24).
inline bool bf16_amx_present() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (d & (1u << 22)) != 0 && (d & (1u << 24)) != 0;
#else
  return false;
#endif
}

}  // namespace bench
