// gather and index_select as one kernel: both read x at the output's coordinates with the
// coordinate along `dim` replaced by an index read from an int64 tensor. An index out of range is
// recorded on the device and raised after the launch (which costs a stream synchronize per call).
#include "loops.cuh"

namespace kiln::cuda {
namespace {

using sdk::Call;
using sdk::kernel;

__device__ int g_index_error;
__device__ long long g_bad_index;

// out[p] = x[p with its coordinate along dim = index[p]]; offsets of (out, index, x) at p, where
// x's view has stride 0 along dim and x_dim_stride (bytes) is added per index step.
template <class U>
__global__ void take_kernel(int64_t n, Offsets<3> offsets, char* out, const char* index,
                            const char* x, int64_t x_dim_stride, int64_t dim_size) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += step) {
    const OffsetArray<3> off = offsets.at(p);
    const int64_t i = *reinterpret_cast<const int64_t*>(index + off.v[1]);
    if (i < 0 || i >= dim_size) {
      if (atomicExch(&g_index_error, 1) == 0) g_bad_index = i;
      continue;
    }
    *reinterpret_cast<U*>(out + off.v[0]) =
        *reinterpret_cast<const U*>(x + off.v[2] + i * x_dim_stride);
  }
}

void take(const Call& call, const kiln_tensor& x, const kiln_tensor& index_view, int64_t dim) {
  const kiln_tensor& out = call.output(0);
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  if (x.ndim > kMaxDims) {
    throw sdk::not_implemented("cuda: more than " + std::to_string(kMaxDims) + " dimensions");
  }
  int64_t x_strides[kMaxDims];
  for (int32_t d = 0; d < x.ndim; ++d) x_strides[d] = d == dim ? 0 : x.strides[d];
  kiln_tensor x_view = x;  // x at the output's sizes, constant along dim
  x_view.sizes = out.sizes;
  x_view.strides = x_strides;
  const kiln_tensor* ops[3] = {&out, &index_view, &x_view};
  const int64_t item = static_cast<int64_t>(sdk::dtype_size(x.dtype));
  cudaStream_t stream = stream_of(call);
  auto launch = [&](auto tag) {
    using U = typename decltype(tag)::type;
    take_kernel<U><<<blocks_for(n, 1), kThreads, 0, stream>>>(
        n, Offsets<3>(ops), static_cast<char*>(out.data), static_cast<const char*>(index_view.data),
        static_cast<const char*>(x.data), x.strides[dim] * item, x.sizes[dim]);
  };
  switch (item) {
    case 1: launch(sdk::TypeTag<uint8_t>{}); break;
    case 2: launch(sdk::TypeTag<uint16_t>{}); break;
    case 4: launch(sdk::TypeTag<uint32_t>{}); break;
    default: launch(sdk::TypeTag<uint64_t>{}); break;
  }
  KILN_CUDA_CHECK(cudaGetLastError());
  int error = 0;
  long long bad = 0;
  KILN_CUDA_CHECK(cudaMemcpyFromSymbolAsync(&error, g_index_error, sizeof error, 0,
                                            cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaMemcpyFromSymbolAsync(&bad, g_bad_index, sizeof bad, 0,
                                            cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (error == 0) return;
  const int zero = 0;
  KILN_CUDA_CHECK(cudaMemcpyToSymbolAsync(g_index_error, &zero, sizeof zero, 0,
                                          cudaMemcpyHostToDevice, stream));
  throw std::out_of_range("index " + std::to_string(bad) + " is out of bounds for dimension " +
                          std::to_string(dim) + " with size " + std::to_string(x.sizes[dim]));
}

// gather(x, index; dim): index has the output's sizes.
void gather_kernel(const Call& call) { take(call, call.input(0), call.input(1), call.attr_i64(0)); }

// index_select(x, index; dim): index is 1-D; its view at the output's sizes varies along dim only.
void index_select_kernel(const Call& call) {
  const kiln_tensor& out = call.output(0);
  const kiln_tensor& index = call.input(1);
  const int64_t dim = call.attr_i64(0);
  int64_t strides[kMaxDims];
  if (out.ndim > kMaxDims) {
    throw sdk::not_implemented("cuda: more than " + std::to_string(kMaxDims) + " dimensions");
  }
  for (int32_t d = 0; d < out.ndim; ++d) {
    strides[d] = d == dim && index.ndim > 0 ? index.strides[0] : 0;
  }
  kiln_tensor view = index;
  view.ndim = out.ndim;
  view.sizes = out.sizes;
  view.strides = strides;
  take(call, call.input(0), view, dim);
}

}  // namespace

void register_index(KernelTable& t) {
  t.add("gather", kernel<gather_kernel>);
  t.add("index_select", kernel<index_select_kernel>);
}

}  // namespace kiln::cuda
