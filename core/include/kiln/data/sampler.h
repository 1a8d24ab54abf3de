// Samplers: which indices of a map-style dataset an epoch visits, in which order, and how they
// are grouped into batches. As PyTorch's torch.utils.data samplers, with one difference: a
// sampler is a function of (seed, epoch) rather than a stateful iterator, so the DataLoader can
// regenerate an epoch's order to resume it (state_dict) and ranks agree without coordination.
//
//   SequentialSampler(n)                         0, 1, ..., n-1
//   RandomSampler(n)                             a permutation, new each epoch, from the loader's
//                                                seed (so reproducible from kiln::manual_seed)
//   DistributedSampler(n, replicas, rank)        rank's share, padded or dropped as PyTorch's
//   BatchSampler(sampler, batch_size, drop_last) groups another sampler's indices
#pragma once

#include <kiln/export.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace kiln::data {

class KILN_API Sampler {
 public:
  virtual ~Sampler();
  // The indices of one epoch. `seed` is the DataLoader's seed for this epoch and `epoch` its
  // number; a sampler with its own seed uses (own seed, epoch) instead.
  virtual std::vector<int64_t> indices(uint64_t seed, int64_t epoch) const = 0;
  // How many indices each epoch has.
  virtual int64_t size() const = 0;
  // How many ranks share the dataset through this sampler (1 unless distributed). The
  // DataLoader's state counts samples across ranks with it, so a run can resume on another
  // number of ranks when the global batch (batch size x ranks) is unchanged.
  virtual int64_t num_replicas() const { return 1; }
};

// 0, 1, ..., size-1.
class KILN_API SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t size);
  std::vector<int64_t> indices(uint64_t seed, int64_t epoch) const override;
  int64_t size() const override { return size_; }

 private:
  int64_t size_;
};

// A random permutation of [0, size) each epoch; with replacement, num_samples draws in
// [0, size). The seed is the loader's per-epoch seed unless `seed` is given (then seed and the
// epoch number). num_samples defaults to size.
class KILN_API RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t size, bool replacement = false,
                         std::optional<int64_t> num_samples = std::nullopt,
                         std::optional<uint64_t> seed = std::nullopt);
  std::vector<int64_t> indices(uint64_t seed, int64_t epoch) const override;
  int64_t size() const override { return num_samples_; }

 private:
  int64_t size_;
  bool replacement_;
  int64_t num_samples_;
  std::optional<uint64_t> seed_;
};

// Rank `rank`'s share of [0, size) among `num_replicas` ranks, as PyTorch's DistributedSampler:
// shuffled with (seed, epoch) when `shuffle` (the same permutation on every rank), then padded by
// repeating the first indices to a multiple of num_replicas (drop_last false) or cut to one
// (drop_last true), then every num_replicas-th index from `rank`. The epoch is the loader's,
// unless set_epoch() was called. num_replicas and rank default to the default process group's
// world size and rank (kiln::distributed), as PyTorch's; without a group they must be given.
class KILN_API DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t size, std::optional<int64_t> num_replicas = std::nullopt,
                     std::optional<int64_t> rank = std::nullopt, bool shuffle = true,
                     uint64_t seed = 0, bool drop_last = false);
  std::vector<int64_t> indices(uint64_t seed, int64_t epoch) const override;
  int64_t size() const override { return num_samples_; }
  int64_t num_replicas() const override { return num_replicas_; }
  // Fixes the epoch used for shuffling (PyTorch's set_epoch); otherwise the loader's epoch.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t total_size() const { return num_samples_ * num_replicas_; }
  int64_t rank() const { return rank_; }

 private:
  int64_t size_, num_replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t num_samples_;
  std::optional<int64_t> epoch_;
};

// Groups a sampler's indices into batches of batch_size; the last one is smaller, or dropped
// with drop_last.
class KILN_API BatchSampler {
 public:
  BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last);
  virtual ~BatchSampler();
  // The batches of one epoch (see Sampler::indices).
  virtual std::vector<std::vector<int64_t>> batches(uint64_t seed, int64_t epoch) const;
  // Number of batches per epoch.
  virtual int64_t size() const;
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }
  int64_t batch_size() const { return batch_size_; }
  bool drop_last() const { return drop_last_; }

 private:
  std::shared_ptr<Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

}  // namespace kiln::data
