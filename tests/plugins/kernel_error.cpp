// A device "kerr" (host memory, no CPU fallback) whose kernels fail: neg reports an error the C
// way (host->set_error and a non-zero status), abs throws a C++ exception inside
// kiln::sdk::kernel<>, which turns it into the same, and exp reports an out-of-range index with
// the "IndexError: " prefix that picks the exception type. The caller must get a kiln::Error with
// the plugin's message, the operator and the device, and no storage may leak.
#include "host_device.hpp"

#include <stdexcept>

namespace {

kiln_status neg_fails(const kiln_call* /*call*/, void* /*user*/) {
  kiln::sdk::host()->set_error("kernel_error: the accelerator rejected the launch (code 7)");
  return 7;
}

void abs_throws(const kiln::sdk::Call& /*call*/) {
  throw std::runtime_error("kernel_error: abs ran out of registers");
}

void exp_index_error(const kiln::sdk::Call& /*call*/) {
  throw std::out_of_range("IndexError: kernel_error: index 9 is out of bounds for size 3");
}

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
                                        "kernel_error", "0.1.0", "kernels that fail"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  int32_t type = host->register_device("kerr", &ops, const_cast<char*>("kerr"));
  if (type < 0) return 1;
  if (host->register_kernel("neg", type, neg_fails, nullptr) != 0) return 1;
  if (host->register_kernel("abs", type, kiln::sdk::kernel<abs_throws>, nullptr) != 0) return 1;
  return host->register_kernel("exp", type, kiln::sdk::kernel<exp_index_error>, nullptr);
}

}  // extern "C"
