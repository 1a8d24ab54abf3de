// mm and bmm: float32, float16, bfloat16 and float64 on cuBLAS (cublasGemmEx and its strided
// batched form, float32 accumulation for the 16-bit floats, on tensor cores), the integer dtypes
// on a plain kernel. TF32 for float32 only when the user allows it: KILN_ALLOW_TF32=1 in the
// environment, as PyTorch's torch.backends.cuda.matmul.allow_tf32 (off by default there too).
#include "loops.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace kiln::cuda {
namespace {

using sdk::Call;
using sdk::kernel;

#define KILN_CUBLAS_CHECK(expr) check_cublas((expr), #expr)
void check_cublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::string message = std::string("cuBLAS error ") + cublasGetStatusName(status) + " (" +
                        cublasGetStatusString(status) + ") in " + what;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw sdk::out_of_memory(message);
  throw std::runtime_error(message);
}

bool allow_tf32() {
  static const bool allowed = [] {
    const char* env = std::getenv("KILN_ALLOW_TF32");
    return env != nullptr && env[0] == '1';
  }();
  return allowed;
}

// One handle per thread and device (a handle must not be used by two threads at once), bound
// to the thread's current stream before each call.
cublasHandle_t handle(int32_t device, cudaStream_t stream) {
  struct Handles {
    cublasHandle_t h[64] = {};
    ~Handles() {
      for (cublasHandle_t x : h) {
        if (x != nullptr) cublasDestroy(x);
      }
    }
  };
  thread_local Handles handles;
  if (device < 0 || device >= 64) throw std::invalid_argument("cuda: device index out of range");
  if (handles.h[device] == nullptr) KILN_CUBLAS_CHECK(cublasCreate(&handles.h[device]));
  KILN_CUBLAS_CHECK(cublasSetStream(handles.h[device], stream));
  return handles.h[device];
}

// How cuBLAS (column-major) sees a row-major operand [rows, cols] with strides (s0, s1).
struct Operand {
  const void* data;
  cublasOperation_t op;
  int64_t ld;
  bool usable;
};

Operand as_operand(const void* data, int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if ((cols == 1 || s1 == 1) && (rows == 1 || s0 >= cols)) {
    return {data, CUBLAS_OP_N, std::max<int64_t>({rows == 1 ? cols : s0, cols, 1}), true};
  }
  if ((rows == 1 || s0 == 1) && (cols == 1 || s1 >= rows)) {  // a transposed view
    return {data, CUBLAS_OP_T, std::max<int64_t>({cols == 1 ? rows : s1, rows, 1}), true};
  }
  return {data, CUBLAS_OP_N, 0, false};
}

template <class T>
struct CublasType;
template <>
struct CublasType<float> {
  static constexpr cudaDataType_t value = CUDA_R_32F;
};
template <>
struct CublasType<double> {
  static constexpr cudaDataType_t value = CUDA_R_64F;
};
template <>
struct CublasType<half> {
  static constexpr cudaDataType_t value = CUDA_R_16F;
};
template <>
struct CublasType<bf16> {
  static constexpr cudaDataType_t value = CUDA_R_16BF;
};

// c[b] = a[b] @ b[b] for b < batch (integers), one thread per output element.
template <class T>
__global__ void mm_plain_kernel(int64_t batch, int64_t m, int64_t n, int64_t k, const T* a,
                                int64_t as0, int64_t as1, int64_t as2, const T* b, int64_t bs0,
                                int64_t bs1, int64_t bs2, T* c, int64_t cs0, int64_t cs1,
                                int64_t cs2) {
  using W = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;  // wraps
  const int64_t total = batch * m * n, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += step) {
    const int64_t j = idx % n, i = idx / n % m, p = idx / (m * n);
    W acc = 0;
    for (int64_t l = 0; l < k; ++l) {
      acc += W(a[p * as0 + i * as1 + l * as2]) * W(b[p * bs0 + l * bs1 + j * bs2]);
    }
    c[p * cs0 + i * cs1 + j * cs2] = T(acc);
  }
}

template <class T>
struct Zero {
  __device__ T operator()() const { return from_acc<T>(0.0f); }
};

// A batch of products; 2-D operands are a batch of one with batch stride 0.
struct Gemm {
  int64_t batch, m, n, k;
  const kiln_tensor *a, *b, *c;
  int64_t as[3], bs[3], cs[3];
};

Gemm gemm_of(const Call& call) {
  Gemm g{};
  g.a = &call.input(0);
  g.b = &call.input(1);
  g.c = &call.output(0);
  const int off = g.a->ndim == 3 ? 1 : 0;
  g.batch = off ? g.a->sizes[0] : 1;
  g.m = g.a->sizes[off];
  g.k = g.a->sizes[off + 1];
  g.n = g.b->sizes[off + 1];
  const kiln_tensor* t[3] = {g.a, g.b, g.c};
  int64_t* s[3] = {g.as, g.bs, g.cs};
  for (int x = 0; x < 3; ++x) {
    s[x][0] = off ? t[x]->strides[0] : 0;
    s[x][1] = t[x]->strides[off];
    s[x][2] = t[x]->strides[off + 1];
  }
  return g;
}

