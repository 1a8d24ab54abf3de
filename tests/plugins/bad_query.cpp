// A plugin whose kiln_plugin_query returns no description: the core must refuse it.
#include <kiln/sdk/plugin.h>

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) { return nullptr; }

int32_t kiln_plugin_probe(const kiln_host* host) {
  host->set_error("bad_query: probe must not be called");
  return 0;
}

kiln_status kiln_plugin_init(const kiln_host* host) {
  host->set_error("bad_query: init must not be called");
  return 1;
}

}  // extern "C"
