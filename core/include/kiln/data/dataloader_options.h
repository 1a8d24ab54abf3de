// DataLoaderOptions: how a DataLoader batches and parallelises, with libtorch's names where
// libtorch has the option (batch_size, workers, max_jobs, drop_last, enforce_ordering, timeout)
// and PyTorch's for the rest (shuffle, sampler, prefetch_factor, persistent_workers, pin_memory,
// worker_init_fn, collate_fn). Each option is a chained setter and a getter:
//
//   kiln::data::DataLoaderOptions().batch_size(64).workers(2).shuffle(true)
//   kiln::data::DataLoaderOptions(64)     // libtorch's spelling of the batch size
//
// The same options serve both loaders: kiln::data::DataLoader (kiln/data/dataloader.h), and the
// libtorch-shaped loaders of make_data_loader (kiln/data/dataloader/base.h), which take the
// libtorch options only (FullDataLoaderOptions below checks that) and reject the others.
#pragma once

#include <kiln/data/collate.h>
#include <kiln/data/dataset.h>
#include <kiln/data/sampler.h>
#include <kiln/device.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace kiln::data {

class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  // libtorch's DataLoaderOptions(batch_size); implicit, as libtorch's, so that
  // make_data_loader(dataset, 32) reads as there.
  DataLoaderOptions(int64_t batch_size) : batch_size_(batch_size) {}  // NOLINT

  // Samples per batch (1 by default); nullopt turns batching off: each sample is delivered
  // as the dataset returns it, as PyTorch's batch_size=None.
  DataLoaderOptions& batch_size(std::optional<int64_t> v) {
    batch_size_ = v;
    return *this;
  }
  std::optional<int64_t> batch_size() const { return batch_size_; }
  // A new random order each epoch (map-style datasets only).
  DataLoaderOptions& shuffle(bool v) {
    shuffle_ = v;
    return *this;
  }
  bool shuffle() const { return shuffle_; }
  // Which indices, in which order (map-style only; exclusive with shuffle).
  DataLoaderOptions& sampler(std::shared_ptr<Sampler> v) {
    sampler_ = std::move(v);
    return *this;
  }
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }
  // Whole batches of indices (exclusive with batch_size, shuffle, sampler and drop_last).
  DataLoaderOptions& batch_sampler(std::shared_ptr<BatchSampler> v) {
    batch_sampler_ = std::move(v);
    return *this;
  }
  const std::shared_ptr<BatchSampler>& batch_sampler() const { return batch_sampler_; }
  // Drops the last incomplete batch (of the epoch; of each worker's stream for iterable data).
  DataLoaderOptions& drop_last(bool v) {
    drop_last_ = v;
    return *this;
  }
  bool drop_last() const { return drop_last_; }
  // Worker threads; 0 loads in the calling thread (PyTorch's num_workers).
  DataLoaderOptions& workers(int64_t v) {
    workers_ = v;
    return *this;
  }
  int64_t workers() const { return workers_; }
  // Jobs (batch requests) the libtorch-shaped loaders keep in flight: 2 x workers by default.
  // kiln::data::DataLoader takes prefetch_factor instead and rejects this option.
  DataLoaderOptions& max_jobs(std::optional<int64_t> v) {
    max_jobs_ = v;
    return *this;
  }
  std::optional<int64_t> max_jobs() const { return max_jobs_; }
  // Batches each worker prepares ahead (2 by default; only with workers > 0). The queue of
  // ready batches holds at most workers x prefetch_factor: workers wait when it is full.
  DataLoaderOptions& prefetch_factor(int64_t v) {
    prefetch_factor_ = v;
    return *this;
  }
  std::optional<int64_t> prefetch_factor_opt() const { return prefetch_factor_; }
  int64_t prefetch_factor() const { return prefetch_factor_.value_or(2); }
  // Batches arrive in sampler order (true, the default) or as soon as a worker has one.
  DataLoaderOptions& enforce_ordering(bool v) {
    enforce_ordering_ = v;
    return *this;
  }
  bool enforce_ordering() const { return enforce_ordering_; }
  // Keeps the worker threads between epochs (only with workers > 0).
  DataLoaderOptions& persistent_workers(bool v) {
    persistent_workers_ = v;
    return *this;
  }
  bool persistent_workers() const { return persistent_workers_; }
  // Puts batches' tensors in page-locked host memory of pin_memory_device (default: the
  // default device) when its plugin offers it, for faster copies; a no-op otherwise (the CPU).
  DataLoaderOptions& pin_memory(bool v) {
    pin_memory_ = v;
    return *this;
  }
  bool pin_memory() const { return pin_memory_; }
  DataLoaderOptions& pin_memory_device(Device v) {
    pin_memory_device_ = v;
    return *this;
  }
  std::optional<Device> pin_memory_device() const { return pin_memory_device_; }
  // Called once in each worker thread before it loads anything.
  DataLoaderOptions& worker_init_fn(std::function<void(const WorkerInfo&)> v) {
    worker_init_fn_ = std::move(v);
    return *this;
  }
  const std::function<void(const WorkerInfo&)>& worker_init_fn() const { return worker_init_fn_; }
  // Makes a batch from samples (collate() by default).
  DataLoaderOptions& collate_fn(CollateFn v) {
    collate_fn_ = std::move(v);
    return *this;
  }
  const CollateFn& collate_fn() const { return collate_fn_; }
  // Seed of epoch e's order and worker seeds: derived from (seed, e) when given; otherwise
  // drawn from kiln's default generator at each epoch (reproducible after kiln::manual_seed).
  DataLoaderOptions& seed(std::optional<uint64_t> v) {
    seed_ = v;
    return *this;
  }
  std::optional<uint64_t> seed() const { return seed_; }
  // How long to wait for one batch before raising kiln::Error (0: forever); also how long
  // stopping the workers waits for one stuck in its dataset before abandoning it (5 s when 0;
  // see DataLoader).
  DataLoaderOptions& timeout(std::chrono::milliseconds v) {
    timeout_ = v;
    return *this;
  }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::optional<int64_t> batch_size_ = 1;
  bool shuffle_ = false;
  std::shared_ptr<Sampler> sampler_;
  std::shared_ptr<BatchSampler> batch_sampler_;
  bool drop_last_ = false;
  int64_t workers_ = 0;
  std::optional<int64_t> max_jobs_;
  std::optional<int64_t> prefetch_factor_;
  bool enforce_ordering_ = true;
  bool persistent_workers_ = false;
  bool pin_memory_ = false;
  std::optional<Device> pin_memory_device_;
  std::function<void(const WorkerInfo&)> worker_init_fn_;
  CollateFn collate_fn_;
  std::optional<uint64_t> seed_;
  std::chrono::milliseconds timeout_{0};
};

// The options of a libtorch-shaped loader with every default filled in, as libtorch's
// FullDataLoaderOptions: max_jobs defaults to 2 x workers and timeout is nullopt when not set.
// The constructor checks them (kiln::ValueError naming the option): batch_size set and
// positive, workers and max_jobs non-negative (max_jobs positive with workers), timeout not
// negative, and none of kiln::data::DataLoader's own options (shuffle, sampler, batch_sampler,
// prefetch_factor, persistent_workers, pin_memory, worker_init_fn, collate_fn, seed) set.
struct KILN_API FullDataLoaderOptions {
  explicit FullDataLoaderOptions(const DataLoaderOptions& options);

  size_t batch_size;
  size_t workers;
  size_t max_jobs;
  std::optional<std::chrono::milliseconds> timeout;
  bool enforce_ordering;
  bool drop_last;
};

}  // namespace kiln::data
