// JobPool: the DataLoader's worker threads (core/src/data/worker_pool.h) running type-erased jobs,
// for the libtorch-shaped loaders (kiln/data/dataloader/base.h) and ChunkDataset's preloaders,
// whose batch types are templates. It keeps the worker pool's guarantees: a job's exception is
// returned to the caller, every wait is bounded by the timeout given, and stopping waits for a
// stuck job only for the grace period before abandoning its thread (Note [Stuck workers]) — so a
// job must own (through shared_ptr) everything it touches.
#pragma once

#include <kiln/export.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>

namespace kiln::data::detail {

class KILN_API JobPool {
 public:
  // A job runs in worker `worker` (0 .. workers-1) and returns its value (may be null).
  using Job = std::function<std::shared_ptr<void>(int64_t worker)>;
  struct Outcome {
    std::shared_ptr<void> value;  // the job's value, when it returned
    std::exception_ptr error;     // what it threw, when it threw
    int64_t worker = 0;
  };

  // Starts `workers` (> 0) threads; stopping waits `grace` for a busy one before abandoning it.
  JobPool(int64_t workers, std::chrono::milliseconds grace);
  // shutdown().
  ~JobPool();
  JobPool(const JobPool&) = delete;
  JobPool& operator=(const JobPool&) = delete;

  int64_t workers() const;
  // Queues a job on the next worker in turn (round robin).
  void submit(Job job);
  // Jobs submitted since the last restart() whose outcome has not been taken.
  int64_t in_flight() const;
  // The next outcome: of the oldest job in flight when `ordered`, else of whichever finishes
  // first; nullopt when no job is in flight. Waits at most `timeout` (0: forever) and then throws
  // kiln::Error ("Timeout in DataLoader queue while waiting for next batch (timeout was N ms)");
  // throws kiln::Error when the pool was shut down.
  std::optional<Outcome> take(bool ordered, std::chrono::milliseconds timeout);
  // Drops queued jobs and unread outcomes. With `wait_running`, also waits (at most the grace
  // period, then throws kiln::Error) until no job submitted before is still running, for callers
  // that are about to change what those jobs use.
  void restart(bool wait_running);
  // Stops the threads: joins them, abandoning those still busy after the grace period
  // (idempotent). Returns how many it abandoned.
  int64_t shutdown();
  bool stopped() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln::data::detail
