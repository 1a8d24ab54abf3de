// kiln's CUDA plugin (kiln_cuda.so): the "cuda" device, a caching allocator and kernels written
// as functors over a few generic loops (unary.cu, binary.cu, elementwise.cu, reduce.cu,
// random.cu) and on cuBLAS (matmul.cu). It uses only the SDK and links the CUDA runtime and cuBLAS
// dynamically, never the driver library (libcuda): the runtime opens the driver lazily, so the
// plugin loads on a machine without one, and its probe reports the runtime's reason.
#include "cuda_plugin.hpp"

#include <kiln/sdk/host.hpp>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <string>

namespace {

std::string version_text(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// Empty when a device can be used; otherwise why not, in the runtime's words.
std::string unavailable_reason() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear it, so that later calls start clean
    std::string reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" +
                         cudaGetErrorString(status) + "); CUDA runtime " + version_text(runtime);
    reason += driver == 0 ? ", no CUDA driver (libcuda.so.1) found"
                          : ", driver supports CUDA " + version_text(driver);
    return reason;
  }
  if (count == 0) return "the CUDA driver reports no GPU";
  return {};
}

}  // namespace

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),
      KILN_ABI_MAJOR,
      KILN_ABI_MINOR,
      "cuda",
      "0.1.0",
      "CUDA device (built with CUDA " KILN_CUDA_TOOLKIT_VERSION "): caching allocator, "
      "elementwise/reduction/random kernels, matrix products on cuBLAS"};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host) {
  kiln::sdk::host() = host;
  std::string reason = unavailable_reason();
  if (reason.empty()) return 1;
  host->set_error(reason.c_str());
  return 0;
}

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  namespace cuda = kiln::cuda;
  kiln::sdk::host() = host;
  try {
    int32_t type = host->register_device("cuda", cuda::device_ops(), nullptr);
    if (type < 0) return 1;  // the host has set the error
    cuda::KernelTable table(host, type);
    cuda::register_elementwise(table);
    cuda::register_unary(table);
    cuda::register_binary(table);
    cuda::register_compare(table);
    cuda::register_reduce(table);
    cuda::register_random(table);
    cuda::register_index(table);
    cuda::register_matmul(table);
    cuda::register_resample(table);
    cuda::register_sort(table);
    cuda::register_scan(table);
    cuda::register_fused_pointwise(table);
    if (table.status() != 0) return table.status();
    kiln::sdk::log(KILN_LOG_DEBUG,
                   "cuda: registered " + std::to_string(table.count()) + " kernels");
    return 0;
  } catch (const std::exception& e) {
    host->set_error(e.what());
    return 1;
  }
}

}  // extern "C"
