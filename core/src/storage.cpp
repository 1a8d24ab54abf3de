#include "runtime.h"

#include <kiln/error.h>
#include <kiln/storage.h>

namespace kiln {

Storage::Storage(Device device, size_t nbytes) : nbytes_(nbytes), device_(device) {
  detail::DeviceTypeRecord& r = detail::require_device(device, "allocate");
  int index = device.has_index() ? device.index() : 0;
  data_ = r.ops->alloc(r.self, index, nbytes);
  if (data_ == nullptr) {
    std::string why = detail::take_plugin_error();
    throw Error(detail::str("allocate: out of memory on ", device.str(), " allocating ", nbytes,
                            " bytes", why.empty() ? "" : ": ", why));
  }
  from_allocator_ = true;
  r.live_storages.fetch_add(1, std::memory_order_relaxed);
}

Storage::Storage(Device device, void* data, size_t nbytes, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {
  detail::require_device(device, "from_blob").live_storages.fetch_add(1, std::memory_order_relaxed);
}

Storage::~Storage() {
  detail::DeviceTypeRecord& r = detail::device_record(device_.type());
  if (from_allocator_) {
    r.ops->free(r.self, device_.has_index() ? device_.index() : 0, data_);
  } else if (deleter_) {
    deleter_(data_);
  }
  r.live_storages.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace kiln
