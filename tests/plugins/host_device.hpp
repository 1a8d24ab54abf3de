// A device type whose memory is ordinary host memory: the smallest complete kiln_device_ops,
// shared by the loader's test plugins. Like any plugin, it uses only the SDK headers.
#pragma once

#include <kiln/sdk/kernel.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace kiln_test {

// `self` is the device type's name (a string literal the plugin passed to register_device).
inline int32_t host_count(void* /*self*/) { return 1; }

inline void host_describe(void* self, int32_t index, char* buf, size_t len) {
  std::snprintf(buf, len, "%s:%d (host memory, test device)", static_cast<const char*>(self),
                static_cast<int>(index));
}

inline void* host_alloc(void* /*self*/, int32_t /*index*/, size_t bytes) {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) kiln::sdk::host()->set_error("out of host memory");
  return p;
}

inline void host_free(void* /*self*/, int32_t /*index*/, void* ptr) { std::free(ptr); }

// Both sides are host memory here; either may be a strided view.
inline kiln_status host_copy(void* /*self*/, const kiln_tensor* dst, const kiln_tensor* src) {
  try {
    kiln::sdk::StridedLoop<2> loop({dst, src});
    size_t item = kiln::sdk::dtype_size(dst->dtype);
    loop.run(0, loop.numel(), [&](char** p, const int64_t* step, int64_t n) {
      for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * step[0], p[1] + i * step[1], item);
    });
    return 0;
  } catch (const std::exception& e) {
    kiln::sdk::host()->set_error(e.what());
    return 1;
  }
}

// The device operations; `cpu_fallback` 1 runs operators without a kernel here on the CPU.
inline kiln_device_ops host_device_ops(int32_t cpu_fallback) {
  kiln_device_ops ops{};
  ops.struct_size = sizeof(kiln_device_ops);
  ops.count = host_count;
  ops.describe = host_describe;
  ops.alloc = host_alloc;
  ops.free = host_free;
  ops.copy = host_copy;
  ops.host_accessible = 1;
  ops.autocast_dtype = KILN_BF16;
  ops.cpu_fallback = cpu_fallback;
  ops.priority = -1;  // never the default device while the CPU is there
  return ops;
}

}  // namespace kiln_test
