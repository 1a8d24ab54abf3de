// Distributed samplers: rank `rank`'s share of 0 .. size-1 among `num_replicas` ranks, as
// libtorch's. Each rank gets local_sample_count() indices: ceil(size / num_replicas) with
// allow_duplicates (the first indices are repeated to pad the last ranks' shares), else
// floor(size / num_replicas) (the last indices are dropped). Rank r takes the r-th contiguous
// block of the (shuffled, for DistributedRandomSampler) padded list.
#pragma once

#include <kiln/data/samplers/base.h>

#include <cstdint>

namespace kiln::data::samplers {

template <typename BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  // Throws kiln::ValueError when num_replicas is 0 or rank >= num_replicas.
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                     bool allow_duplicates = true);

  // The epoch that seeds the shuffle (the same permutation on every rank); applies at reset().
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }

 protected:
  // Indices per rank (see above).
  size_t local_sample_count() const;

  size_t size_;
  size_t num_replicas_;
  size_t rank_;
  size_t epoch_ = 0;
  bool allow_duplicates_;
};

class KILN_API DistributedRandomSampler : public DistributedSampler<> {
 public:
  explicit DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                                    bool allow_duplicates = true);

  // Shuffles again with the current epoch (and `new_size` when given), from the rank's start.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  // Writes "sample_index_" and "epoch_"; load() reshuffles with that epoch and checks the index.
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  // Position in the padded list (the rank's block starts at rank * local_sample_count()).
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();

  size_t begin_index_ = 0;
  size_t end_index_ = 0;
  size_t sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

class KILN_API DistributedSequentialSampler : public DistributedSampler<> {
 public:
  explicit DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                                        bool allow_duplicates = true);

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  // Writes "sample_index_"; load() checks it lies in this rank's block.
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();

  size_t begin_index_ = 0;
  size_t end_index_ = 0;
  size_t sample_index_ = 0;
};

// Checks the arguments of a DistributedSampler (kiln::ValueError naming them).
KILN_API void check_distributed_arguments(size_t size, size_t num_replicas, size_t rank);

template <typename BatchRequest>
DistributedSampler<BatchRequest>::DistributedSampler(size_t size, size_t num_replicas, size_t rank,
                                                     bool allow_duplicates)
    : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
  check_distributed_arguments(size, num_replicas, rank);
}

template <typename BatchRequest>
size_t DistributedSampler<BatchRequest>::local_sample_count() const {
  if (allow_duplicates_) return size_ / num_replicas_ + (size_ % num_replicas_ != 0 ? 1 : 0);
  return size_ / num_replicas_;
}

}  // namespace kiln::data::samplers
