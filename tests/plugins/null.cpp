// The null device plugin: a device type "null" with host memory and no kernels. It proves that
// the core depends on no backend (tensors allocate; every primitive raises NotImplementedError),
// and it is the smallest complete plugin: copy it to start a new one.
#include "host_device.hpp"

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {sizeof(kiln_plugin_info),
                                        KILN_ABI_MAJOR,
                                        KILN_ABI_MINOR,
                                        "null",
                                        "0.1.0",
                                        "a device with memory and no kernels"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  return host->register_device("null", &ops, const_cast<char*>("null")) < 0 ? 1 : 0;
}

}  // extern "C"
