// The "null" device: host memory and no kernels, so every operator on it runs on the CPU device
// (cpu_fallback) and gives the CPU's results. Copy this file to start a device plugin, then add
// kernels one primitive at a time (docs/writing-a-device-plugin.md; sdk/examples/ref-device has
// many): kiln-plugin-check checks each against the CPU.
#include <kiln/sdk/kernel.hpp>        // kiln::sdk::host(), set_error, StridedLoop
#include <kiln/sdk/kernel_table.hpp>  // registers the kernels, when there are some

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int32_t count(void* /*self*/) { return 1; }  // devices of this type on this machine: null:0

void describe(void* /*self*/, int32_t index, char* buf, size_t len) {
  std::snprintf(buf, len, "null:%d (host memory, no kernels: everything runs on the CPU)",
                static_cast<int>(index));
}

void* alloc(void* /*self*/, int32_t /*index*/, size_t bytes) {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) {
    kiln::sdk::set_error(KILN_ERROR_OUT_OF_MEMORY,
                         "null: out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  return p;
}

void release(void* /*self*/, int32_t /*index*/, void* ptr) { std::free(ptr); }

// dst and src have the same dtype and sizes; each is null memory or host memory (the same thing
// here), either possibly a strided view.
kiln_status copy(void* /*self*/, const kiln_tensor* dst, const kiln_tensor* src) {
  try {
    kiln::sdk::StridedLoop<2> loop({dst, src});
    const size_t item = kiln::sdk::dtype_size(dst->dtype);
    loop.run(0, loop.numel(), [&](char** p, const int64_t* step, int64_t n) {
      for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * step[0], p[1] + i * step[1], item);
    });
    return 0;
  } catch (...) {
    kiln::sdk::report_exception();
    return 1;
  }
}

kiln_device_ops device_ops() {
  kiln_device_ops ops{};
  ops.struct_size = sizeof(kiln_device_ops);
  ops.count = count;
  ops.describe = describe;
  ops.alloc = alloc;
  ops.free = release;
  ops.copy = copy;
  ops.host_accessible = 1;  // the core may read null memory directly (item(), printing)
  ops.autocast_dtype = KILN_BF16;
  ops.cpu_fallback = 1;  // operators without a kernel here run on the CPU device
  ops.priority = -1;     // never the default device unless KILN_DEVICE=null
  return ops;
}

}  // namespace

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {sizeof(kiln_plugin_info),
                                        KILN_ABI_MAJOR,
                                        KILN_ABI_MINOR,
                                        "null",
                                        "0.1.0",
                                        "device \"null\": host memory, no kernels, CPU fallback"};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = device_ops();
  kiln::sdk::host() = host;
  int32_t type = host->register_device("null", &ops, nullptr);
  if (type < 0) return 1;  // the core has set the error (the name is taken, ...)
  kiln::sdk::KernelTable table(host, type);
  // table.add("neg", kiln::sdk::kernel<neg>);  // your kernels, one line each
  return table.status();
}

}  // extern "C"
