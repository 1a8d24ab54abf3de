// A device plugin named after its device type ("absentgpu"), as kiln's CUDA plugin is, whose
// probe finds no driver: asking for the device must name this plugin and its probe's reason.
#include "host_device.hpp"

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),      KILN_ABI_MAJOR, KILN_ABI_MINOR, "absentgpu", "0.1.0",
      "a GPU whose driver is absent"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* host) {
  host->set_error("absentgpu: no driver found (libabsentgpu.so.1 is not installed)");
  return 0;
}

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  return host->register_device("absentgpu", &ops, const_cast<char*>("absentgpu")) < 0 ? 1 : 0;
}

}  // extern "C"
