// A plugin that breaks the rules: its init registers a device type ("throwing") and then lets a
// C++ exception cross the C boundary. The core must survive, refuse it and roll back.
#include "host_device.hpp"

#include <stdexcept>

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {sizeof(kiln_plugin_info),
                                        KILN_ABI_MAJOR,
                                        KILN_ABI_MINOR,
                                        "init_throws",
                                        "0.1.0",
                                        "init throws"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  host->register_device("throwing", &ops, const_cast<char*>("throwing"));
  throw std::runtime_error("init_throws: out of order");
}

}  // extern "C"
