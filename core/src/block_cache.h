// The cache of large device blocks that Storage keeps between a free and the next allocation of
// the same size class. See Note [Block cache] in block_cache.cpp.
#pragma once

#include <kiln/device.h>

#include <cstddef>

namespace kiln::detail {

// Blocks below this size go straight back to the plugin's allocator.
constexpr size_t kMinCachedBytes = size_t{1} << 20;

// The size a block of `nbytes` is allocated with: nbytes itself below kMinCachedBytes, else
// rounded up to its size class (eight classes per power of two, at most 12.5 % more).
size_t block_size_class(size_t nbytes);

// A cached block of exactly `bytes` (a size class) on `device`, or nullptr.
void* take_cached_block(Device device, size_t bytes);

// Keeps the block for reuse; false when the cache is full (or disabled), and then the caller
// frees it.
bool cache_block(Device device, void* data, size_t bytes);

// Frees every cached block of a device type to its plugin (before the plugin unloads, and when
// an allocation fails). Returns the bytes freed.
size_t release_cached_blocks(DeviceType type);

}  // namespace kiln::detail
