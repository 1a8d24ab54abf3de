// kiln's CPU plugin: the "cpu" device and a kernel for every primitive operator
// (docs/primitives.md), on oneDNN (matrix products) and oneTBB (everything else, in parallel).
// Uses only the SDK headers; the families of kernels live in one file each (registry.hpp).
#include "registry.hpp"

#include <kiln/sdk/kernel.hpp>

#include <oneapi/dnnl/dnnl_version.h>
#include <oneapi/tbb/version.h>
#ifdef KILN_SANITIZE_THREAD
#include <oneapi/tbb/global_control.h>
#endif

#define KILN_CPU_STRING2(x) #x
#define KILN_CPU_STRING(x) KILN_CPU_STRING2(x)
#define KILN_CPU_ONEDNN_VERSION       \
  KILN_CPU_STRING(DNNL_VERSION_MAJOR) \
  "." KILN_CPU_STRING(DNNL_VERSION_MINOR) "." KILN_CPU_STRING(DNNL_VERSION_PATCH)

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),
      KILN_ABI_MAJOR,
      KILN_ABI_MINOR,
      "cpu",
      "0.1.0",
      "CPU device: matrix products on oneDNN " KILN_CPU_ONEDNN_VERSION
      ", elementwise operators and reductions on oneTBB " TBB_VERSION_STRING};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host) {
  kiln::sdk::host() = host;
  return 1;  // baseline x86-64 is all the plugin needs; oneDNN picks its ISA at run time
}

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  namespace cpu = kiln::cpu;
  kiln::sdk::host() = host;
  try {
#ifdef KILN_SANITIZE_THREAD
    // ThreadSanitizer sees none of the synchronization inside the uninstrumented libtbb, so
    // every parallel kernel would report: a TSan build runs the kernels on the calling thread.
    static tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
#endif
    int32_t type = host->register_device("cpu", cpu::device_ops(), nullptr);
    if (type < 0) return 1;  // the host has set the error
    cpu::KernelTable table(host, type);
    cpu::register_copy_fill(table);
    cpu::register_unary(table);
    cpu::register_binary(table);
    cpu::register_compare(table);
    cpu::register_ternary(table);
    cpu::register_reduce(table);
    cpu::register_reduce_arg(table);
    cpu::register_index(table);
    cpu::register_matmul(table);
    cpu::register_random(table);
    cpu::register_conv(table);
    cpu::register_scatter(table);
    cpu::register_norm(table);
    cpu::register_scan(table);
    cpu::register_resample(table);
    cpu::register_pool(table);
    cpu::register_attention(table);
    cpu::register_sort(table);
    cpu::register_softmax(table);
    cpu::register_fused_pointwise(table);
    if (table.status() != 0) return table.status();  // the host has set the error
    kiln::sdk::log(KILN_LOG_DEBUG, "cpu: registered " + std::to_string(table.count()) + " kernels");
    return 0;
  } catch (...) {
    kiln::sdk::report_exception();
    return 1;
  }
}

}  // extern "C"
