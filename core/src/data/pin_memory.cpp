// Pinned host memory through the device plugin's host_alloc. See kiln/data/pin_memory.h.
#include <kiln/data/pin_memory.h>

#include "../runtime.h"

#include <kiln/error.h>
#include <kiln/ops.h>

#include <cstring>

namespace kiln::data {
namespace {

// The device's ops when they offer host_alloc/host_free (struct_size covers them), else null.
const kiln_device_ops* pinning_ops(Device device, void** self) {
  if (device.is_cpu()) return nullptr;
  kiln::detail::ensure_runtime_started();
  kiln::detail::DeviceTypeRecord& r = kiln::detail::device_record(device.type());
  const kiln_device_ops* ops = r.ops;
  if (ops == nullptr) return nullptr;
  if (ops->struct_size < offsetof(kiln_device_ops, host_free) + sizeof(ops->host_free)) {
    return nullptr;
  }
  if (ops->host_alloc == nullptr || ops->host_free == nullptr) return nullptr;
  *self = r.self;
  return ops;
}

Tensor pin_tensor(const Tensor& t, const kiln_device_ops* ops, void* self) {
  if (!t.defined() || !t.is_cpu()) return t;
  Tensor src = t.contiguous();
  size_t bytes = src.nbytes();
  void* p = ops->host_alloc(self, bytes == 0 ? 1 : bytes);
  if (p == nullptr) {
    std::string why = kiln::detail::take_plugin_error();
    throw Error(kiln::detail::str("pin_memory: cannot allocate ", bytes, " bytes of pinned ",
                                  "memory", why.empty() ? "" : ": ", why));
  }
  auto storage = std::make_shared<Storage>(Device(kCPU), p, bytes,
                                           [ops, self](void* q) { ops->host_free(self, q); });
  if (bytes > 0) std::memcpy(p, src.data_ptr(), bytes);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);  // owns p: freed through the plugin
  impl->sizes = src.sizes();
  impl->strides = src.strides();
  impl->numel = src.numel();
  impl->dtype = src.dtype();
  impl->device = Device(kCPU);
  return Tensor(std::move(impl));
}

Sample pin_value(const Sample& s, const kiln_device_ops* ops, void* self) {
  switch (s.kind()) {
    case Sample::Kind::Tensor: return pin_tensor(s.tensor(), ops, self);
    case Sample::Kind::List: {
      Sample::List out;
      for (const Sample& v : s.list()) out.push_back(pin_value(v, ops, self));
      return out;
    }
    case Sample::Kind::Map: {
      Sample::Map out;
      for (const auto& [k, v] : s.map()) out.emplace(k, pin_value(v, ops, self));
      return out;
    }
    default: return s;
  }
}

}  // namespace

bool pinned_memory_available(Device device) {
  void* self = nullptr;
  return pinning_ops(device, &self) != nullptr;
}

Sample pin_memory(const Sample& sample, Device device) {
  void* self = nullptr;
  const kiln_device_ops* ops = pinning_ops(device, &self);
  if (ops == nullptr) return sample;
  return pin_value(sample, ops, self);
}

}  // namespace kiln::data
