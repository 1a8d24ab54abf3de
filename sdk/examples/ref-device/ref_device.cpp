// The "ref" device's memory and the plugin's entry points. See ref.hpp.
#include "ref.hpp"

#include <kiln/sdk/kernel_table.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace ref {
namespace {

int32_t count(void* /*self*/) { return 1; }

void describe(void* /*self*/, int32_t index, char* buf, size_t len) {
  std::snprintf(buf, len, "ref:%d (reference device: host memory, plain loops)",
                static_cast<int>(index));
}

void* alloc(void* /*self*/, int32_t /*index*/, size_t bytes) {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) {
    kiln::sdk::set_error(KILN_ERROR_OUT_OF_MEMORY,
                         "ref: out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  return p;
}

void release(void* /*self*/, int32_t /*index*/, void* ptr) { std::free(ptr); }

// dst and src have the same dtype and sizes; either may be a strided view of ref memory or
// contiguous host memory, which here are the same thing.
kiln_status copy(void* /*self*/, const kiln_tensor* dst, const kiln_tensor* src) {
  try {
    size_t item = kiln::sdk::dtype_size(dst->dtype);
    for_each_element<2>({dst, src}, [&](char** p) { std::memcpy(p[0], p[1], item); });
    return 0;
  } catch (...) {
    kiln::sdk::report_exception();
    return 1;
  }
}

const kiln_device_ops* device_ops() {
  static const kiln_device_ops ops = [] {
    kiln_device_ops o{};
    o.struct_size = sizeof(kiln_device_ops);
    o.count = count;
    o.describe = describe;
    o.alloc = alloc;
    o.free = release;
    o.copy = copy;
    o.host_accessible = 1;  // the core may read ref memory directly (item(), printing)
    o.autocast_dtype = KILN_BF16;
    o.cpu_fallback = 1;  // operators without a kernel here run on the CPU device
    o.priority = -1;     // never the default device unless KILN_DEVICE=ref
    return o;
  }();
  return &ops;
}

}  // namespace
}  // namespace ref

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),
      KILN_ABI_MAJOR,
      KILN_ABI_MINOR,
      "ref",
      "0.1.0",
      "device \"ref\": reference kernels in plain loops over host memory, CPU fallback"};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  kiln::sdk::host() = host;
  int32_t type = host->register_device("ref", ref::device_ops(), nullptr);
  if (type < 0) return 1;  // the core has set the error (the name is taken, ...)
  kiln::sdk::KernelTable table(host, type);
  ref::register_elementwise(table);
  ref::register_reduce(table);
  return table.status();
}

}  // extern "C"
