// uniform_, normal_, random_ on Philox: element i (row-major in the output's sizes) draws
// kiln::sdk::philox4x32(seed, offset + i), the very function the CPU plugin calls, so a seed gives
// the same numbers on both devices. See Note [Random numbers are a function of (seed, offset,
// index)] in kiln/sdk/philox.hpp; the conversions below follow plugins/cpu/random.cpp.
#include "loops.cuh"

#include <kiln/sdk/philox.hpp>

namespace kiln::cuda {
namespace {

using sdk::Call;
using sdk::kernel;

template <class T, class F>
__global__ void generate_kernel(int64_t n, Offsets<1> offsets, char* out, uint64_t seed,
                                uint64_t offset, F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    std::array<uint32_t, 4> w = sdk::philox4x32(seed, offset + static_cast<uint64_t>(i));
    const OffsetArray<1> off = offsets.at(i);
    *reinterpret_cast<T*>(out + off.v[0]) = f(w);
  }
}

template <class T, class F>
void generate(const Call& call, F f) {
  const kiln_tensor& out = call.output(0);
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  const kiln_tensor* ops[1] = {&out};
  generate_kernel<T><<<blocks_for(n, 1), kThreads, 0, stream_of(call)>>>(
      n, Offsets<1>(ops), static_cast<char*>(out.data), static_cast<uint64_t>(call.attr_i64(0)),
      static_cast<uint64_t>(call.attr_i64(1)), f);
  KILN_CUDA_CHECK(cudaGetLastError());
}

template <class T>
struct Uniform {  // as many random bits as T's mantissa holds: rounding never reaches `to`
  double from, to;
  __device__ T operator()(const std::array<uint32_t, 4>& w) const {
    if constexpr (std::is_same_v<T, double>) {
      return sdk::uniform_double(w[0], w[1]) * (to - from) + from;
    } else {
      constexpr int kBits = std::is_same_v<T, bf16> ? 8 : std::is_same_v<T, half> ? 11 : 24;
      const float lo = static_cast<float>(from), range = static_cast<float>(to) - lo;
      float u = static_cast<float>(w[0] >> (32 - kBits)) * (1.0f / static_cast<float>(1u << kBits));
      return from_acc<T>(u * range + lo);
    }
  }
};

template <class T>
struct Normal {
  double mean, std;
  __device__ T operator()(const std::array<uint32_t, 4>& w) const {
    double z = sdk::normal_double(w[0], w[1], w[2], w[3]);
    return from_acc<T>(static_cast<acc_t<T>>(mean + std * z));
  }
};

template <class T>
struct RandomInt {
  int64_t low;
  uint64_t range;
  __device__ T operator()(const std::array<uint32_t, 4>& w) const {
    uint64_t bits = static_cast<uint64_t>(w[0]) << 32 | w[1];
    int64_t value = static_cast<int64_t>(static_cast<uint64_t>(low) + bits % range);
    return from_acc<T>(static_cast<acc_t<T>>(value));
  }
};

void uniform_kernel(const Call& call) {
  const double from = call.attr_scalar<double>(2), to = call.attr_scalar<double>(3);
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) throw sdk::type_error("uniform_ needs a floating dtype");
    else generate<T>(call, Uniform<T>{from, to});
  });
}

void normal_kernel(const Call& call) {
  const double mean = call.attr_scalar<double>(2), stddev = call.attr_scalar<double>(3);
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) throw sdk::type_error("normal_ needs a floating dtype");
    else generate<T>(call, Normal<T>{mean, stddev});
  });
}

void random_kernel(const Call& call) {
  const int64_t low = call.attr_i64(2), high = call.attr_i64(3);
  if (high <= low) {
    throw std::invalid_argument("random_ expects low < high, got low=" + std::to_string(low) +
                                " and high=" + std::to_string(high));
  }
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  visit_dtype(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw sdk::type_error("random_ does not take bool");
    } else {
      generate<T>(call, RandomInt<T>{low, range});
    }
  });
}

}  // namespace

void register_random(KernelTable& t) {
  t.add("uniform_", kernel<uniform_kernel>);
  t.add("normal_", kernel<normal_kernel>);
  t.add("random_", kernel<random_kernel>);
}

}  // namespace kiln::cuda
