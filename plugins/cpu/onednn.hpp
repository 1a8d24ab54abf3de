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
