// uniform_, normal_, random_. See Note [Random numbers are a function of (seed, offset, index)] in
// kiln/sdk/philox.hpp: element i (row-major in the output's sizes) uses philox4x32(seed,
// offset + i), so any split across threads gives the same numbers.
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"

#include <kiln/sdk/philox.hpp>

namespace kiln::cpu {
namespace {

using sdk::kernel;
using Words = std::array<uint32_t, 4>;

// buf[j] = f(philox4x32(seed, counter + j)) for j < m: a loop GCC vectorizes (Philox's 32-bit
// multiplies as vpmuludq), compiled also for AVX-512 (see Note [AVX-512 clones of the
// elementwise loops] in loops.hpp).
template <class C, class F>
[[gnu::always_inline]] inline void philox_loop(C* buf, int64_t m, uint64_t seed, uint64_t counter,
                                               const F& f) {
  for (int64_t j = 0; j < m; ++j) buf[j] = f(sdk::philox4x32(seed, counter + j));
}

template <class C, class F>
KILN_CPU_AVX512 void philox_loop_avx512(C* buf, int64_t m, uint64_t seed, uint64_t counter,
                                        const F& f) {
  philox_loop(buf, m, seed, counter, f);
}

// out[i] = f(philox4x32(seed, offset + i)), f returning the compute type of T.
template <class T, class F>
void generate(const kiln_tensor& out, uint64_t seed, uint64_t offset, const F& f) {
  using C = compute_t<T>;
  sdk::StridedLoop<1> loop({&out});
  parallel_for(loop.numel(), kGrainHeavy, [&](int64_t begin, int64_t end) {
    uint64_t counter = offset + static_cast<uint64_t>(begin);
    Buffer<C> buf;
    loop.run(begin, end, [&](char** p, const int64_t* step, int64_t n) {
      for (int64_t off = 0; off < n; off += kChunk) {
        int64_t m = std::min(kChunk, n - off);
        if (has_avx512()) {
          philox_loop_avx512(buf.v, m, seed, counter, f);
        } else {
          philox_loop(buf.v, m, seed, counter, f);
        }
        store_chunk<T>(p[0] + off * step[0], step[0], m, buf.v);
        counter += static_cast<uint64_t>(m);
      }
    });
  });
}

uint64_t seed_of(const Call& call) { return static_cast<uint64_t>(call.attr_i64(0)); }
uint64_t offset_of(const Call& call) { return static_cast<uint64_t>(call.attr_i64(1)); }

// uniform_(seed, offset, from, to): u * (to - from) + from, u from uniform_double(w0, w1) for
// float64 and uniform_float(w0) otherwise; float32 arithmetic for the narrower floats.
void uniform_kernel(const Call& call) {
  const double from = scalar_attr<double>(call.attr(2));
  const double to = scalar_attr<double>(call.attr(3));
  visit<Dtypes::floating>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      generate<T>(call.output(0), seed_of(call), offset_of(call), [=](const Words& w) {
        return sdk::uniform_double(w[0], w[1]) * (to - from) + from;
      });
    } else {
      // as many random bits as T's mantissa holds, so rounding on store never reaches `to`
      constexpr int kBits = std::is_same_v<T, sdk::BFloat16> ? 8
                            : std::is_same_v<T, sdk::Half>   ? 11
                                                             : 24;
      const float lo = static_cast<float>(from), range = static_cast<float>(to) - lo;
      generate<T>(call.output(0), seed_of(call), offset_of(call), [=](const Words& w) {
        float u = static_cast<float>(w[0] >> (32 - kBits)) *
                  (1.0f / static_cast<float>(1u << kBits));
        return u * range + lo;
      });
    }
  });
}

// normal_(seed, offset, mean, std): mean + std * normal_double(w0, w1, w2, w3), in double.
void normal_kernel(const Call& call) {
  const double mean = scalar_attr<double>(call.attr(2));
  const double stddev = scalar_attr<double>(call.attr(3));
  visit<Dtypes::floating>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    generate<T>(call.output(0), seed_of(call), offset_of(call), [=](const Words& w) {
      double z = sdk::normal_double(w[0], w[1], w[2], w[3]);
      return static_cast<compute_t<T>>(mean + stddev * z);
    });
  });
}

// random_(seed, offset, low, high): low + ((w0 << 32 | w1) % (high - low)), integers in
// [low, high) (converted to the output's dtype).
void random_kernel(const Call& call) {
  const int64_t low = call.attr_i64(2), high = call.attr_i64(3);
  if (high <= low) {
    throw std::invalid_argument("random_ expects low < high, got low=" + std::to_string(low) +
                                " and high=" + std::to_string(high));
  }
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  visit<Dtypes::numeric>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    generate<T>(call.output(0), seed_of(call), offset_of(call), [=](const Words& w) {
      uint64_t bits = static_cast<uint64_t>(w[0]) << 32 | w[1];
      int64_t value = static_cast<int64_t>(static_cast<uint64_t>(low) + bits % range);
      return static_cast<compute_t<T>>(value);
    });
  });
}

}  // namespace

void register_random(KernelTable& table) {
  table.add("uniform_", kernel<uniform_kernel>);
  table.add("normal_", kernel<normal_kernel>);
  table.add("random_", kernel<random_kernel>);
}

}  // namespace kiln::cpu
