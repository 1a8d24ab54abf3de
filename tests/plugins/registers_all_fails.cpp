// A plugin whose init registers one of everything the host table takes (a device type, a kernel,
// a data source, a decoder) and then fails: none of them may be usable afterwards.
#include "host_device.hpp"

namespace {

kiln_status never_runs(const kiln_call* /*call*/, void* /*user*/) { return 1; }
void* open_shard(void* /*self*/, const char* /*shard*/) { return nullptr; }
int32_t next(void* /*reader*/, kiln_sample* /*out*/) { return KILN_SAMPLE_END; }
void close(void* /*reader*/) {}
kiln_status decode(const void*, uint64_t, const char*, const kiln_decode_out*, void*) { return 1; }

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "registers_all_fails",    "0.1.0",        "registers everything, then fails"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/1);
  static const kiln_source_ops source = {sizeof(kiln_source_ops), nullptr, open_shard, next, close};
  kiln::sdk::host() = host;
  int32_t type = host->register_device("stagedev", &ops, const_cast<char*>("stagedev"));
  if (type < 0 || host->register_kernel("neg", type, never_runs, nullptr) != 0 ||
      host->register_source("stagesrc", &source, nullptr) != 0 ||
      host->register_decoder("stagext", decode, nullptr) != 0) {
    return 1;
  }
  host->set_error("registers_all_fails: the last step failed");
  return 1;
}

}  // extern "C"
