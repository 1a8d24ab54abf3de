// A plugin that misuses the host table in every way the core checks; the core must refuse each
// call with an error and no effect. Then it registers its device type "bad_calls" properly and
// loads. If the core accepts a bad call, init fails naming that call.
#include "host_device.hpp"

#include <string>

namespace {

kiln_status never_runs(const kiln_call* /*call*/, void* /*user*/) { return 1; }

kiln_status accepted(const kiln_host* host, const char* call) {
  std::string message = std::string("bad_calls: the core accepted ") + call;
  host->set_error(message.c_str());
  return 1;
}

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR, "bad_calls", "0.1.0",
      "misuses the host table"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  static kiln_device_ops too_small = ops;
  too_small.struct_size = 8;
  static kiln_device_ops no_alloc = ops;
  no_alloc.alloc = nullptr;
  kiln::sdk::host() = host;
  // kCPU is 0 in the core: another plugin's device type (or none), never this plugin's.
  if (host->register_kernel("neg", 0, never_runs, nullptr) == 0) {
    return accepted(host, "a kernel for device type 0, which this plugin did not register");
  }
  if (host->register_device(nullptr, &ops, nullptr) >= 0) return accepted(host, "no name");
  if (host->register_device("bad_calls_x", nullptr, nullptr) >= 0) return accepted(host, "no ops");
  if (host->register_device("bad_calls_x", &too_small, nullptr) >= 0) {
    return accepted(host, "a too small struct_size");
  }
  if (host->register_device("bad_calls_x", &no_alloc, nullptr) >= 0) {
    return accepted(host, "ops without alloc");
  }
  if (host->register_device("Bad Name", &ops, nullptr) >= 0) return accepted(host, "'Bad Name'");
  int32_t type = host->register_device("bad_calls", &ops, const_cast<char*>("bad_calls"));
  if (type < 0) return 1;
  if (host->register_kernel("no_such_operator", type, never_runs, nullptr) == 0) {
    return accepted(host, "an unknown operator");
  }
  if (host->register_kernel("neg", type, nullptr, nullptr) == 0) return accepted(host, "no fn");
  if (host->register_kernel("neg", 99, never_runs, nullptr) == 0) return accepted(host, "type 99");
  if (host->register_kernel("neg", -1, never_runs, nullptr) == 0) return accepted(host, "type -1");
  return 0;
}

}  // extern "C"
