// kiln-cuda-bench: the CUDA plugin beside the libraries it stands on, on the same GPU.
//   - matmul float32 (TF32 too when KILN_ALLOW_TF32=1), float16, bfloat16 at 4096 and 8192:
//     TFLOP/s of kiln::mm on cuda:0 and of cublasGemmEx called directly, and their ratio
//     (aim: 95 %);
//   - add on 256M floats: GB/s of `a + b` (12 bytes per element) against cudaMemcpy's
//     device-to-device bandwidth (8 bytes per element) (aim: 85 %).
// Without a usable GPU it prints "no GPU: <reason>" and exits 0.
#include <kiln/kiln.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

// Median seconds of `reps` runs of f, after one warm-up, each ended by a device synchronize.
double median_seconds(const std::function<void()>& f, int reps) {
  f();
  cudaDeviceSynchronize();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    f();
    cudaDeviceSynchronize();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

cudaDataType_t cuda_type(kiln::ScalarType t) {
  return t == kiln::kHalf ? CUDA_R_16F : t == kiln::kBFloat16 ? CUDA_R_16BF : CUDA_R_32F;
}

void matmul(kiln::ScalarType dtype, const char* name, int64_t n, cublasHandle_t handle, bool tf32) {
  kiln::manual_seed(0);
  auto options = kiln::TensorOptions().dtype(dtype).device(kiln::Device("cuda:0"));
  kiln::Tensor a = kiln::randn({n, n}, options), b = kiln::randn({n, n}, options);
  kiln::Tensor c = kiln::empty({n, n}, options);
  const double flop = 2.0 * double(n) * double(n) * double(n);
  const int reps = n >= 8192 ? 5 : 10;
  double t_kiln = median_seconds([&] { kiln::mm(a, b); }, reps);
  const float one = 1, zero = 0;
  cublasComputeType_t compute = dtype == kiln::kFloat && tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                              : CUBLAS_COMPUTE_32F;
  double t_cublas = median_seconds(
      [&] {
        cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, b.data_ptr(),
                     cuda_type(dtype), int(n), a.data_ptr(), cuda_type(dtype), int(n), &zero,
                     c.data_ptr(), cuda_type(dtype), int(n), compute, CUBLAS_GEMM_DEFAULT);
      },
      reps);
  std::printf("matmul %-9s %5lld: kiln %7.1f TFLOP/s, cuBLAS %7.1f TFLOP/s, ratio %5.1f %%\n", name,
              static_cast<long long>(n), flop / t_kiln / 1e12, flop / t_cublas / 1e12,
              100.0 * t_cublas / t_kiln);
}

void add(int64_t n) {
  auto options = kiln::TensorOptions().dtype(kiln::kFloat).device(kiln::Device("cuda:0"));
  kiln::Tensor a = kiln::randn({n}, options), b = kiln::randn({n}, options);
  kiln::Tensor c = kiln::empty({n}, options);
  double t_add = median_seconds([&] { kiln::Tensor r = a + b; }, 10);
  double t_copy = median_seconds(
      [&] {
        cudaMemcpyAsync(c.data_ptr(), a.data_ptr(), n * sizeof(float), cudaMemcpyDeviceToDevice);
      },
      10);
  double add_gbs = 12.0 * double(n) / t_add / 1e9, copy_gbs = 8.0 * double(n) / t_copy / 1e9;
  std::printf("add %lld floats: %.0f GB/s; device-to-device copy %.0f GB/s; ratio %.1f %%\n",
              static_cast<long long>(n), add_gbs, copy_gbs, 100.0 * add_gbs / copy_gbs);
}

}  // namespace

int main() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("no GPU: %s\n", status != cudaSuccess ? cudaGetErrorString(status)
                                                      : "the CUDA driver reports no device");
    return 0;
  }
  kiln::load_plugins();
  if (!kiln::is_available(kiln::device_type_from_name("cuda"))) {
    std::printf("no GPU: the kiln CUDA plugin is not available (kiln-info says why)\n");
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("GPU: %s\n", prop.name);
  cublasHandle_t handle;
  cublasCreate(&handle);
  const char* env = std::getenv("KILN_ALLOW_TF32");
  const bool tf32 = env != nullptr && env[0] == '1';
  for (int64_t n : {4096, 8192}) {
    matmul(kiln::kFloat, tf32 ? "tf32" : "float32", n, handle, tf32);
    matmul(kiln::kHalf, "float16", n, handle, false);
    matmul(kiln::kBFloat16, "bfloat16", n, handle, false);
  }
  add(int64_t{256} << 20);
  cublasDestroy(handle);
  return 0;
}
