// DataLoaderBase: what the libtorch-shaped loaders (StatelessDataLoader, StatefulDataLoader)
// share; make_data_loader (kiln/data/dataloader.h) makes them.
//
//   auto loader = kiln::data::make_data_loader(dataset, DataLoaderOptions(64).workers(2));
//   for (auto& batch : *loader) { ... }   // one epoch; again for the next
//
// Model, as libtorch's:
//  - begin() starts an epoch: resets the sampler (stateless) or the dataset (stateful) and, with
//    workers, submits max_jobs batch requests; each batch taken submits the next request. A
//    batch is loaded when the iterator first needs it.
//  - workers(0) loads in the calling thread. With workers, the jobs run on kiln's DataLoader
//    worker pool (kiln/data/detail/job_pool.h): a stateless loader gives each worker its own copy
//    of the dataset (a SharedBatchDataset shares one); a stateful loader's workers share the one
//    dataset. Batches arrive in request order with enforce_ordering (the default), else as
//    workers finish.
//  - A worker's exception is raised by the iterator as a WorkerException (its original in
//    original_exception); waiting longer than the timeout option for a batch raises kiln::Error
//    ("Timeout ..."). Without a timeout, a wait is unbounded, as libtorch's.
//  - begin() while an iterator of an unfinished epoch is alive raises kiln::Error when the loader
//    has workers (their jobs belong to that epoch); without workers the earlier iterators are
//    ended, and using one raises. So does iterating one loader from two threads at once, and
//    iterating after join() (which stops the workers; the destructor calls it).
//  - join() and the destructor wait for a worker stuck in its dataset only for the timeout (5 s
//    without one) before abandoning its thread (Note [Stuck workers] in the worker pool): the jobs
//    own what they use, so the abandoned thread never touches the freed loader.
#pragma once

#include <kiln/data/dataloader_options.h>
#include <kiln/data/detail/job_pool.h>
#include <kiln/data/iterator.h>
#include <kiln/data/worker_exception.h>
#include <kiln/error.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::data {

namespace detail {
// The batch of `request` from `dataset`, as an optional (a stateful dataset's already is one).
template <typename Batch, typename Dataset, typename Request>
std::optional<Batch> fetch_batch(Dataset& dataset, Request request) {
  if constexpr (Dataset::is_stateful) {
    return dataset.get_batch(std::move(request));
  } else {
    return std::optional<Batch>(dataset.get_batch(std::move(request)));
  }
}
}  // namespace detail

template <typename Dataset, typename Batch, typename BatchRequest>
class DataLoaderBase {
 public:
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;

  // Checks the options (FullDataLoaderOptions); `main_thread_dataset` is the one loaded from
  // without workers (and reset by a stateful loader). The subclass then starts the workers.
  DataLoaderBase(const DataLoaderOptions& options, std::shared_ptr<Dataset> main_thread_dataset)
      : options_(options), main_thread_dataset_(std::move(main_thread_dataset)) {}
  // join().
  virtual ~DataLoaderBase() { join(); }
  DataLoaderBase(const DataLoaderBase&) = delete;
  DataLoaderBase& operator=(const DataLoaderBase&) = delete;

  // Starts an epoch (see above).
  Iterator<Batch> begin() {
    Busy busy(busy_);
    KILN_CHECK(!joined_, "DataLoader: begin() after join(): its worker threads are stopped; ",
               "make a new loader to iterate again");
    if (auto live = current_.lock(); live && !live->exhausted() && pool_) {
      throw Error("Attempted to get a new DataLoader iterator while another iterator is not yet "
                  "exhausted (its batches are being loaded by the workers): finish or destroy the "
                  "earlier iterator first");
    }
    ++epoch_;
    if (pool_) pool_->restart(/*wait_running=*/shares_dataset_);
    reset();
    if (pool_) prefetch(options_.max_jobs);
    auto state = std::make_shared<detail::IteratorState<Batch>>(
        [this, epoch = epoch_, alive = std::weak_ptr<bool>(alive_)]() -> std::optional<Batch> {
          KILN_CHECK(alive.lock() != nullptr, "DataLoader: an iterator was used after its ",
                     "loader was destroyed");
          return next(epoch);
        });
    current_ = state;
    return Iterator<Batch>(std::move(state));
  }
  // The past-the-end sentinel.
  Iterator<Batch> end() { return Iterator<Batch>(); }

