// 16-bit operands widened to float32 for a kernel that only has (or is only fast in) float32,
// and the float32 result rounded back once: matmul.cpp and conv.cpp use it where oneDNN has no
// kernel for a dtype on this CPU, or only a slow emulation (onednn_emulates_bf16).
#pragma once

#include "loops.hpp"

#include <memory>

namespace kiln::cpu {

// A contiguous float32 tensor in memory from TBB's scalable allocator, whose cache of large
// blocks hands the same pages back call after call (fresh pages from the OS cost a fault each:
// 3 ms of a 16 ms float16 product of 1024 x 1024, measured).
class WideTensor {
 public:
  // Uninitialized, with t's sizes (an output). At most 8 dimensions.
  static WideTensor like(const kiln_tensor& t);
  // t's values as float32 (an input); t is any floating dtype, any strides.
  static WideTensor copy_of(const kiln_tensor& t);

  // tensor() points into the object itself: a move re-points it
  WideTensor(WideTensor&& other) noexcept;
  WideTensor& operator=(WideTensor&&) = delete;

  const kiln_tensor& tensor() const { return tensor_; }
  float* data() const { return data_.get(); }
  // Rounds the values into dst: same sizes, dst's dtype (floating) and strides.
  void round_into(const kiln_tensor& dst) const;

 private:
  struct Free {
    void operator()(float* p) const;
  };
  explicit WideTensor(const kiln_tensor& t);

  static constexpr int32_t kMaxDims = 8;
  std::unique_ptr<float[], Free> data_;
  int64_t sizes_[kMaxDims] = {};
  int64_t strides_[kMaxDims] = {};
  kiln_tensor tensor_{};
};

}  // namespace kiln::cpu
