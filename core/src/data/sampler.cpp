// Samplers. See kiln/data/sampler.h.
#include <kiln/data/sampler.h>

#include "internal.h"

#include <kiln/distributed.h>
#include <kiln/error.h>

#include <numeric>

namespace kiln::data {

namespace detail {
std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), int64_t{0});
  Rng rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(out[static_cast<size_t>(i)], out[static_cast<size_t>(j)]);
  }
  return out;
}
}  // namespace detail

namespace {
// Keeps sampler permutations apart from the other uses of the loader's seed (worker seeds).
constexpr uint64_t kSamplerStream = 0x5A3B1E5EEDull;
}  // namespace

Sampler::~Sampler() = default;

SequentialSampler::SequentialSampler(int64_t size) : size_(size) {
  KILN_CHECK_VALUE(size >= 0, "SequentialSampler: size must be non-negative, got ", size);
}

std::vector<int64_t> SequentialSampler::indices(uint64_t, int64_t) const {
  std::vector<int64_t> out(static_cast<size_t>(size_));
  std::iota(out.begin(), out.end(), int64_t{0});
  return out;
}

RandomSampler::RandomSampler(int64_t size, bool replacement, std::optional<int64_t> num_samples,
                             std::optional<uint64_t> seed)
    : size_(size),
      replacement_(replacement),
      num_samples_(num_samples.value_or(size)),
      seed_(seed) {
  KILN_CHECK_VALUE(size >= 0, "RandomSampler: size must be non-negative, got ", size);
  KILN_CHECK_VALUE(num_samples_ > 0 || (!num_samples && size == 0), "RandomSampler: num_samples ",
                   "should be a positive integer value, but got num_samples=", num_samples_);
  KILN_CHECK_VALUE(replacement || !num_samples || *num_samples <= size,
                   "RandomSampler: ", "num_samples=", num_samples_, " exceeds the dataset size ",
                   size, " without replacement");
  KILN_CHECK_VALUE(!replacement || size > 0, "RandomSampler: cannot draw with replacement from ",
                   "an empty dataset");
}

std::vector<int64_t> RandomSampler::indices(uint64_t seed, int64_t epoch) const {
  uint64_t s = seed_ ? detail::mix_seed(*seed_, static_cast<uint64_t>(epoch))
                     : detail::mix_seed(seed, kSamplerStream);
  if (!replacement_) {
    std::vector<int64_t> out = detail::permutation(size_, s);
    out.resize(static_cast<size_t>(num_samples_));
    return out;
  }
  detail::Rng rng(s);
  std::vector<int64_t> out(static_cast<size_t>(num_samples_));
  for (int64_t& i : out) i = static_cast<int64_t>(rng.below(static_cast<uint64_t>(size_)));
  return out;
}

namespace {

// An explicit value, or the default process group's (PyTorch's DistributedSampler defaults).
int64_t from_group(std::optional<int64_t> given, const char* name, bool rank) {
  if (given) return *given;
  KILN_CHECK_VALUE(distributed::is_initialized(), "DistributedSampler: ", name,
                   " was not given and no process group is initialized: call ",
                   "kiln::distributed::init_process_group first, or pass num_replicas and rank");
  return rank ? distributed::get_rank() : distributed::get_world_size();
}

}  // namespace

DistributedSampler::DistributedSampler(int64_t size, std::optional<int64_t> num_replicas,
                                       std::optional<int64_t> rank, bool shuffle, uint64_t seed,
                                       bool drop_last)
    : size_(size),
      num_replicas_(from_group(num_replicas, "num_replicas", false)),
      rank_(from_group(rank, "rank", true)),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  KILN_CHECK_VALUE(size >= 0, "DistributedSampler: size must be non-negative, got ", size);
  KILN_CHECK_VALUE(num_replicas_ > 0, "DistributedSampler: num_replicas must be positive, got ",
                   num_replicas_);
  KILN_CHECK_VALUE(rank_ >= 0 && rank_ < num_replicas_, "Invalid rank ", rank_,
                   ", rank should be in the interval [0, ", num_replicas_ - 1, "]");
  // PyTorch's ceil((size - num_replicas) / num_replicas) with drop_last (the tail dropped so
  // that every rank gets as many), ceil(size / num_replicas) without; written without the sums
  // that overflow near the int64 limit.
  num_samples_ = size / num_replicas_;
  if (!drop_last && size % num_replicas_ != 0) num_samples_ += 1;
  int64_t total = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(num_samples_, num_replicas_, &total),
                   "DistributedSampler: size ", size, " padded to a multiple of num_replicas ",
                   num_replicas_, " overflows int64");
}

std::vector<int64_t> DistributedSampler::indices(uint64_t, int64_t epoch) const {
  int64_t e = epoch_.value_or(epoch);
  std::vector<int64_t> all;
  if (shuffle_) {
    all = detail::permutation(size_, detail::mix_seed(seed_, static_cast<uint64_t>(e)));
  } else {
    all.resize(static_cast<size_t>(size_));
    std::iota(all.begin(), all.end(), int64_t{0});
  }
  int64_t total = total_size();
  if (!drop_last_) {
    // Pad by repeating the head (the whole list as often as needed when it is short).
    size_t n = all.size();
    for (size_t i = 0; static_cast<int64_t>(all.size()) < total && n > 0; ++i) {
      all.push_back(all[i % n]);
    }
  } else {
    all.resize(static_cast<size_t>(total));
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(num_samples_));
  for (int64_t i = rank_; i < total; i += num_replicas_) out.push_back(all[static_cast<size_t>(i)]);
  return out;
}

BatchSampler::BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  KILN_CHECK_VALUE(sampler_ != nullptr, "BatchSampler: sampler is null");
  KILN_CHECK_VALUE(batch_size > 0, "batch_size should be a positive integer value, but got ",
                   "batch_size=", batch_size);
}

BatchSampler::~BatchSampler() = default;

std::vector<std::vector<int64_t>> BatchSampler::batches(uint64_t seed, int64_t epoch) const {
  std::vector<int64_t> all = sampler_->indices(seed, epoch);
  std::vector<std::vector<int64_t>> out;
  for (size_t start = 0; start < all.size(); start += static_cast<size_t>(batch_size_)) {
    size_t end = std::min(all.size(), start + static_cast<size_t>(batch_size_));
    if (drop_last_ && end - start < static_cast<size_t>(batch_size_)) break;
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(start),
                     all.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return out;
}

int64_t BatchSampler::size() const {
  int64_t n = sampler_->size();
  return n / batch_size_ + (!drop_last_ && n % batch_size_ != 0 ? 1 : 0);
}

}  // namespace kiln::data