template <class T>
void gemm_cublas(const Call& call, const Gemm& g) {
  const int32_t device = g.c->device.index;
  cudaStream_t stream = stream_of(call);
  const size_t item = sizeof(T);
  // The output: contiguous row-major, or a temporary copied into it at the end.
  const bool c_direct = g.cs[2] == 1 && g.cs[1] == g.n && (g.batch == 1 || g.cs[0] == g.m * g.n);
  std::unique_ptr<DeviceBuffer> c_tmp, a_tmp, b_tmp;
  void* c_data = g.c->data;
  if (!c_direct) {
    c_tmp = std::make_unique<DeviceBuffer>(device, item * g.batch * g.m * g.n);
    c_data = c_tmp->get();
  }
  // An input cuBLAS cannot read as it is: a contiguous copy.
  auto operand = [&](const kiln_tensor& t, const int64_t* s, int64_t rows, int64_t cols,
                     std::unique_ptr<DeviceBuffer>& tmp, int64_t& batch_stride) {
    Operand o = as_operand(t.data, rows, cols, s[1], s[2]);
    batch_stride = s[0];
    if (o.usable) return o;
    tmp = std::make_unique<DeviceBuffer>(device, item * g.batch * rows * cols);
    int64_t strides[3];
    kiln_tensor c = t;
    int64_t expected = 1;
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      strides[d] = expected;
      expected *= t.sizes[d];
    }
    c.data = tmp->get();
    c.strides = strides;
    copy_convert(c, t, stream);
    batch_stride = rows * cols;
    return as_operand(tmp->get(), rows, cols, cols, 1);
  };
  int64_t sa = 0, sb = 0;
  Operand a = operand(*g.a, g.as, g.m, g.k, a_tmp, sa);
  Operand b = operand(*g.b, g.bs, g.k, g.n, b_tmp, sb);
  if (g.batch == 1) sa = sb = 0;
  cublasHandle_t h = handle(device, stream);
  const cudaDataType_t type = CublasType<T>::value;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (std::is_same_v<T, double>) compute = CUBLAS_COMPUTE_64F;
  if (std::is_same_v<T, float> && allow_tf32()) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const void* alpha = std::is_same_v<T, double> ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = std::is_same_v<T, double> ? static_cast<const void*>(&zero_d) : &zero_f;
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (B, A) and n x m.
  KILN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, b.op, a.op, static_cast<int>(g.n), static_cast<int>(g.m), static_cast<int>(g.k), alpha,
      b.data, type, b.ld, sb, a.data, type, a.ld, sa, beta, c_data, type, g.n, g.m * g.n,
      static_cast<int>(g.batch), compute, CUBLAS_GEMM_DEFAULT));
  if (!c_direct) {
    int64_t strides[3];
    kiln_tensor c = *g.c;
    int64_t expected = 1;
    for (int32_t d = c.ndim - 1; d >= 0; --d) {
      strides[d] = expected;
      expected *= c.sizes[d];
    }
    c.data = c_data;
    c.strides = strides;
    copy_convert(*g.c, c, stream);
  }
}

void mm_kernel(const Call& call) {
  const Gemm g = gemm_of(call);
  if (g.batch * g.m * g.n == 0) return;
  visit_dtype(g.c->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      if (g.k == 0) {  // cuBLAS leaves C alone for k = 0: the product of empty sums is zero
        map<T>(stream_of(call), Zero<T>{}, *g.c);
        return;
      }
      gemm_cublas<T>(call, g);
    } else if constexpr (std::is_same_v<T, bool>) {
      throw sdk::type_error(std::string(call.op()) + " on cuda does not take bool");
    } else {
      const int64_t total = g.batch * g.m * g.n;
      mm_plain_kernel<T><<<blocks_for(total, 1), kThreads, 0, stream_of(call)>>>(
          g.batch, g.m, g.n, g.k, static_cast<const T*>(g.a->data), g.as[0], g.as[1], g.as[2],
          static_cast<const T*>(g.b->data), g.bs[0], g.bs[1], g.bs[2], static_cast<T*>(g.c->data),
          g.cs[0], g.cs[1], g.cs[2]);
      KILN_CUDA_CHECK(cudaGetLastError());
    }
  });
}

}  // namespace

void register_matmul(KernelTable& t) {
  t.add("mm", kernel<mm_kernel>);
  t.add("bmm", kernel<mm_kernel>);
}

}  // namespace kiln::cuda
