// A plugin whose init registers a device type ("throwing_int") and a kernel, then throws an int,
// which is no std::exception: the core must catch it, name its type, refuse the plugin and roll
// both registrations back.
#include "host_device.hpp"

namespace {
kiln_status never_runs(const kiln_call* /*call*/, void* /*user*/) { return 1; }
}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
                                        "init_throws_int",        "0.1.0",        "init throws 42"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/1);
  kiln::sdk::host() = host;
  int32_t type = host->register_device("throwing_int", &ops, const_cast<char*>("throwing_int"));
  host->register_kernel("neg", type, never_runs, nullptr);
  throw 42;
}

}  // extern "C"
