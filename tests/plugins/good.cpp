// A working plugin: device "testdev" (host memory) with one kernel, neg for contiguous float32,
// and CPU fallback for every other operator.
#include "host_device.hpp"

#include <stdexcept>

namespace {

void neg_f32(const kiln::sdk::Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  if (x.dtype != KILN_F32 || !kiln::sdk::is_contiguous(x) || !kiln::sdk::is_contiguous(out)) {
    throw kiln::sdk::not_implemented("testdev's neg takes contiguous float32");
  }
  const float* in = static_cast<const float*>(x.data);
  float* o = static_cast<float*>(out.data);
  for (int64_t i = 0, n = kiln::sdk::numel(out); i < n; ++i) o[i] = -in[i];
}

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),     KILN_ABI_MAJOR, KILN_ABI_MINOR, "good", "1.2.3",
      "test device with one kernel"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/1);
  kiln::sdk::host() = host;
  int32_t type = host->register_device("testdev", &ops, const_cast<char*>("testdev"));
  if (type < 0) return 1;
  return host->register_kernel("neg", type, kiln::sdk::kernel<neg_f32>, nullptr);
}

}  // extern "C"
