#include "block_cache.h"

#include "runtime.h"

#include <kiln/error.h>
#include <kiln/storage.h>

#include <bit>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::detail {

// Note [Block cache]: a storage of at least kMinCachedBytes goes back to a per-device cache when
// it dies, and the next allocation of the same size class takes it back without calling the
// plugin. Fresh large blocks are expensive on every device: on the CPU each 4 KiB page faults on
// first touch (16,386 faults per `x + y` on 16M floats, measured, which held that add to a
// quarter of memcpy's bandwidth), and on CUDA cudaMalloc and cudaFree synchronize the device.
// PyTorch's CUDA caching allocator exists for the second reason; this one sits in core, so every
// device plugin gets it without writing one.
//   - Sizes are rounded up to one of eight classes per power of two, so a training loop's
//     activations of a few distinct sizes reuse each other's blocks.
//   - A device caches at most KILN_CACHE_BYTES (default 2 GiB; 0 turns the cache off). A block
//     that would exceed it is freed at once.
//   - A failed allocation frees the device type's cached blocks and tries once more;
//     kiln::empty_cache() frees them on request, and the loader frees them before unloading
//     the plugin whose allocator made them.
//   - Blocks still cached when the process exits are not freed: the plugins' allocators may be
//     gone by then, and the memory returns to the system anyway.
namespace {

size_t cache_limit() {
  static const size_t limit = [] {
    const char* env = std::getenv("KILN_CACHE_BYTES");
    if (env == nullptr || *env == '\0') return size_t{2} << 30;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(env, &end, 10);
    // strtoull takes "-1" as 2^64 - 1: only plain digits are a byte count
    if (*env < '0' || *env > '9' || *end != '\0' || errno == ERANGE) {
      warn(str("KILN_CACHE_BYTES='", env, "' is not a byte count below 2^64; using the default ",
               "2 GiB"));
      return size_t{2} << 30;
    }
    return static_cast<size_t>(v);
  }();
  return limit;
}

struct DeviceCache {
  std::multimap<size_t, void*> blocks;  // size class -> block
  size_t bytes = 0;
};

struct BlockCache {
  std::mutex mutex;
  std::map<std::pair<DeviceType, int>, DeviceCache> devices;
};

// Never destroyed: see the last point of the note.
BlockCache& cache() {
  static BlockCache* c = new BlockCache;
  return *c;
}

std::pair<DeviceType, int> key(Device device) {
  return {device.type(), device.has_index() ? device.index() : 0};
}

}  // namespace

size_t block_size_class(size_t nbytes) {
  if (nbytes < kMinCachedBytes) return nbytes;
  size_t step = std::bit_floor(nbytes) / 8;
  size_t rounded = 0;
  // only above 2^64 - 2^60, which no allocation reaches (Storage refuses more than 2^63 - 1)
  if (__builtin_add_overflow(nbytes, step - 1, &rounded)) return nbytes;
  return rounded / step * step;
}

void* take_cached_block(Device device, size_t bytes) {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto d = c.devices.find(key(device));
  if (d == c.devices.end()) return nullptr;
  auto it = d->second.blocks.find(bytes);
  if (it == d->second.blocks.end()) return nullptr;
  void* data = it->second;
  d->second.blocks.erase(it);
  d->second.bytes -= bytes;
  return data;
}

bool cache_block(Device device, void* data, size_t bytes) {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  DeviceCache& d = c.devices[key(device)];
  if (bytes > cache_limit() - d.bytes) return false;  // d.bytes <= cache_limit()
  d.blocks.emplace(bytes, data);
  d.bytes += bytes;
  return true;
}

size_t release_cached_blocks(DeviceType type) {
  std::vector<std::pair<int, void*>> blocks;
  size_t freed = 0;
  {
    BlockCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    for (auto& [k, d] : c.devices) {
      if (k.first != type) continue;
      for (auto& [bytes, data] : d.blocks) blocks.emplace_back(k.second, data);
      freed += d.bytes;
      d.blocks.clear();
      d.bytes = 0;
    }
  }
  DeviceTypeRecord& r = device_record(type);
  for (auto& [index, data] : blocks) r.ops->free(r.self, index, data);
  return freed;
}

}  // namespace kiln::detail

namespace kiln {

size_t empty_cache(Device device) { return detail::release_cached_blocks(device.type()); }

size_t cached_bytes(Device device) {
  detail::BlockCache& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto d = c.devices.find(detail::key(device));
  return d == c.devices.end() ? 0 : d->second.bytes;
}

}  // namespace kiln
