// A device "kerr" (host memory, no CPU fallback) whose kernels fail, one way each: neg reports an
// error the C way (host->set_error and a non-zero status); the kernels wrapped with
// kiln::sdk::kernel<> throw, and the SDK reports the kind of the exception's type (see
// kiln/sdk/host.hpp); sigmoid and rsqrt call host->set_error_kind themselves, rsqrt with a kind
// this kiln does not know; add reads its alpha with the wrong accessor. The caller must get the
// kiln::Error subclass of each kind with the plugin's message, the operator and the device, and no
// storage may leak.
#include "host_device.hpp"

#include <kiln/sdk/kernel_table.hpp>

#include <new>
#include <stdexcept>

namespace {

using kiln::sdk::Call;

kiln_status neg_fails(const kiln_call* /*call*/, void* /*user*/) {
  kiln::sdk::host()->set_error("kernel_error: the accelerator rejected the launch (code 7)");
  return 7;
}

void abs_throws(const Call& /*call*/) {
  throw std::runtime_error("kernel_error: abs ran out of registers");
}

void exp_index_error(const Call& /*call*/) {
  throw std::out_of_range("kernel_error: index 9 is out of bounds for size 3");
}

void log_value_error(const Call& /*call*/) {
  throw std::invalid_argument("kernel_error: log of a negative length");
}

void sqrt_domain_error(const Call& /*call*/) {
  throw std::domain_error("kernel_error: sqrt outside its domain");
}

void sin_type_error(const Call& /*call*/) {
  throw kiln::sdk::type_error("kernel_error: sin does not take float32");
}

void cos_not_implemented(const Call& /*call*/) {
  throw kiln::sdk::not_implemented("kernel_error: cos on strided memory");
}

void tanh_bad_alloc(const Call& /*call*/) { throw std::bad_alloc(); }

kiln_status sigmoid_out_of_memory(const kiln_call* /*call*/, void* /*user*/) {
  kiln::sdk::host()->set_error_kind(KILN_ERROR_OUT_OF_MEMORY,
                                    "kernel_error: 12 GiB asked, 1 GiB free");
  return 1;
}

kiln_status rsqrt_unknown_kind(const kiln_call* /*call*/, void* /*user*/) {
  kiln::sdk::host()->set_error_kind(99, "kernel_error: a kind from the future");
  return 1;
}

// Reads "alpha" as float64, whatever kind the core passed (int64 for an integral alpha).
void add_reads_alpha_as_f64(const Call& call) { (void)call.attr_f64(0); }

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "kernel_error",           "0.1.0",        "kernels that fail"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  using kiln::sdk::kernel;
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/0);
  kiln::sdk::host() = host;
  int32_t type = host->register_device("kerr", &ops, const_cast<char*>("kerr"));
  if (type < 0) return 1;
  kiln::sdk::KernelTable table(host, type);
  table.add("neg", neg_fails);
  table.add("abs", kernel<abs_throws>);
  table.add("exp", kernel<exp_index_error>);
  table.add("log", kernel<log_value_error>);
  table.add("sqrt", kernel<sqrt_domain_error>);
  table.add("sin", kernel<sin_type_error>);
  table.add("cos", kernel<cos_not_implemented>);
  table.add("tanh", kernel<tanh_bad_alloc>);
  table.add("sigmoid", sigmoid_out_of_memory);
  table.add("rsqrt", rsqrt_unknown_kind);
  table.add("add", kernel<add_reads_alpha_as_f64>);
  return table.status();
}

}  // extern "C"
