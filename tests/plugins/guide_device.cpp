// The device that docs/writing-a-device-plugin.md builds ("mydev": host memory, no kernels, CPU
// fallback), copied from section 2 of the guide unchanged: kiln-plugin-check must pass on it
// (tests/loader/CMakeLists.txt, kiln_plugin_check_guide_device). Keep it equal to the guide.
#include <kiln/sdk/kernel.hpp>

#include <cstdlib>
#include <cstring>

namespace {

int32_t g_type = -1;  // the id the core gives "mydev"

int32_t count(void*) { return 1; }
void* alloc(void*, int32_t, size_t bytes) {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) kiln::sdk::set_error("mydev: out of memory");
  return p;
}
void release(void*, int32_t, void* p) { std::free(p); }

// dst and src have the same dtype and sizes; one side may be host memory (KILN_DEVICE_HOST,
// contiguous), the device side any strided view.
kiln_status copy(void*, const kiln_tensor* dst, const kiln_tensor* src) {
  kiln::sdk::StridedLoop<2> loop({dst, src});
  size_t item = kiln::sdk::dtype_size(dst->dtype);
  loop.run(0, loop.numel(), [&](char** p, const int64_t* step, int64_t n) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * step[0], p[1] + i * step[1], item);
  });
  return 0;
}

}  // namespace

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {  // no side effects
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),          KILN_ABI_MAJOR, KILN_ABI_MINOR, "mydev", "0.1.0",
      "device \"mydev\": my accelerator"};
  return &info;
}

// 0 (with host->set_error(why)) when this machine cannot run the plugin: no driver, no device.
KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host*) { return 1; }

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  kiln::sdk::host() = host;  // for set_error, log and kiln::sdk::kernel<>
  static const kiln_device_ops ops = [] {
    kiln_device_ops o{};
    o.struct_size = sizeof(kiln_device_ops);
    o.count = count;
    o.alloc = alloc;
    o.free = release;
    o.copy = copy;
    o.host_accessible = 1;
    o.autocast_dtype = KILN_BF16;
    o.cpu_fallback = 1;
    o.priority = -1;  // not the default device unless KILN_DEVICE=mydev
    return o;
  }();
  g_type = host->register_device("mydev", &ops, nullptr);
  return g_type < 0 ? 1 : 0;  // the core has set the error (a name another plugin took, ...)
}

}  // extern "C"
