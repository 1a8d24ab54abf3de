// A plugin whose probe says it cannot run here, with a reason. Its probe also tries to register a
// device type, which the core must refuse (only init registers); its init must never run.
#include "host_device.hpp"

#include <string>

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "probe_says_no",          "0.1.0",        "needs hardware that is absent"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  int32_t type = host->register_device("probe_no", &ops, const_cast<char*>("probe_no"));
  std::string reason = "probe_says_no: no such accelerator on this machine (register_device "
                       "during probe returned " +
                       std::to_string(type) + ")";
  host->set_error(reason.c_str());
  return 0;
}

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  return host->register_device("probe_no", &ops, const_cast<char*>("probe_no")) < 0 ? 1 : 0;
}

}  // extern "C"
