// Branch-free float exp, expm1, tanh and erf for the elementwise loops: plain arithmetic, bit
// casts and selects that GCC vectorizes inside the loops of loops.hpp (16 lanes in their AVX-512
// copies), where libm's expf and erff are calls the vectorizer cannot look into. Each is checked
// against double precision over a sweep of float inputs (tests/tensor/test_vector_math.cpp);
// the error bounds below are measured there, in units in the last place (ULP) of the float
// result. PyTorch 1.13's CPU kernels use SLEEF's 1.0-ULP exp and tanh and, for erf, the 1.5e-7
// absolute bound of Abramowitz and Stegun's 7.1.26 over the whole line.
//
// The reductions and polynomials follow the Cephes library's single-precision expf and tanhf
// (S. L. Moshier, "Methods and Programs for Mathematical Functions"); the erf polynomials are
// erf's Taylor series and Abramowitz and Stegun's "Handbook of Mathematical Functions", 7.1.26.
// No fused multiply-adds: the same bits come out of every instruction set (see Note [AVX-512
// clones of the elementwise loops] in loops.hpp).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace kiln::cpu::vm {

// x rounded to the nearest integer, halves away from zero; |x| < 2^22. A cast that truncates,
// which vectorizes everywhere (rint needs SSE4.1).
[[gnu::always_inline]] inline float round_half_away(float x) {
  return static_cast<float>(static_cast<int32_t>(x + (x < 0.0f ? -0.5f : 0.5f)));
}

// |r| with the sign of x (for the odd functions whose result has x's sign: -0 gives -0).
[[gnu::always_inline]] inline float with_sign_of(float r, float x) {
  const uint32_t magnitude = std::bit_cast<uint32_t>(r) & 0x7fffffffu;
  return std::bit_cast<float>(magnitude | (std::bit_cast<uint32_t>(x) & 0x80000000u));
}

// 2^n for an integer n in [-126, 128] (128 gives inf), from the exponent bits.
[[gnu::always_inline]] inline float pow2i(int32_t n) {
  return std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
}

// exp(r) - 1 - r for |r| <= ln(2) / 2: Cephes expf's polynomial times r^2.
[[gnu::always_inline]] inline float expm1_tail(float r) {
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r;
}

// x = n ln(2) + r with |r| <= ln(2) / 2; ln(2) in two parts, the first with 9 significant bits,
// so n * kLn2Hi is exact for the |n| <= 151 used here.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;

// exp(x): at most 1 ULP from the true value (subnormal results: 1 ULP of the smallest normal).
// NaN gives NaN; above 88.73 inf, below -104 zero.
[[gnu::always_inline]] inline float exp(float x) {
  float c = x < -104.0f ? -104.0f : x;
  c = c > 89.0f ? 89.0f : c;  // a NaN x passes both selects
  const float n = round_half_away(c * kLog2e);
  const float r = (c - n * kLn2Hi) - n * kLn2Lo;
  const float y = 1.0f + (r + expm1_tail(r));
  // 2^n in two factors: n reaches -150 and 129, beyond one factor's exponent range
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t half = ni / 2;
  return y * pow2i(half) * pow2i(ni - half);
}

// exp(x) - 1: at most 1.6 ULP. As 2^n (1 + q) - 1 = 2^n q + (2^n - 1), exact for n = 0
// (|x| <= ln(2) / 2), where exp(x) - 1 would cancel; as exp's 2^n (1 + q) from n = 61 on, where
// the 1 no longer shows. NaN gives NaN; above 88.73 inf, below -20 -1.
[[gnu::always_inline]] inline float expm1(float x) {
  float c = x < -20.0f ? -20.0f : x;
  c = c > 89.0f ? 89.0f : c;
  const float n = round_half_away(c * kLog2e);
  const float r = (c - n * kLn2Hi) - n * kLn2Lo;
  const float q = r + expm1_tail(r);
  const int32_t ni = static_cast<int32_t>(n);
  const float s = pow2i(ni < 60 ? ni : 60);
  const int32_t half = ni / 2;
  const float big = (1.0f + q) * pow2i(half) * pow2i(ni - half);
  return with_sign_of(ni > 60 ? big : s * q + (s - 1.0f), x);
}

