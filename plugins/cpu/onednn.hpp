// What the CPU plugin's oneDNN users (matmul.cpp, conv.cpp) share: one engine, and a per-thread
// scratch buffer for scratchpads and reordered operands.
#pragma once

#include <dnnl.hpp>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace kiln::cpu {

// The plugin's one oneDNN CPU engine.
inline dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// Whether oneDNN would emulate bfloat16 products: an AVX-512 CPU without AVX512-BF16 or AMX
// (after ONEDNN_MAX_CPU_ISA). Its avx512_core brgemm then reached 71 GFLOP/s on 1024 x 1024
// where float32 reached 186 (this machine's CPU capped with ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI),
// so matmul.cpp and conv.cpp widen to float32 instead (widen.hpp). On AVX2 its bfloat16 gemm
// converts as fast as we would.
inline bool onednn_emulates_bf16() {
  static const bool emulates = [] {
    auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto has = [isa](unsigned bits) { return (isa & bits) == bits; };
    return has(dnnl_cpu_isa_avx512_core) && !has(dnnl_cpu_isa_avx512_core_bf16);
  }();
  return emulates;
}

// Whether oneDNN runs bfloat16 products on AMX tiles (after ONEDNN_MAX_CPU_ISA).
inline bool onednn_has_amx() {
  static const bool amx = [] {
    auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    return (isa & dnnl_cpu_isa_avx512_core_amx) == dnnl_cpu_isa_avx512_core_amx;
  }();
  return amx;
}

// A 64-byte aligned buffer that grows and is reused by one thread.
class AlignedScratch {
 public:
  AlignedScratch() = default;
  AlignedScratch(const AlignedScratch&) = delete;
  AlignedScratch& operator=(const AlignedScratch&) = delete;
  ~AlignedScratch() { std::free(data_); }
  void* get(size_t bytes) {
    if (bytes > size_) {
      std::free(data_);
      size_ = (bytes + 63) / 64 * 64;
      data_ = std::aligned_alloc(64, size_);
      if (data_ == nullptr) {
        size_ = 0;
        throw std::bad_alloc();
      }
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kiln::cpu
