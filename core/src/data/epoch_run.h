// One epoch of a DataLoader: which task goes to which worker, in which order batches are
// delivered, and the bookkeeping of the loader's state. Internal to libkiln_core.
//
// Note [Order of batches]
// Map-style: batch k of the epoch's plan is task k; with enforce_ordering, batches are delivered
// by k whatever worker finishes first. Iterable: task k goes to the workers in turn (0, 1, ...,
// skipping those whose stream has ended); with enforce_ordering batches are delivered by k, so
// the sequence is worker 0's first batch, worker 1's first, ..., worker 0's second, ... and, once
// a stream ends, the others' in the same cyclic order. That order depends only on each worker's
// stream, not on timing, which is what makes resumption exact: each worker skips the samples it
// had delivered and the turn continues after the worker of the last delivered batch.
#pragma once

#include "loader_state.h"
#include "worker_pool.h"

#include <kiln/data/dataloader_options.h>

#include <memory>
#include <optional>
#include <vector>

namespace kiln::data::detail {

class EpochRun {
 public:
  // `pool` is null for an inline loader (workers(0)). `plan` holds the batches' indices of a
  // map-style epoch (one index per entry without batching); empty for iterable datasets.
  EpochRun(std::shared_ptr<const EpochSpec> spec, const DataLoaderOptions& options,
           std::shared_ptr<LoaderState> state, std::shared_ptr<WorkerPool> pool, bool persistent,
           std::vector<std::vector<int64_t>> plan, int64_t first_worker);
  // Stops the epoch (see cancel()).
  ~EpochRun();
  EpochRun(const EpochRun&) = delete;
  EpochRun& operator=(const EpochRun&) = delete;

  // Loads the next batch into current(); false at the end of the epoch. Raises a worker's
  // error (the epoch is then over).
  bool advance();
  Sample& current() { return current_; }
  // Batches this run has delivered.
  int64_t position() const { return delivered_; }
  // Ends the epoch now: drops queued work and, unless the workers are persistent, joins them.
  void cancel();
  bool finished() const { return finished_; }

 private:
  bool advance_inline();
  bool advance_workers();
  void dispatch();
  void submit(int64_t worker);
  void deliver(Result& result);
  void finish();
  // Raises the timeout error, after stopping the pool (waiting for batch `seq`).
  [[noreturn]] void timed_out(std::optional<int64_t> seq);
  [[noreturn]] void fail(std::exception_ptr error, const std::string& context);
  std::string describe_task(int64_t seq, int64_t worker) const;

  std::shared_ptr<const EpochSpec> spec_;
  DataLoaderOptions options_;
  std::shared_ptr<LoaderState> state_;
  std::shared_ptr<WorkerPool> pool_;
  bool persistent_;
  std::vector<std::vector<int64_t>> plan_;
  bool iterable_;
  int64_t workers_;
  int64_t prefetch_;

  int64_t first_batch_ = 0;   // the epoch's batch number of this run's first batch
  int64_t next_seq_ = 0;      // of the next task submitted
  int64_t next_deliver_ = 0;  // of the next result delivered (ordered)
  int64_t delivered_ = 0;
  int64_t rr_ = 0;  // the worker whose turn is next (iterable)
  std::vector<int64_t> outstanding_;
  std::vector<bool> active_;
  std::vector<int64_t> seq_worker_;  // the worker of each task, by seq
  int64_t in_flight_ = 0;
  TaskLoader inline_loader_;
  Sample current_;
  bool finished_ = false;
};

}  // namespace kiln::data::detail
