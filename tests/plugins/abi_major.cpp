// A plugin built for the next major ABI: the core must refuse it without calling its probe or
// init.
#include <kiln/sdk/plugin.h>

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {sizeof(kiln_plugin_info),
                                        KILN_ABI_MAJOR + 1,
                                        KILN_ABI_MINOR,
                                        "abi_major",
                                        "0.1.0",
                                        "wrong ABI"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* host) {
  host->set_error("abi_major: probe must not be called");
  return 0;
}

kiln_status kiln_plugin_init(const kiln_host* host) {
  host->set_error("abi_major: init must not be called");
  return 1;
}

}  // extern "C"
