// Note [CUDA caching allocator]
// cudaMalloc and cudaFree are slow and cudaFree synchronizes the device, so freed blocks are kept
// and handed out again, as PyTorch's caching allocator does (without its block splitting):
//   - sizes round up to a size class: multiples of 512 bytes below 1 MiB, then four classes per
//     power of two; a request takes a cached block of exactly its class;
//   - blocks are cached per (device, stream) of the allocation: work queued on one stream runs
//     in order, so a block freed there can be reused there at once without an event;
//   - statistics per device: allocated (bytes of live blocks, by class), reserved (live plus
//     cached), peak allocated;
//   - when cudaMalloc fails, the device's cache is emptied and the call tried once more; the
//     out-of-memory error then says what was asked, what is free and what kiln holds.
// The core keeps its own cache of large storages (Note [Block cache] in core/src/block_cache.cpp)
// above this one; this one is what makes the many small tensors of a training step cheap.
#include "cuda_plugin.hpp"

#include <kiln/sdk/host.hpp>

#include <cstdio>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kiln::cuda {
namespace {

constexpr int kMaxDevices = 64;

size_t size_class(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes < (size_t{1} << 20)) return (bytes + 511) / 512 * 512;
  size_t top = size_t{1} << (63 - __builtin_clzll(bytes));  // largest power of two <= bytes
  size_t step = top / 4;
  return (bytes + step - 1) / step * step;
}

struct Block {
  size_t size;
  cudaStream_t stream;
};

struct DeviceCache {
  std::map<std::pair<cudaStream_t, size_t>, std::vector<void*>> free_blocks;
  std::unordered_map<void*, Block> live;
  AllocatorStats stats;
};

struct Allocator {
  std::mutex mutex;
  DeviceCache devices[kMaxDevices];
};

Allocator& allocator() {
  static Allocator* a = new Allocator;  // never destroyed: frees may come during exit
  return *a;
}

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// Frees every cached block of `cache` (the caller holds the mutex and has set the device).
void release_cached(DeviceCache& cache) {
  for (auto& [key, blocks] : cache.free_blocks) {
    for (void* p : blocks) {
      cudaFree(p);
      cache.stats.reserved -= key.second;
    }
  }
  cache.free_blocks.clear();
}

}  // namespace

void* allocate(int32_t device, size_t bytes) {
  if (device < 0 || device >= kMaxDevices) {
    sdk::set_error("cuda: device index " + std::to_string(device) + " out of range");
    return nullptr;
  }
  const size_t size = size_class(bytes);
  cudaStream_t stream = current_stream(device);
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  DeviceCache& cache = a.devices[device];
  void* ptr = nullptr;
  auto it = cache.free_blocks.find({stream, size});
  if (it != cache.free_blocks.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
  } else {
    set_device(device);
    cudaError_t status = cudaMalloc(&ptr, size);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      release_cached(cache);
      status = cudaMalloc(&ptr, size);
    }
    if (status != cudaSuccess) {
      cudaGetLastError();
      size_t free_bytes = 0, total = 0;
      cudaMemGetInfo(&free_bytes, &total);
      sdk::set_error(KILN_ERROR_OUT_OF_MEMORY,
                     "CUDA out of memory: tried to allocate " + mib(bytes) +
                         " on cuda:" + std::to_string(device) + " (" + mib(total) + " total, " +
                         mib(free_bytes) + " free; kiln has reserved " + mib(cache.stats.reserved) +
                         ", " + mib(cache.stats.allocated) +
                         " of it allocated): " + cudaGetErrorString(status));
      return nullptr;
    }
    cache.stats.reserved += size;
  }
  cache.live.emplace(ptr, Block{size, stream});
  cache.stats.allocated += size;
  if (cache.stats.allocated > cache.stats.peak) cache.stats.peak = cache.stats.allocated;
  return ptr;
}

void deallocate(int32_t device, void* ptr) {
  if (ptr == nullptr || device < 0 || device >= kMaxDevices) return;
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  DeviceCache& cache = a.devices[device];
  auto it = cache.live.find(ptr);
  if (it == cache.live.end()) {
    sdk::log(KILN_LOG_ERROR, "cuda: internal error, please report: free of a pointer this "
                             "allocator did not hand out");
    return;
  }
  Block block = it->second;
  cache.live.erase(it);
  cache.stats.allocated -= block.size;
  cache.free_blocks[{block.stream, block.size}].push_back(ptr);
}

AllocatorStats allocator_stats(int32_t device) {
  if (device < 0 || device >= kMaxDevices) return {};
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  return a.devices[device].stats;
}

void empty_cache(int32_t device) {
  if (device < 0 || device >= kMaxDevices) return;
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  set_device(device);
  release_cached(a.devices[device]);
}

}  // namespace kiln::cuda
