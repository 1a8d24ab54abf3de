// What a DataLoader remembers between epochs and batches: the position that state_dict()
// reports and load_state_dict() restores. Read and written only by the thread that iterates.
// Internal to libkiln_core.
#pragma once

#include <kiln/data/sample.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::data::detail {

// Sample ordinals per shard, as sorted disjoint [begin, end) ranges: which samples of an
// iterable source were delivered (see IterableDataset::tracks_provenance).
class DeliveredSet {
 public:
  // Adds ordinals [first, first + count) of `shard`.
  void add(int64_t shard, int64_t first, int64_t count);
  // Adds every run of a stream's take_provenance() list ([shard, first, count] triples, all
  // non-negative); throws kiln::ValueError for another value.
  void add_runs(const Sample& runs);
  // Adds every range of `other`.
  void add_all(const DeliveredSet& other);
  // A list of [shard, begin, end] triples; None when empty.
  Sample to_sample() const;
  // From to_sample()'s list (None gives an empty set); throws kiln::ValueError starting with
  // `what` (who reads it and the field) for anything else, or a triple out of
  // 0 <= shard, 0 <= begin <= end.
  static DeliveredSet from_sample(const Sample& s, const std::string& what);
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

// A DataLoader's saved state, typed: state_dict() fills one and writes it with to_sample();
// load_state_dict() and merge_states() read one with check(). Only these two functions
// (saved_state.cpp) know the map's keys; the golden states of tests/data/test_state_golden.cpp
// keep its format readable.
struct SavedState {
  Sample original;         // the map check() read, as given
  int64_t epoch = 0;       // the epoch in progress, or the next one when !in_epoch
  bool in_epoch = false;   // when false, nothing below is read (only written)
  uint64_t base_seed = 0;  // below 2^63
  int64_t batches = 0, samples = 0;
  int64_t workers = 0;
  int64_t readers = 1;                // max(workers, 1); not written
  std::optional<int64_t> batch_size;  // none: the loader does not batch
  int64_t replicas = 1;
  bool merged = false;  // made by merge_states: resumes through `delivered` only
  // Iterable datasets, per reader; `per_reader` says whether the state has these fields.
  bool per_reader = false;
  std::vector<int64_t> worker_batches, worker_samples;
  std::vector<bool> exhausted;
  int64_t last_worker = -1;
  DeliveredSet delivered;
  Sample resumed_from;  // None or a delivered list

  // The map state_dict() returns: "version" 1 and the fields above (the per-reader ones when
  // per_reader, "merged" when set).
  Sample to_sample() const;

  // Checks `state` as state_dict() writes it: a map with version 1, epoch in [0, 2^62], and, in
  // an epoch, counts in [0, 2^62], base_seed in [0, 2^63), replicas > 0 with samples x replicas
  // in int64, per-worker lists of `readers` entries, last_worker in [-1, readers), delivered
  // ranges as DeliveredSet::from_sample. Throws kiln::ValueError starting with `who` and naming
  // the field.
  static SavedState check(const Sample& state, const std::string& who);
};

struct LoaderState {
  int64_t epoch = 0;       // the epoch in progress, or the next one when !in_epoch
  bool in_epoch = false;   // an epoch has started and not run to its end
  uint64_t base_seed = 0;  // the epoch's seed
  int64_t batches = 0;     // delivered in this epoch
  int64_t samples = 0;
  int64_t readers = 1;  // workers, or 1 when loading inline
  // iterable datasets: per worker
  std::vector<int64_t> worker_batches, worker_samples;
  std::vector<bool> exhausted;
  int64_t last_worker = -1;  // the worker of the last delivered batch
  DeliveredSet delivered;    // cumulative, when the dataset tracks provenance
  Sample resumed_from;       // the delivered set this epoch's streams started from (or None)
  // set by load_state_dict, consumed by the next begin()
  std::optional<SavedState> pending;
};

}  // namespace kiln::data::detail
