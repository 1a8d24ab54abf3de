// kiln::data::DataLoader — batches from a dataset, loaded by worker threads.
//
//   auto loader = kiln::data::DataLoader(dataset, kiln::data::DataLoaderOptions()
//                                                     .batch_size(64).workers(2).shuffle(true));
//   for (kiln::data::Sample& batch : loader) { ... }   // one epoch; again for the next
//
// Model, as PyTorch's DataLoader with threads for processes:
//  - begin() starts an epoch and loads its first batch (so errors surface there). Its seed is
//    derived from DataLoaderOptions::seed and the epoch number, or drawn from kiln's default
//    generator; worker w sees WorkerInfo{w, workers, seed + w} (get_worker_info()).
//  - Map-style datasets: the sampler's indices are cut into batches; batch k goes to a worker;
//    with enforce_ordering (the default) batches arrive in sampler order whatever worker finishes
//    first. Iterable datasets: each worker reads its own stream and batches it; batches are taken
//    from the workers in turn (worker 0, 1, ..., skipping finished ones), as PyTorch does.
//  - Backpressure: each worker has at most prefetch_factor batches requested and unread, so
//    memory stays bounded when the training loop is slower than loading.
//  - A worker's exception is raised by the iterator's ++ (or begin()) in the order the batch
//    would have arrived, as the same kiln::Error type with "DataLoader worker w (of n)" and
//    what it was loading in front; the epoch ends there.
//  - Leaving the loop early (break), an error, a new begin() and destruction all stop the
//    epoch's workers and join them (persistent workers are kept, idle, until destruction); a
//    worker stops between two samples, so this waits for at most one sample per worker. A
//    worker stuck in its dataset longer than the timeout option (5 s without one) is abandoned
//    instead: the loader returns, and the thread ends on its own when its call returns (see
//    abandoned_workers()).
//  - state_dict() after k batches, load_state_dict() on a new loader: the next epoch yields
//    exactly the rest of that epoch (see the state's description at state_dict()).
#pragma once

#include <kiln/data/dataloader/stateful.h>
#include <kiln/data/dataloader/stateless.h>
#include <kiln/data/dataloader_options.h>
#include <kiln/data/dataset.h>
#include <kiln/data/datasets/base.h>
#include <kiln/data/sample.h>
#include <kiln/data/samplers/random.h>
#include <kiln/export.h>

#include <cstddef>
#include <iterator>
#include <memory>
#include <type_traits>
#include <vector>

namespace kiln::data {

namespace detail {
class EpochRun;
struct LoaderState;
class WorkerPool;
}  // namespace detail

class KILN_API DataLoader {
 public:
  class Iterator;

  // Checks the options against the dataset as PyTorch does (ValueError with PyTorch's text):
  // shuffle or a sampler with an iterable dataset, batch_sampler with batch_size/shuffle/
  // sampler/drop_last, prefetch_factor or persistent_workers without workers, ...
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options = {});
  DataLoader(std::shared_ptr<IterableDataset> dataset, DataLoaderOptions options = {});
  // Stops every worker thread: joins it, or abandons it when it is stuck (see above).
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Starts an epoch (ending one still running) and loads its first batch.
  Iterator begin();
  // The end of any epoch.
  Iterator end();
  // Batches per epoch for a map-style dataset; throws kiln::TypeError for an iterable one.
  int64_t size() const;
  const DataLoaderOptions& options() const { return options_; }

  // Where loading stands: a map with "epoch" (of the next batch), "batches" and "samples"
  // delivered in it, "base_seed", "workers", "batch_size", per-worker "worker_samples",
  // "exhausted" and "last_worker" (iterable datasets), "replicas" (the sampler's), and
  // "delivered" (iterable datasets that track provenance). Save it with dump_state().
  Sample state_dict() const;
  // Makes the next begin() resume at `state`: the epoch continues exactly where the state was
  // taken. Every field is checked first (kiln::ValueError naming the field). Map-style datasets
  // resume with any worker count, and with another number of ranks when batch_size x ranks is
  // unchanged; iterable datasets resume with the same worker count, or with another one when
  // the dataset tracks provenance (kiln::data::open sources do).
  void load_state_dict(const Sample& state);

 private:
  void check_options() const;

  std::shared_ptr<Dataset> map_dataset_;
  std::shared_ptr<IterableDataset> iterable_dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<detail::LoaderState> state_;
  std::shared_ptr<detail::WorkerPool> persistent_pool_;
  std::weak_ptr<detail::EpochRun> current_;
};

