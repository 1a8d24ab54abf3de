// The "ref" device: a reference device whose memory is host memory and whose kernels are plain
// loops, one per primitive of docs/primitives.md it implements; every other operator runs on the
// CPU device (cpu_fallback). It is the example of docs/writing-a-device-plugin.md: small enough
// to read in one sitting, complete enough to train a model.
#pragma once

#include <kiln/sdk/kernel.hpp>
#include <kiln/sdk/kernel_table.hpp>

#include <cstdint>

namespace ref {

using kiln::sdk::Call;

// Calls f(char** p) once per element of the operands (same sizes, output first), p[k] pointing
// at operand k's element, in row-major order.
template <int N, class F>
void for_each_element(const kiln_tensor* const (&operands)[N], F&& f) {
  kiln::sdk::StridedLoop<N> loop(operands);
  loop.run(0, loop.numel(), [&](char** p, const int64_t* step, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      char* q[N];
      for (int k = 0; k < N; ++k) q[k] = p[k] + i * step[k];
      f(q);
    }
  });
}

// Reads element `p` of dtype T as its compute type (float for the 16-bit floats).
template <class T>
kiln::sdk::compute_t<T> load(const char* p) {
  return static_cast<kiln::sdk::compute_t<T>>(*reinterpret_cast<const T*>(p));
}

template <class T, class V>
void store(char* p, V v) {
  if constexpr (std::is_same_v<T, bool>) {
    *reinterpret_cast<T*>(p) = v != V(0);
  } else {
    *reinterpret_cast<T*>(p) = static_cast<T>(v);
  }
}

// Each kernel family adds its kernels to the plugin's one KernelTable (ref_device.cpp), as the
// CPU and CUDA plugins do; the table keeps the first refusal's status.
void register_elementwise(kiln::sdk::KernelTable& table);
void register_reduce(kiln::sdk::KernelTable& table);

}  // namespace ref
