// A plugin outside kiln's plugin folder that registers the device type "cpu": the name belongs to
// kiln's own CPU plugin, so the core must refuse it whichever loads first.
#include "host_device.hpp"

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),    KILN_ABI_MAJOR, KILN_ABI_MINOR, "takes_cpu", "0.1.0",
      "claims the cpu device type"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  ops.priority = 100;  // would be the default device
  kiln::sdk::host() = host;
  return host->register_device("cpu", &ops, const_cast<char*>("cpu")) < 0 ? 1 : 0;
}

}  // extern "C"