// tanh(x): at most 1.3 ULP. Cephes tanhf: an odd polynomial for |x| < 0.625, else
// 1 - 2 / (exp(2|x|) + 1) with x's sign. NaN gives NaN.
[[gnu::always_inline]] inline float tanh(float x) {
  const float a = x < 0.0f ? -x : x;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = x + x * z * p;
  const float e = exp(a > 10.0f ? 20.0f : a + a);  // tanh(10) rounds to 1 in float
  const float large = 1.0f - 2.0f / (e + 1.0f);
  return with_sign_of(a < 0.625f ? small : large, x);
}

// erf(x): at most 2.8 ULP below |x| = 1 (the Taylor series to x^21, truncation under 2e-9), and
// an absolute error under 2e-7 (3.3 ULP) beyond, Abramowitz and Stegun's 7.1.26
// 1 - t (a1 + t (a2 + ...)) exp(-x^2), t = 1 / (1 + p |x|), as PyTorch's vectorized erf. NaN
// gives NaN.
[[gnu::always_inline]] inline float erf(float x) {
  const float a = x < 0.0f ? -x : x;
  const float z = x * x;
  // 2 / sqrt(pi) times the sum of (-1)^k z^k / (k! (2k + 1)), k = 0 .. 10
  float s = 1.48071928e-8f;
  s = s * z - 1.63658447e-7f;
  s = s * z + 1.64621144e-6f;
  s = s * z - 1.49256504e-5f;
  s = s * z + 1.20553330e-4f;
  s = s * z - 8.54832702e-4f;
  s = s * z + 5.22397763e-3f;
  s = s * z - 2.68661706e-2f;
  s = s * z + 1.12837917e-1f;
  s = s * z - 3.76126389e-1f;
  s = s * z + 1.12837917f;
  const float small = x * s;
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float q = 1.061405429f;
  q = q * t - 1.453152027f;
  q = q * t + 1.421413741f;
  q = q * t - 0.284496736f;
  q = q * t + 0.254829592f;
  const float b = a > 10.0f ? 10.0f : a;  // erf(10) is 1 in float; keeps exp's input finite
  float large = 1.0f - q * t * exp(-(b * b));
  large = x < 0.0f ? -large : large;
  return a < 1.0f ? small : large;
}

// atan2(y, x): at most 3.2 ULP (SLEEF's, which PyTorch uses, 1 ULP). |y| / |x| or its inverse,
// whichever is at most 1, reduced by tan(pi / 8) to |a| <= tan(pi / 8) and Cephes atanf's odd
// polynomial; then the octant and the quadrant (x's sign bit, so that -0 gives pi) and y's sign.
// Zeros and infinities as C's atan2; NaN gives NaN.
[[gnu::always_inline]] inline float atan2(float y, float x) {
  constexpr float kPi = 3.14159265358979f, kHalfPi = 1.57079632679490f;
  constexpr float kQuarterPi = 0.785398163397448f;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float ax = x < 0.0f ? -x : x, ay = y < 0.0f ? -y : y;
  const bool swap = ay > ax;
  const float num = swap ? ax : ay, den = swap ? ay : ax;
  float t = num / den;
  t = (num == 0.0f && den == 0.0f) ? 0.0f : t;  // both zero
  t = (ax == kInf && ay == kInf) ? 1.0f : t;    // both infinite
  const bool upper = t > 0.414213562373095f;    // tan(pi / 8)
  const float a = upper ? (t - 1.0f) / (t + 1.0f) : t;
  const float z = a * a;
  float p = 8.05374449538e-2f;
  p = p * z - 1.38776856032e-1f;
  p = p * z + 1.99777106478e-1f;
  p = p * z - 3.33329491539e-1f;
  float r = (upper ? kQuarterPi : 0.0f) + (a + a * z * p);
  r = swap ? kHalfPi - r : r;
  r = std::bit_cast<int32_t>(x) < 0 ? kPi - r : r;
  const uint32_t sign = std::bit_cast<uint32_t>(y) & 0x80000000u;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(r) | sign);
}

}  // namespace kiln::cpu::vm
