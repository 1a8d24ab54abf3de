// A plugin whose device's describe operation throws (an int): device_description must raise
// kiln::Error naming the plugin, and kiln-info must still print its report.
#include "host_device.hpp"

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "describe_throws",        "0.1.0",        "its describe throws"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  ops.describe = [](void*, int32_t, char*, size_t) { throw 7; };
  kiln::sdk::host() = host;
  return host->register_device("describe_throws", &ops, nullptr) < 0 ? 1 : 0;
}

}  // extern "C"
