// A plugin linked to a library that is absent at run time (see absent_dep.cpp): dlopen fails, and
// the core must report the missing library's name and carry on.
#include <kiln/sdk/plugin.h>

extern "C" int kiln_test_absent_answer(void);  // in libkiln_test_absent.so

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR, "missing_dep", "0.1.0",
      "needs a missing library"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return kiln_test_absent_answer() == 42; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  host->set_error("missing_dep: init must not be called");
  return 1;
}

}  // extern "C"
