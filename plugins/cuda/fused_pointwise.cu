// fused_pointwise on CUDA: an interpreter kernel for kiln/sdk/pointwise_program.hpp's programs.
// One thread per element (grid-stride): it loads each input (any dtype, any strides, broadcast
// dimensions at stride 0) into a register in the compute type, runs the steps with the sdk
// functors the unfused kernels use (visit_step), rounds each step to its dtype, and stores the
// outputs. The program and the operands' offsets travel in one device buffer per call, allocated
// and freed on the call's stream. Built and checked for compilation only here (no GPU on the
// build machine): the CPU plugin's tests cover the program's semantics.
#include "loops.cuh"

#include <kiln/sdk/pointwise_program.hpp>

#include <cstring>
#include <vector>

namespace kiln::cuda {
namespace {

namespace pg = sdk::program;
using sdk::Call;
using sdk::kernel;

constexpr int kMaxRegisters = 64;  // per-thread registers (local memory past what fits)

struct Header {
  int32_t n_in, n_out, n_steps, n_constants;
  int32_t in_dtype[pg::kMaxInputs];
  int32_t out_dtype[pg::kMaxOutputs];
  char* in_ptr[pg::kMaxInputs];
  char* out_ptr[pg::kMaxOutputs];
  Offsets<1> in[pg::kMaxInputs];
  Offsets<1> out[pg::kMaxOutputs];
};

template <class C>
__device__ C load_as(int32_t dtype, const char* p) {
  switch (dtype) {
    case KILN_BOOL: return static_cast<C>(*reinterpret_cast<const bool*>(p));
    case KILN_U8: return static_cast<C>(*reinterpret_cast<const uint8_t*>(p));
    case KILN_I8: return static_cast<C>(*reinterpret_cast<const int8_t*>(p));
    case KILN_I16: return static_cast<C>(*reinterpret_cast<const int16_t*>(p));
    case KILN_I32: return static_cast<C>(*reinterpret_cast<const int32_t*>(p));
    case KILN_I64: return static_cast<C>(*reinterpret_cast<const int64_t*>(p));
    case KILN_F16: return static_cast<C>(__half2float(*reinterpret_cast<const half*>(p)));
    case KILN_BF16: return static_cast<C>(__bfloat162float(*reinterpret_cast<const bf16*>(p)));
    case KILN_F32: return static_cast<C>(*reinterpret_cast<const float*>(p));
    default: return static_cast<C>(*reinterpret_cast<const double*>(p));
  }
}

template <class C>
__device__ void store_as(int32_t dtype, char* p, C x) {
  switch (dtype) {
    case KILN_BOOL: *reinterpret_cast<bool*>(p) = x != C(0); break;
    case KILN_U8: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(x); break;
    case KILN_I8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(x); break;
    case KILN_I16: *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(x); break;
    case KILN_I32: *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(x); break;
    case KILN_I64: *reinterpret_cast<int64_t*>(p) = static_cast<int64_t>(x); break;
    case KILN_F16: *reinterpret_cast<half*>(p) = __float2half_rn(static_cast<float>(x)); break;
    case KILN_BF16: *reinterpret_cast<bf16*>(p) = __float2bfloat16_rn(static_cast<float>(x)); break;
    case KILN_F32: *reinterpret_cast<float*>(p) = static_cast<float>(x); break;
    default: *reinterpret_cast<double*>(p) = static_cast<double>(x); break;
  }
}

// pg::narrow with the device's 16-bit conversions.
template <class C>
__device__ C narrow_on_device(int32_t dtype, C x) {
  if constexpr (std::is_floating_point_v<C>) {
    if (dtype == KILN_F16)
      return static_cast<C>(__half2float(__float2half_rn(static_cast<float>(x))));
    if (dtype == KILN_BF16) {
      return static_cast<C>(__bfloat162float(__float2bfloat16_rn(static_cast<float>(x))));
    }
    if (dtype == KILN_F32) return static_cast<C>(static_cast<float>(x));
    if (dtype == KILN_BOOL) return x != C(0) ? C(1) : C(0);
    return x;
  } else {
    switch (dtype) {
      case KILN_BOOL: return x != C(0) ? C(1) : C(0);
      case KILN_U8: return static_cast<C>(static_cast<uint8_t>(x));
      case KILN_I8: return static_cast<C>(static_cast<int8_t>(x));
      case KILN_I16: return static_cast<C>(static_cast<int16_t>(x));
      case KILN_I32: return static_cast<C>(static_cast<int32_t>(x));
      default: return x;
    }
  }
}

template <class C>
__global__ void program_kernel(int64_t n, const Header* h, const int32_t* steps,
                               const C* constants) {
  C regs[kMaxRegisters];
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
#pragma unroll 1
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    for (int k = 0; k < h->n_in; ++k) {
      regs[k] = load_as<C>(h->in_dtype[k], h->in_ptr[k] + h->in[k].at(i).v[0]);
    }
    for (int s = 0; s < h->n_steps; ++s) {
      const int32_t* st = steps + s * pg::kStepFields;
      const int32_t op = st[0];
      C r = C(0);
      if (op == pg::CONST) {
        r = constants[st[2]];
      } else {
        const C a = regs[st[2]];
        const C b = st[3] >= 0 ? regs[st[3]] : a;
        const C c = st[4] >= 0 ? regs[st[4]] : a;
        pg::visit_step<C>(op, [&](auto f) { r = f(a, b, c); });
      }
      regs[h->n_in + s] = narrow_on_device<C>(st[1], r);
    }
    for (int o = 0; o < h->n_out; ++o) {
      // the register of output o is stored after the steps, in the slot past the constants
      const int32_t reg = steps[h->n_steps * pg::kStepFields + o];
      store_as<C>(h->out_dtype[o], h->out_ptr[o] + h->out[o].at(i).v[0], regs[reg]);
    }
  }
}

template <class C>
void launch(const Call& call, const pg::Program& p, int64_t numel) {
  if (p.n_registers() > kMaxRegisters) {
    throw sdk::not_implemented("fused_pointwise on cuda: the program has " +
                               std::to_string(p.n_registers()) + " registers (at most " +
                               std::to_string(kMaxRegisters) + ")");
  }
  Header h{};
  h.n_in = static_cast<int32_t>(p.n_inputs);
  h.n_out = static_cast<int32_t>(p.n_outputs);
  h.n_steps = static_cast<int32_t>(p.n_steps);
  h.n_constants = static_cast<int32_t>(p.n_constants);
  for (int32_t k = 0; k < h.n_in; ++k) {
    const kiln_tensor* t = &call.input(k);
    h.in_dtype[k] = t->dtype;
    h.in_ptr[k] = static_cast<char*>(t->data);
    h.in[k] = Offsets<1>({t});
  }
  for (int32_t k = 0; k < h.n_out; ++k) {
    const kiln_tensor* t = &call.output(k);
    h.out_dtype[k] = t->dtype;
    h.out_ptr[k] = static_cast<char*>(t->data);
    h.out[k] = Offsets<1>({t});
  }
  // one buffer: the header, the steps and output registers (int32), the constants (C)
  std::vector<int32_t> ints;
  for (int64_t k = 0; k < p.n_steps * pg::kStepFields; ++k) {
    ints.push_back(static_cast<int32_t>(p.steps[k]));
  }
  for (int64_t o = 0; o < p.n_outputs; ++o) ints.push_back(static_cast<int32_t>(p.outputs[o]));
  std::vector<C> consts;
  for (int64_t k = 0; k < p.n_constants; ++k) consts.push_back(pg::constant<C>(p, k));
  const size_t ints_at = (sizeof(Header) + 15) / 16 * 16;
  const size_t consts_at = (ints_at + ints.size() * sizeof(int32_t) + 15) / 16 * 16;
  const size_t bytes = consts_at + consts.size() * sizeof(C);
  std::vector<char> host(bytes);
  std::memcpy(host.data(), &h, sizeof h);
  std::memcpy(host.data() + ints_at, ints.data(), ints.size() * sizeof(int32_t));
  if (!consts.empty())
    std::memcpy(host.data() + consts_at, consts.data(), consts.size() * sizeof(C));
  cudaStream_t stream = current_stream(call.output(0).device.index);
  char* dev = nullptr;
  KILN_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&dev), bytes, stream));
  KILN_CUDA_CHECK(cudaMemcpyAsync(dev, host.data(), bytes, cudaMemcpyHostToDevice, stream));
  program_kernel<C><<<blocks_for(numel, 1), kThreads, 0, stream>>>(
      numel, reinterpret_cast<const Header*>(dev), reinterpret_cast<const int32_t*>(dev + ints_at),
      reinterpret_cast<const C*>(dev + consts_at));
  KILN_CUDA_CHECK(cudaGetLastError());
  KILN_CUDA_CHECK(cudaFreeAsync(dev, stream));
  // the host buffer may go: cudaMemcpyAsync from pageable memory returns after staging it
}

void fused_pointwise_kernel(const Call& call) {
  const pg::Program p = pg::read(call);
  const int64_t numel = sdk::numel(call.output(0));
  if (numel == 0) return;
  switch (p.compute) {
    case KILN_F32: launch<float>(call, p, numel); break;
    case KILN_F64: launch<double>(call, p, numel); break;
    default: launch<int64_t>(call, p, numel); break;
  }
}

}  // namespace

void register_fused_pointwise(KernelTable& table) {
  table.add("fused_pointwise", kernel<fused_pointwise_kernel>);
}

}  // namespace kiln::cuda
