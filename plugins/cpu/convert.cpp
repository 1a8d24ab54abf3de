// The non-template parts of loops.hpp: the TBB driver, bulk float16 <-> float conversion (F16C
// when the CPU has it; the build targets baseline x86-64), bulk bfloat16 <-> float (AVX-512 or
// AVX2 when the CPU has them) and the same-dtype strided copy that
// copy_ and the device's copy share.
#include "loops.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cpuid.h>
#include <immintrin.h>

#include <bit>
#include <cstring>

namespace kiln::cpu {
namespace {

bool has_f16c() {
  static const bool yes = [] {
    __builtin_cpu_init();
    // clang 14's __builtin_cpu_supports knows no "f16c": CPUID leaf 1, ECX bit 29
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & bit_F16C) != 0;
  }();
  return yes;
}

__attribute__((target("avx,f16c"))) void half_to_float_f16c(const uint16_t* src, float* dst,
                                                            int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

__attribute__((target("avx,f16c"))) void float_to_half_f16c(const float* src, uint16_t* dst,
                                                            int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

// The bfloat16 conversions, inlined into one function per instruction set: plain loops that GCC
// vectorizes for the target of the function they land in.
[[gnu::always_inline]] inline void bf16_to_float_loop(const uint16_t* s, float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = std::bit_cast<float>(static_cast<uint32_t>(s[i]) << 16);
}

[[gnu::always_inline]] inline void float_to_bf16_loop(const float* s, uint16_t* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x = std::bit_cast<uint32_t>(s[i]);
    uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    uint32_t nan = (x >> 16) | 0x40u;
    d[i] = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

void bf16_to_float_baseline(const uint16_t* s, float* d, int64_t n) { bf16_to_float_loop(s, d, n); }
void float_to_bf16_baseline(const float* s, uint16_t* d, int64_t n) { float_to_bf16_loop(s, d, n); }

__attribute__((target("avx2"))) void bf16_to_float_avx2(const uint16_t* s, float* d, int64_t n) {
  bf16_to_float_loop(s, d, n);
}
__attribute__((target("avx2"))) void float_to_bf16_avx2(const float* s, uint16_t* d, int64_t n) {
  float_to_bf16_loop(s, d, n);
}

#define KILN_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
KILN_AVX512 void bf16_to_float_avx512(const uint16_t* s, float* d, int64_t n) {
  bf16_to_float_loop(s, d, n);
}
KILN_AVX512 void float_to_bf16_avx512(const float* s, uint16_t* d, int64_t n) {
  float_to_bf16_loop(s, d, n);
}
#undef KILN_AVX512

struct Bf16Conversions {
  void (*to_float)(const uint16_t*, float*, int64_t);
  void (*from_float)(const float*, uint16_t*, int64_t);
};

const Bf16Conversions& bf16_conversions() {
  static const Bf16Conversions c = []() -> Bf16Conversions {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl")) {
      return {bf16_to_float_avx512, float_to_bf16_avx512};
    }
    if (__builtin_cpu_supports("avx2")) return {bf16_to_float_avx2, float_to_bf16_avx2};
    return {bf16_to_float_baseline, float_to_bf16_baseline};
  }();
  return c;
}

}  // namespace

bool has_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }();
  return yes;
}

void bfloat16_to_float(const BFloat16* src, float* dst, int64_t n) {
  bf16_conversions().to_float(&src->bits, dst, n);  // a standard-layout struct's first member
}

void float_to_bfloat16(const float* src, BFloat16* dst, int64_t n) {
  bf16_conversions().from_float(src, &dst->bits, n);
}

void parallel_for_tbb(int64_t n, int64_t grain, RangeFn f) {
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [f](const tbb::blocked_range<int64_t>& r) { f(r.begin(), r.end()); });
}

void half_to_float(const Half* src, float* dst, int64_t n) {
  if (has_f16c()) {
    half_to_float_f16c(reinterpret_cast<const uint16_t*>(src), dst, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = Half::to_float(src[i].bits);
}

void float_to_half(const float* src, Half* dst, int64_t n) {
  if (has_f16c()) {
    float_to_half_f16c(src, reinterpret_cast<uint16_t*>(dst), n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i].bits = Half::from_float(src[i]);
}

namespace {

template <class B>
void copy_run(char** p, const int64_t* step, int64_t n) {
  constexpr int64_t item = sizeof(B);
  if (step[0] == item && step[1] == item) {
    std::memcpy(p[0], p[1], static_cast<size_t>(n * item));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<B*>(p[0] + i * step[0]) = *reinterpret_cast<const B*>(p[1] + i * step[1]);
  }
}

}  // namespace

void copy_same_dtype(const kiln_tensor& dst, const kiln_tensor& src) {
  const size_t item = sdk::dtype_size(dst.dtype);
  void (*body)(char**, const int64_t*, int64_t) = nullptr;
  switch (item) {
    case 1: body = copy_run<uint8_t>; break;
    case 2: body = copy_run<uint16_t>; break;
    case 4: body = copy_run<uint32_t>; break;
    case 8: body = copy_run<uint64_t>; break;
    default: throw_unsupported(dst.dtype);
  }
  const kiln_tensor* ops[2] = {&dst, &src};
  sdk::StridedLoop<2> loop(ops);
  int64_t total = loop.numel();
  // memcpy moves ~10 GB/s on one core: a second thread pays off from about a megabyte
  int64_t grain = std::max<int64_t>(kGrain, (int64_t{1} << 20) / static_cast<int64_t>(item));
  if (total <= grain) {
    run_all(loop, ops, body);
    return;
  }
  parallel_for(total, grain, [&](int64_t b, int64_t e) { loop.run(b, e, body); });
}

}  // namespace kiln::cpu
