// Philox4x32-10 counter-based random numbers (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011), header-only.
//
// Note [Random numbers are a function of (seed, offset, index)]
// Random operators receive attributes `seed` and `offset`. Element i of the output (counted in
// row-major order of the output's sizes) uses the four 32-bit words philox(seed, offset + i).
// Every device, thread count and chunking therefore gives the same numbers for one seed, and the
// core advances its generator's offset by the number of elements after each call.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

// In CUDA device code too (nvcc with --expt-relaxed-constexpr for std::array), so that a GPU
// plugin draws the very same numbers as the CPU.
#if defined(__CUDACC__)
#define KILN_SDK_HOST_DEVICE __host__ __device__
#else
#define KILN_SDK_HOST_DEVICE
#endif

namespace kiln::sdk {

KILN_SDK_HOST_DEVICE inline std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t counter) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kKey0 = 0x9E3779B9u, kKey1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kMul0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kMul1) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = static_cast<uint32_t>(p1);
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += kKey0;
    k1 += kKey1;
  }
  return {c0, c1, c2, c3};
}

// A float in [0, 1) from 24 random bits.
KILN_SDK_HOST_DEVICE inline float uniform_float(uint32_t word) {
  return static_cast<float>(word >> 8) * 0x1.0p-24f;
}

// A double in [0, 1) from 53 random bits.
KILN_SDK_HOST_DEVICE inline double uniform_double(uint32_t hi, uint32_t lo) {
  uint64_t x = (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
  return static_cast<double>(x) * 0x1.0p-53;
}

// A standard normal sample (Box-Muller, cosine branch) from two words.
KILN_SDK_HOST_DEVICE inline double normal_double(uint32_t w0, uint32_t w1, uint32_t w2,
                                                 uint32_t w3) {
  double u1 = 1.0 - uniform_double(w0, w1);  // (0, 1]: log stays finite
  double u2 = uniform_double(w2, w3);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace kiln::sdk
