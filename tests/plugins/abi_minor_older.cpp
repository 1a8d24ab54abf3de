// A plugin built for an older minor ABI than the core's: it must load. Its device operations have
// ABI 1.0's size, so the core must not read the entries that 1.1 appended (host_alloc and
// host_free), although the memory after the 1.0 part holds non-null functions here.
#include "host_device.hpp"

#include <cstddef>

static_assert(KILN_ABI_MINOR > 0, "abi_minor_older needs a core with KILN_ABI_MINOR > 0");

namespace {

void* never_host_alloc(void* /*self*/, size_t /*bytes*/) { return nullptr; }
void never_host_free(void* /*self*/, void* /*ptr*/) {}

kiln_device_ops abi_1_0_ops() {
  kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  ops.struct_size = offsetof(kiln_device_ops, priority) + sizeof(ops.priority);  // ABI 1.0
  ops.host_alloc = never_host_alloc;  // beyond struct_size: the core must not see these
  ops.host_free = never_host_free;
  return ops;
}

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR - 1,
      "abi_minor_older",        "0.1.0",        "built for an older minor ABI"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = abi_1_0_ops();
  kiln::sdk::host() = host;
  return host->register_device("older", &ops, const_cast<char*>("older")) < 0 ? 1 : 0;
}

}  // extern "C"
