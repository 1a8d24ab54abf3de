// What a DataLoader remembers between epochs and batches: the position that state_dict()
// reports and load_state_dict() restores. Read and written only by the thread that iterates.
// Internal to libkiln_core.
#pragma once

#include <kiln/data/sample.h>

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace kiln::data::detail {

// Sample ordinals per shard, as sorted disjoint [begin, end) ranges: which samples of an
// iterable source were delivered (see IterableDataset::tracks_provenance).
class DeliveredSet {
 public:
  // Adds ordinals [first, first + count) of `shard`.
  void add(int64_t shard, int64_t first, int64_t count);
  // Adds every run of a stream's take_provenance() list ([shard, first, count] triples).
  void add_runs(const Sample& runs);
  // A list of [shard, begin, end] triples; None when empty.
  Sample to_sample() const;
  // From to_sample()'s list (None gives an empty set).
  static DeliveredSet from_sample(const Sample& s);
  bool empty() const { return ranges_.empty(); }
  // The ranges of `shard` (sorted, disjoint), or null when none.
  const std::vector<std::pair<int64_t, int64_t>>* ranges(int64_t shard) const {
    auto it = ranges_.find(shard);
    return it == ranges_.end() ? nullptr : &it->second;
  }
  void clear() { ranges_.clear(); }

 private:
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> ranges_;
};

struct LoaderState {
  int64_t epoch = 0;       // the epoch in progress, or the next one when !in_epoch
  bool in_epoch = false;   // an epoch has started and not run to its end
  uint64_t base_seed = 0;  // the epoch's seed
  int64_t batches = 0;     // delivered in this epoch
  int64_t samples = 0;
  int64_t readers = 1;     // workers, or 1 when loading inline
  // iterable datasets: per worker
  std::vector<int64_t> worker_batches, worker_samples;
  std::vector<bool> exhausted;
  int64_t last_worker = -1;  // the worker of the last delivered batch
  DeliveredSet delivered;    // cumulative, when the dataset tracks provenance
  Sample resumed_from;       // the delivered set this epoch's streams started from (or None)
  // set by load_state_dict, consumed by the next begin()
  std::optional<Sample> pending;
};

}  // namespace kiln::data::detail