// An input iterator over one epoch's batches. Copies share the epoch; when the last copy is
// gone (the loop ended or broke off) the epoch's workers stop.
class KILN_API DataLoader::Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Sample;
  using difference_type = std::ptrdiff_t;
  using pointer = Sample*;
  using reference = Sample&;

  Iterator() = default;  // the end
  Sample& operator*() const;
  Sample* operator->() const { return &**this; }
  // Loads the next batch; raises a worker's error (and then equals end()).
  Iterator& operator++();
  // Equal when both are at the end, or are the same position of the same epoch.
  bool operator==(const Iterator& other) const;

 private:
  friend class DataLoader;
  explicit Iterator(std::shared_ptr<detail::EpochRun> run);
  std::shared_ptr<detail::EpochRun> run_;
};

// A kiln::data::DataLoader for a kiln dataset (kiln/data/dataset.h) held by shared_ptr. The
// overloads below take libtorch-shaped datasets (kiln/data/datasets/base.h) by value instead.
template <class D>
std::unique_ptr<DataLoader> make_data_loader(std::shared_ptr<D> dataset,
                                             DataLoaderOptions options = {}) {
  if constexpr (std::is_base_of_v<Dataset, D>) {
    return std::make_unique<DataLoader>(std::shared_ptr<Dataset>(std::move(dataset)),
                                        std::move(options));
  } else {
    return std::make_unique<DataLoader>(std::shared_ptr<IterableDataset>(std::move(dataset)),
                                        std::move(options));
  }
}

namespace detail {
template <class D>
constexpr bool is_batch_dataset = std::is_base_of_v<datasets::detail::BatchDatasetTag, D>;
template <class D>
constexpr bool is_stateless_dataset = [] {
  if constexpr (is_batch_dataset<D>) return !D::is_stateful;
  return false;
}();
template <class D>
constexpr bool is_stateful_dataset = [] {
  if constexpr (is_batch_dataset<D>) return D::is_stateful;
  return false;
}();
}  // namespace detail

// A libtorch-shaped loader (kiln/data/dataloader/base.h) over a stateless dataset, drawing its
// batch requests from `sampler`:
//   make_data_loader(dataset, samplers::SequentialSampler(n), DataLoaderOptions(32).workers(2))
template <class Dataset, class Sampler,
          std::enable_if_t<detail::is_stateless_dataset<Dataset> &&
                               std::is_base_of_v<samplers::detail::SamplerTag, Sampler>,
                           int> = 0>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, Sampler sampler, DataLoaderOptions options = DataLoaderOptions()) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset),
                                                                 std::move(sampler),
                                                                 std::move(options));
}

// As above with a Sampler (RandomSampler by default) of the dataset's size; throws kiln::Error
// when the dataset has no size:
//   make_data_loader(dataset, 32)
//   make_data_loader<samplers::SequentialSampler>(dataset, DataLoaderOptions(32))
template <
    class Sampler = samplers::RandomSampler, class Dataset,
    std::enable_if_t<
        detail::is_stateless_dataset<Dataset> && std::is_constructible_v<Sampler, size_t>, int> = 0>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  KILN_CHECK(size.has_value(), "Expected the dataset to be sized in order to construct the ",
             "Sampler (make_data_loader: the dataset's size() is nullopt; pass a sampler, such ",
             "as samplers::StreamSampler, instead)");
  return make_data_loader(std::move(dataset), Sampler(*size), std::move(options));
}

// A libtorch-shaped loader over a stateful dataset (batches until it returns nullopt).
template <class Dataset, std::enable_if_t<detail::is_stateful_dataset<Dataset>, int> = 0>
std::unique_ptr<StatefulDataLoader<Dataset>> make_data_loader(
    Dataset dataset, DataLoaderOptions options = DataLoaderOptions()) {
  return std::make_unique<StatefulDataLoader<Dataset>>(std::move(dataset), std::move(options));
}

// One state from the states of all ranks at the same step, for resuming an iterable source on
// another number of ranks: the samples any rank delivered are left out (map-style states agree
// across ranks, and the first is returned). Throws kiln::ValueError for states of different
// epochs.
KILN_API Sample merge_states(const std::vector<Sample>& states);

// Worker threads of any DataLoader that were abandoned, stuck in a dataset call when their
// loader stopped them, and are still running; each ends on its own once its call returns.
KILN_API int64_t abandoned_workers();

// The state as one line of JSON (ints, strings, lists and maps), to write to a file.
KILN_API std::string dump_state(const Sample& state);
// A state from dump_state's text; throws kiln::ValueError naming the offset of bad text.
KILN_API Sample parse_state(const std::string& text);

}  // namespace kiln::data
