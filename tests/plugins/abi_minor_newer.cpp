// A plugin built for a newer minor ABI than the core's: the core must refuse it without calling
// its probe or init.
#include <kiln/sdk/plugin.h>

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR + 1,
      "abi_minor_newer",        "0.1.0",        "wrong ABI"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* host) {
  host->set_error("abi_minor_newer: probe must not be called");
  return 0;
}

kiln_status kiln_plugin_init(const kiln_host* host) {
  host->set_error("abi_minor_newer: init must not be called");
  return 1;
}

}  // extern "C"
