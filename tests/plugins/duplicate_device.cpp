// A plugin that registers the device type "null" again (the null plugin has it): the core must
// refuse it, naming both files, and keep the first registration.
#include "host_device.hpp"

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "duplicate_device",       "0.1.0",        "registers 'null' again"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  return host->register_device("null", &ops, const_cast<char*>("null")) < 0 ? 1 : 0;
}

}  // extern "C"