  // Stops the worker threads (idempotent); the loader cannot be iterated afterwards.
  void join() {
    if (joined_.exchange(true)) return;
    if (pool_) pool_->shutdown();
  }

  const FullDataLoaderOptions& options() const noexcept { return options_; }

 protected:
  // Starts the workers, each using its entry of `worker_datasets` (one per worker); `shared`
  // when they are one dataset, so that begin() waits for the jobs of the last epoch to end
  // before the dataset is reset.
  void start_workers(std::vector<std::shared_ptr<Dataset>> worker_datasets, bool shared) {
    if (options_.workers == 0) return;
    worker_datasets_ =
        std::make_shared<std::vector<std::shared_ptr<Dataset>>>(std::move(worker_datasets));
    shares_dataset_ = shared;
    auto grace = options_.timeout.value_or(std::chrono::milliseconds(5000));
    pool_ = std::make_unique<detail::JobPool>(static_cast<int64_t>(options_.workers), grace);
  }
  // The next batch request of the epoch; nullopt at its end.
  virtual std::optional<BatchRequest> get_batch_request() = 0;
  // Starts an epoch: the sampler's or the dataset's reset().
  virtual void reset() = 0;

  FullDataLoaderOptions options_;
  std::shared_ptr<Dataset> main_thread_dataset_;

 private:
  // Marks the loader busy for a scope: a second thread iterating at once raises.
  struct Busy {
    explicit Busy(std::atomic<bool>& flag) : flag_(flag) {
      KILN_CHECK(!flag_.exchange(true), "DataLoader: iterated from two threads at once; a ",
                 "loader's iterators must be used by one thread at a time");
    }
    ~Busy() { flag_ = false; }
    std::atomic<bool>& flag_;
  };

  std::optional<Batch> next(uint64_t epoch) {
    Busy busy(busy_);
    KILN_CHECK(!joined_, "DataLoader: the next batch was asked for after join(): its worker ",
               "threads are stopped; make a new loader to iterate again");
    KILN_CHECK(epoch == epoch_, "DataLoader: this iterator's epoch was ended by a later ",
               "begin(); iterate with the newest iterator");
    if (!pool_) {
      std::optional<BatchRequest> request = get_batch_request();
      if (!request) return std::nullopt;
      return detail::fetch_batch<Batch>(*main_thread_dataset_, std::move(*request));
    }
    auto timeout = options_.timeout.value_or(std::chrono::milliseconds(0));
    while (auto outcome = pool_->take(options_.enforce_ordering, timeout)) {
      if (outcome->error) {
        prefetch(1);
        raise_worker_error(outcome->error);
      }
      auto batch = std::static_pointer_cast<std::optional<Batch>>(outcome->value);
      if (batch && *batch) {
        prefetch(1);
        return std::move(*batch);
      }
    }
    return std::nullopt;  // no job in flight: every request was answered
  }

  // A worker's exception as a WorkerException (one the dataset raised already is kept as it is,
  // as ChunkDataset's preloaders' are).
  [[noreturn]] static void raise_worker_error(const std::exception_ptr& error) {
    try {
      std::rethrow_exception(error);
    } catch (const WorkerException&) {
      throw;
    } catch (...) {
      throw WorkerException(std::current_exception());
    }
  }

  // Submits up to `jobs` more batch requests to the workers.
  void prefetch(size_t jobs) {
    for (size_t i = 0; i < jobs; ++i) {
      std::optional<BatchRequest> request = get_batch_request();
      if (!request) return;
      pool_->submit([datasets = worker_datasets_, request = std::move(*request)](
                        int64_t worker) mutable -> std::shared_ptr<void> {
        Dataset& dataset = *datasets->at(static_cast<size_t>(worker));
        return std::make_shared<std::optional<Batch>>(
            detail::fetch_batch<Batch>(dataset, std::move(request)));
      });
    }
  }

  std::shared_ptr<std::vector<std::shared_ptr<Dataset>>> worker_datasets_;
  bool shares_dataset_ = false;
  std::unique_ptr<detail::JobPool> pool_;
  uint64_t epoch_ = 0;
  std::atomic<bool> joined_{false};
  std::atomic<bool> busy_{false};
  std::weak_ptr<detail::IteratorState<Batch>> current_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace kiln::data
