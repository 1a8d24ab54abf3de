// Helpers shared by kiln::data's sources in core. Internal to libkiln_core.
#pragma once

#include <kiln/data/dataset.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

namespace kiln::data::detail {

// Sets the calling thread's get_worker_info() (a DataLoader worker does, at start and per epoch).
void set_worker_info(std::optional<WorkerInfo> info);

// Throws Cancelled when the calling thread is a DataLoader worker whose task's epoch is over (a
// no-op in other threads). Called between the samples of a batch, so that a worker stops within
// one sample (see Note [Stuck workers] in worker_pool.h).
struct Cancelled {};
void check_cancelled();

// Rethrows `error` (a kiln::Error subclass keeps its type; other exceptions become kiln::Error)
// with `prefix` in front of its message.
[[noreturn]] void rethrow_with_context(std::exception_ptr error, const std::string& prefix);

// A 63-bit seed from kiln's default generator, as PyTorch draws its loaders' base_seed (so
// kiln::manual_seed makes it reproducible).
uint64_t draw_seed();

// SplitMix64: a 64-bit mixing function, for deriving seeds from (seed, epoch, worker, ...).
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline uint64_t mix_seed(uint64_t a, uint64_t b) {
  return mix64(mix64(a) ^ (b * 0xD6E8FEB86659FD93ull));
}

// A small fast generator (xoshiro256**, seeded by SplitMix64) with an exact, portable stream, so
// that shuffles are the same on every machine and standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& w : s_) {
      seed += 0x9E3779B97F4A7C15ull;
      w = mix64(seed);
    }
  }
  uint64_t next() {
    uint64_t result = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n), n > 0 (Lemire's method, unbiased).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// A random permutation of 0 .. n-1 (Fisher-Yates with Rng(seed)).
std::vector<int64_t> permutation(int64_t n, uint64_t seed);

}  // namespace kiln::data::detail
