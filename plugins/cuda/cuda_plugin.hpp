// What the CUDA plugin's files share on the host side: error checks, the current stream, the
// caching allocator (allocator.cpp) and the kernel families' register functions.
#pragma once

#include <kiln/sdk/host.hpp>
#include <kiln/sdk/kernel_table.hpp>
#include <kiln/sdk/plugin.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace kiln::cuda {

// Throws std::runtime_error (sdk::out_of_memory for cudaErrorMemoryAllocation) naming the call
// and the runtime's message; kernel entry points turn it into host->set_error_kind
// (kiln::sdk::kernel).
#define KILN_CUDA_CHECK(expr) ::kiln::cuda::check_cuda((expr), #expr, __FILE__, __LINE__)
inline void check_cuda(cudaError_t status, const char* what, const char* file, int line) {
  if (status == cudaSuccess) return;
  std::string message = std::string("CUDA error ") + cudaGetErrorName(status) + " (" +
                        cudaGetErrorString(status) + ") in " + what + " at " + file + ":" +
                        std::to_string(line);
  if (status == cudaErrorMemoryAllocation) throw sdk::out_of_memory(message);
  throw std::runtime_error(message);
}

// The stream kernels of this thread run on for device `index`. Each thread has its own slot per
// device; it starts as the legacy default stream, which orders work across threads as PyTorch's
// default does (no ABI entry lets a user pick another stream yet).
cudaStream_t current_stream(int32_t index);
// The device of a tensor made current on this thread (cudaSetDevice when it changes).
void set_device(int32_t index);
int32_t device_count();

// Caching allocator (allocator.cpp). See Note [CUDA caching allocator].
void* allocate(int32_t device, size_t bytes);
void deallocate(int32_t device, void* ptr);
struct AllocatorStats {
  size_t allocated = 0, reserved = 0, peak = 0;  // bytes, of this device
};
AllocatorStats allocator_stats(int32_t device);
void empty_cache(int32_t device);  // gives every cached block of the device back to CUDA

// A device buffer from the caching allocator, freed at scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer(int32_t device, size_t bytes) : device_(device), ptr_(allocate(device, bytes)) {
    if (ptr_ == nullptr) throw sdk::out_of_memory("out of memory for a temporary buffer");
  }
  ~DeviceBuffer() { deallocate(device_, ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  int32_t device_;
  void* ptr_;
};

// Copies src into dst on the device: same sizes, any dtypes (converting as copy_ does), any
// strides (elementwise.cu). Both are device memory of the same device.
void copy_convert(const kiln_tensor& dst, const kiln_tensor& src, cudaStream_t stream);

using KernelTable = sdk::KernelTable;  // kiln/sdk/kernel_table.hpp

const kiln_device_ops* device_ops();            // device.cpp
void register_elementwise(KernelTable& table);  // elementwise.cu
void register_unary(KernelTable& table);        // unary.cu
void register_binary(KernelTable& table);       // binary.cu
void register_compare(KernelTable& table);      // binary.cu
void register_reduce(KernelTable& table);       // reduce.cu
void register_random(KernelTable& table);       // random.cu
void register_index(KernelTable& table);        // index.cu
void register_matmul(KernelTable& table);       // matmul.cu
void register_resample(KernelTable& table);     // resample.cu
void register_sort(KernelTable& table);         // sort.cu
void register_scan(KernelTable& table);         // scan.cu
// fused_pointwise.cu
void register_fused_pointwise(KernelTable& table);

}  // namespace kiln::cuda
