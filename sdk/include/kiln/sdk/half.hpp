// float16 and bfloat16 storage types with float conversions, header-only.
// Arithmetic happens in float: kernels load a Half or BFloat16, compute in float, store back.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace kiln::sdk {

// IEEE 754 binary16. Conversions round to nearest even, keep inf and NaN.
struct Half {
  uint16_t bits = 0;

  Half() = default;
  Half(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a built-in float type
  operator float() const { return to_float(bits); }

  static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }

  static float to_float(uint16_t h) {
#if defined(__F16C__) || defined(__AVX512F__)
    return __builtin_ia32_vcvtph2ps(__extension__(__v8hi){static_cast<short>(h)})[0];
#else
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ffu;
    uint32_t out;
    if (exp == 0) {
      if (man == 0) {
        out = sign;
      } else {  // subnormal: normalise
        exp = 127 - 15 + 1;
        while ((man & 0x400u) == 0) {
          man <<= 1;
          --exp;
        }
        man &= 0x3ffu;
        out = sign | (exp << 23) | (man << 13);
      }
    } else if (exp == 0x1f) {
      out = sign | 0x7f800000u | (man << 13);
    } else {
      out = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    return std::bit_cast<float>(out);
#endif
  }

  static uint16_t from_float(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) {  // inf or NaN
      return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    }
    if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
    if (absx < 0x38800000u) {  // result is subnormal or zero
      // add 0.5 (as float) to shift the mantissa into place and let the FPU round
      float v = std::bit_cast<float>(absx) + 0.5f;
      return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(v) - 0x3f000000u));
    }
    uint32_t mant_odd = (absx >> 13) & 1u;
    absx += 0xc8000fffu + mant_odd;  // rebias exponent and round to nearest even
    return static_cast<uint16_t>(sign | (absx >> 13));
  }
};

// bfloat16: the upper half of a float32. Conversion from float rounds to nearest even.
struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a built-in float type
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }

  static uint16_t from_float(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
    uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
  }
};

}  // namespace kiln::sdk
