// The "cuda" device type: cuda:0 ... cuda:N-1, memory from the caching allocator, copies between
// host and device and within a device, pinned host memory for the DataLoader.
#include "cuda_plugin.hpp"

#include <kiln/sdk/kernel.hpp>

#include <cstdio>
#include <string>

namespace kiln::cuda {
namespace {

constexpr int kMaxDevices = 64;

thread_local int t_device = -1;
thread_local cudaStream_t t_streams[kMaxDevices] = {};  // nullptr: the legacy default stream

int32_t count(void*) { return device_count(); }

void describe(void*, int32_t index, char* buf, size_t len) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(buf, len, "cuda:%d: cudaGetDeviceProperties failed", index);
    return;
  }
  AllocatorStats s = allocator_stats(index);
  std::snprintf(buf, len,
                "%s; %.1f GiB; compute capability %d.%d; %d SMs; allocator: %.1f MiB allocated, "
                "%.1f MiB reserved, %.1f MiB peak",
                prop.name, static_cast<double>(prop.totalGlobalMem) / (1 << 30), prop.major,
                prop.minor, prop.multiProcessorCount, static_cast<double>(s.allocated) / (1 << 20),
                static_cast<double>(s.reserved) / (1 << 20),
                static_cast<double>(s.peak) / (1 << 20));
}

void* alloc(void*, int32_t index, size_t bytes) { return allocate(index, bytes); }
void free_(void*, int32_t index, void* ptr) { deallocate(index, ptr); }

size_t nbytes(const kiln_tensor& t) { return sdk::numel(t) * sdk::dtype_size(t.dtype); }

// The host side of a copy may come without strides (it is always contiguous).
bool contiguous(const kiln_tensor& t) { return t.strides == nullptr || sdk::is_contiguous(t); }

bool is_pinned(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

// A contiguous twin of `t` whose data lives in `data`.
kiln_tensor contiguous_like(const kiln_tensor& t, void* data, int64_t* strides) {
  kiln_tensor c = t;
  int64_t expected = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    strides[d] = expected;
    expected *= t.sizes[d];
  }
  c.data = data;
  c.strides = strides;
  return c;
}

kiln_status copy(void*, const kiln_tensor* dst, const kiln_tensor* src) {
  try {
    bool same = dst->dtype == src->dtype && dst->ndim == src->ndim;
    for (int32_t d = 0; same && d < dst->ndim; ++d) same = dst->sizes[d] == src->sizes[d];
    if (!same) throw std::invalid_argument("cuda copy: dtypes and sizes of both sides must match");
    if (dst->ndim > 16) throw sdk::not_implemented("cuda copy: more than 16 dimensions");
    const size_t bytes = nbytes(*dst);
    if (bytes == 0) return 0;
    const bool to_host = dst->device.type == KILN_DEVICE_HOST;
    const bool from_host = src->device.type == KILN_DEVICE_HOST;
    const kiln_tensor& dev = to_host ? *src : *dst;  // the device side
    set_device(dev.device.index);
    cudaStream_t stream = current_stream(dev.device.index);
    int64_t strides[16];
    if (!to_host && !from_host) {
      if (sdk::is_contiguous(*dst) && sdk::is_contiguous(*src)) {
        KILN_CUDA_CHECK(cudaMemcpyAsync(dst->data, src->data, bytes, cudaMemcpyDeviceToDevice,
                                        stream));
      } else {
        copy_convert(*dst, *src, stream);
      }
      return 0;
    }
    if (from_host) {
      if (contiguous(*dst)) {
        // From pinned memory the copy stays asynchronous: the caller must leave the buffer alone
        // until the stream reaches the copy (as with PyTorch's non_blocking copies). From
        // pageable memory, wait, so the caller may reuse its buffer at once.
        KILN_CUDA_CHECK(cudaMemcpyAsync(dst->data, src->data, bytes, cudaMemcpyHostToDevice,
                                        stream));
        if (!is_pinned(src->data)) KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
      } else {
        DeviceBuffer tmp(dev.device.index, bytes);
        KILN_CUDA_CHECK(cudaMemcpyAsync(tmp.get(), src->data, bytes, cudaMemcpyHostToDevice,
                                        stream));
        copy_convert(*dst, contiguous_like(*dst, tmp.get(), strides), stream);
        KILN_CUDA_CHECK(cudaStreamSynchronize(stream));  // before tmp goes back to the cache
      }
      return 0;
    }
    // to the host: the caller reads the bytes as soon as copy returns
    if (contiguous(*src)) {
      KILN_CUDA_CHECK(cudaMemcpyAsync(dst->data, src->data, bytes, cudaMemcpyDeviceToHost, stream));
    } else {
      DeviceBuffer tmp(dev.device.index, bytes);
      copy_convert(contiguous_like(*src, tmp.get(), strides), *src, stream);
      KILN_CUDA_CHECK(cudaMemcpyAsync(dst->data, tmp.get(), bytes, cudaMemcpyDeviceToHost, stream));
      KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
      return 0;
    }
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
    return 0;
  } catch (...) {
    sdk::report_exception();
    return 1;
  }
}

kiln_status synchronize(void*, int32_t index) {
  try {
    set_device(index);
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    return 0;
  } catch (...) {
    sdk::report_exception();
    return 1;
  }
}

void* host_alloc(void*, size_t bytes) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocDefault) != cudaSuccess) {
    cudaGetLastError();
    sdk::set_error("cuda: cannot allocate " + std::to_string(bytes) + " bytes of pinned memory");
    return nullptr;
  }
  return p;
}

void host_free(void*, void* ptr) { cudaFreeHost(ptr); }

}  // namespace

int32_t device_count() {
  static const int32_t n = [] {
    int c = 0;
    if (cudaGetDeviceCount(&c) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return c < kMaxDevices ? c : kMaxDevices;
  }();
  return n;
}

void set_device(int32_t index) {
  if (t_device == index) return;
  KILN_CUDA_CHECK(cudaSetDevice(index));
  t_device = index;
}

cudaStream_t current_stream(int32_t index) {
  return index >= 0 && index < kMaxDevices ? t_streams[index] : nullptr;
}

const kiln_device_ops* device_ops() {
  static const kiln_device_ops ops = [] {
    kiln_device_ops o{};
    o.struct_size = sizeof(kiln_device_ops);
    o.count = count;
    o.describe = describe;
    o.alloc = alloc;
    o.free = free_;
    o.copy = copy;
    o.synchronize = synchronize;
    o.host_accessible = 0;
    o.autocast_dtype = KILN_F16;
    o.cpu_fallback = 1;  // primitives without a CUDA kernel yet run on the CPU (with a warning)
    o.priority = 10;     // above the CPU's 0: default_device() picks a GPU when there is one
    o.host_alloc = host_alloc;
    o.host_free = host_free;
    return o;
  }();
  return &ops;
}

}  // namespace kiln::cuda
