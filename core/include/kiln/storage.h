// Storage: one allocation on one device, shared by a tensor and its views. Memory comes from the
// device plugin's allocator and goes back to it when the last owner is gone. A storage also
// carries the version counter that autograd uses to detect in-place changes of saved tensors.
#pragma once

#include <kiln/device.h>
#include <kiln/export.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace kiln {

class KILN_API Storage {
 public:
  // nbytes on `device`, from its plugin's allocator.
  Storage(Device device, size_t nbytes);
  // Wraps memory the caller owns; `deleter` (may be empty) runs when the storage dies.
  Storage(Device device, void* data, size_t nbytes, std::function<void(void*)> deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Whether grow() may replace the memory: false for memory the caller owns (from_blob).
  bool resizable() const { return from_allocator_; }
  // Exchanges the memory of two storages of one device (Tensor::resize_ grows a storage this
  // way, for every tensor sharing it); the version counters stay. Not thread-safe against
  // concurrent use of either storage.
  void swap_memory(Storage& other);

  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  // For core's factories: a tensor they just made and filled starts at version 0, as in PyTorch
  // (the fill is not an in-place change a user made).
  void reset_version() { version_.store(0, std::memory_order_relaxed); }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  std::function<void(void*)> deleter_;
  bool from_allocator_ = false;
  std::atomic<uint32_t> version_{0};
};

// Large blocks (1 MiB and up) of dead storages stay cached for reuse by the next allocation of
// the same size class (see Note [Block cache] in core/src/block_cache.cpp; KILN_CACHE_BYTES caps
// the cache per device). empty_cache frees those of `device`'s type to its plugin and returns the
// bytes freed; cached_bytes says how many `device` holds now.
KILN_API size_t empty_cache(Device device);
KILN_API size_t cached_bytes(Device device);

}  // namespace kiln
