#include "block_cache.h"
#include "profiler/profiler_internal.h"
#include "runtime.h"

#include <kiln/error.h>
#include <kiln/storage.h>

#include <limits>

namespace kiln {

namespace detail {
// See profiler_internal.h; initial-exec as Note [Dispatch state TLS].
thread_local uint64_t allocated_bytes __attribute__((tls_model("initial-exec"))) = 0;
uint64_t thread_allocated_bytes() { return allocated_bytes; }
}  // namespace detail

namespace {

// The record of the device's type, checked. The common case (plugins loaded, the device exists)
// costs two loads; see Note [Dispatch state TLS] for why the flag is initial-exec.
detail::DeviceTypeRecord& allocating_device(Device device) {
  static thread_local bool loaded __attribute__((tls_model("initial-exec"))) = false;
  if (!loaded) {
    detail::ensure_runtime_started();  // call_once: what it loaded is visible to this thread
    loaded = true;
  }
  detail::DeviceTypeRecord& r = detail::device_record(device.type());
  int index = device.has_index() ? device.index() : 0;
  if (r.ops == nullptr || index >= r.count) return detail::require_device(device, "allocate");
  return r;
}

}  // namespace

Storage::Storage(Device device, size_t nbytes) : nbytes_(nbytes), device_(device) {
  // See Note [Checked sizes]: tensors never ask for more; block_size_class relies on it.
  KILN_CHECK_VALUE(nbytes <= static_cast<size_t>(std::numeric_limits<int64_t>::max()),
                   "allocate: ", nbytes, " bytes on ", device.str(),
                   " exceed the largest allocation, 2^63 - 1 bytes");
  detail::DeviceTypeRecord& r = allocating_device(device);
  int index = device.has_index() ? device.index() : 0;
  size_t bytes = detail::block_size_class(nbytes);
  if (bytes >= detail::kMinCachedBytes) data_ = detail::take_cached_block(device, bytes);
  if (data_ == nullptr) data_ = r.ops->alloc(r.self, index, bytes);
  if (data_ == nullptr && detail::release_cached_blocks(device.type()) > 0) {
    detail::take_plugin_error();
    data_ = r.ops->alloc(r.self, index, bytes);  // once more, with the cache given back
  }
  if (data_ == nullptr) {
    std::string why = detail::take_plugin_error();
    throw OutOfMemoryError(detail::str(
        "allocate: out of memory on ", device.str(), " allocating ", nbytes, " bytes",
        why.empty() ? "" : ": ", why, ". Free tensors you no longer need, or use smaller batches"));
  }
  from_allocator_ = true;
  detail::allocated_bytes += nbytes;  // the profiler's memory column
  r.live_storages.fetch_add(1, std::memory_order_relaxed);
}

Storage::Storage(Device device, void* data, size_t nbytes, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {
  detail::require_device(device, "from_blob").live_storages.fetch_add(1, std::memory_order_relaxed);
}

void Storage::swap_memory(Storage& other) {
  KILN_CHECK(device_ == other.device_, "swap_memory: storages on ", device_.str(), " and ",
             other.device_.str(), " (internal error, please report)");
  std::swap(data_, other.data_);
  std::swap(nbytes_, other.nbytes_);
  std::swap(deleter_, other.deleter_);
  std::swap(from_allocator_, other.from_allocator_);
}

Storage::~Storage() {
  detail::DeviceTypeRecord& r = detail::device_record(device_.type());
  if (from_allocator_) {
    size_t bytes = detail::block_size_class(nbytes_);
    if (bytes < detail::kMinCachedBytes || !detail::cache_block(device_, data_, bytes)) {
      r.ops->free(r.self, device_.has_index() ? device_.index() : 0, data_);
    }
  } else if (deleter_) {
    deleter_(data_);
  }
  r.live_storages.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace kiln
