// A plugin built for ABI 1.1, before error kinds: its device "legacy" (host memory, no CPU
// fallback) has kernels that report errors with host->set_error alone, choosing the exception
// type by a message prefix ("IndexError: ", ...), as kiln::sdk::kernel<> of ABI 1.1 passed on a
// std::exception's what(). The core must still raise the prefix's subclass, without the prefix
// (Note [Error kinds] in kiln/sdk/plugin.h). It never reads set_error_kind.
#include "host_device.hpp"

#include <kiln/sdk/kernel_table.hpp>

namespace {

const kiln_host* g_host = nullptr;

template <const char* Message>
kiln_status fails(const kiln_call* /*call*/, void* /*user*/) {
  g_host->set_error(Message);
  return 1;
}

constexpr char kIndex[] = "IndexError: legacy: index 4 is out of bounds for size 2";
constexpr char kValue[] = "ValueError: legacy: a negative length";
constexpr char kType[] = "TypeError: legacy: exp does not take float32";
constexpr char kNotImplemented[] = "NotImplementedError: legacy: log on strided memory";
constexpr char kPlain[] = "legacy: the device fell over";

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, 1,
      "legacy_errors",          "0.1.0",        "built for ABI 1.1: error types by message prefix"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  g_host = host;
  int32_t type = host->register_device("legacy", &ops, const_cast<char*>("legacy"));
  if (type < 0) return 1;
  kiln::sdk::KernelTable table(host, type);
  table.add("neg", fails<kIndex>);
  table.add("abs", fails<kValue>);
  table.add("exp", fails<kType>);
  table.add("log", fails<kNotImplemented>);
  table.add("sin", fails<kPlain>);
  return table.status();
}

}  // extern "C"
