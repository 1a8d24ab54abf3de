// A plugin whose static constructor throws while dlopen runs it, before the core can call any of
// its functions: the core must survive, list the file as "load failed" with the exception, and
// go on with the other plugins.
#include "host_device.hpp"

#include <stdexcept>

namespace {

struct Config {
  Config() { throw std::runtime_error("static_throws: no configuration file"); }
};
const Config config;

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "static_throws",          "0.1.0",        "never gets this far"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  return host->register_device("static_throws", &ops, const_cast<char*>("static")) < 0 ? 1 : 0;
}

}  // extern "C"
