// A plugin that registers its device type "dupkern" and then the kernel of neg for it twice: the
// core must refuse it and roll the device and the first kernel back.
//
// (A plugin cannot register a kernel for another plugin's device: register_kernel takes the id
// that register_device returned to this plugin, and the core refuses any other; bad_calls.cpp
// tries it.)
#include "host_device.hpp"

namespace {
kiln_status never_runs(const kiln_call* /*call*/, void* /*user*/) { return 1; }
}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "duplicate_kernel",       "0.1.0",        "registers neg twice"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  int32_t type = host->register_device("dupkern", &ops, const_cast<char*>("dupkern"));
  if (type < 0 || host->register_kernel("neg", type, never_runs, nullptr) != 0) return 1;
  return host->register_kernel("neg", type, never_runs, nullptr);
}

}  // extern "C"
