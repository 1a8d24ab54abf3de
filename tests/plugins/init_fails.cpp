// A plugin whose init registers a device type ("failing") and a kernel, then fails: the core must
// refuse it with the plugin's message and roll both registrations back.
#include "host_device.hpp"

namespace {
kiln_status never_runs(const kiln_call* /*call*/, void* /*user*/) { return 1; }
}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR, "init_fails", "0.1.0",
      "init reports an error"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  int32_t type = host->register_device("failing", &ops, const_cast<char*>("failing"));
  if (type < 0 || host->register_kernel("neg", type, never_runs, nullptr) != 0) return 1;
  host->set_error("init_fails: the device's firmware is missing");
  return 1;
}

}  // extern "C"
