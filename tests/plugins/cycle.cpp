// A device "cycle" (host memory, CPU fallback) with one kernel, neg for float32, that the loader
// test loads and unloads many times (under AddressSanitizer in the sanitizer build). It keeps a
// heap object alive while loaded and frees it when its library is closed, so a leak or a use of
// the plugin after its unload shows there.
#include "host_device.hpp"

#include <memory>
#include <stdexcept>
#include <string>

namespace {

// Allocated on load, freed by the library's static destructor at unload.
std::unique_ptr<std::string> g_state;

void neg_f32(const kiln::sdk::Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& out = call.output(0);
  if (x.dtype != KILN_F32) throw kiln::sdk::not_implemented("cycle's neg: float32");
  kiln::sdk::StridedLoop<2> loop({&out, &x});
  loop.run(0, loop.numel(), [&](char** p, const int64_t* step, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<float*>(p[0] + i * step[0]) =
          -*reinterpret_cast<float*>(p[1] + i * step[1]);
    }
  });
  if (!g_state || g_state->empty()) throw std::logic_error("cycle: used while not initialised");
}

}  // namespace

extern "C" {

const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),          KILN_ABI_MAJOR, KILN_ABI_MINOR, "cycle", "0.1.0",
      "loaded and unloaded by the tests"};
  return &info;
}

int32_t kiln_plugin_probe(const kiln_host* /*host*/) { return 1; }

kiln_status kiln_plugin_init(const kiln_host* host) {
  static const kiln_device_ops ops = kiln_test::host_device_ops(/*cpu_fallback=*/1);
  kiln::sdk::host() = host;
  g_state = std::make_unique<std::string>("initialised");
  int32_t type = host->register_device("cycle", &ops, const_cast<char*>("cycle"));
  if (type < 0) return 1;
  return host->register_kernel("neg", type, kiln::sdk::kernel<neg_f32>, nullptr);
}

}  // extern "C"
