// The DataLoader's worker threads, and the loading of one task (task_loader.cpp). Internal to
// libkiln_core.
//
// The thread that iterates (the "main" thread) hands each worker tasks through its own queue and
// takes results from one table keyed by the task's sequence number; see epoch_run.h for the
// order of tasks. Each epoch has a token: tasks and results of an earlier epoch are dropped, so a
// pool of persistent workers moves to the next epoch without draining the last one.
#pragma once

#include <kiln/data/dataloader_options.h>
#include <kiln/data/dataset.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace kiln::data::detail {

// What every worker needs to know about one epoch. Immutable once the epoch has begun.
struct EpochSpec {
  uint64_t token = 0;
  std::shared_ptr<Dataset> map_dataset;  // one of the two
  std::shared_ptr<IterableDataset> iterable_dataset;
  std::optional<int64_t> batch_size;  // nullopt: no batching
  bool drop_last = false;
  CollateFn collate_fn;       // empty: collate()
  WorkerInfo info;            // id and seed are set per worker
  std::vector<int64_t> skip;  // iterable: samples worker w skips first
  bool track_provenance = false;
  std::optional<Device> pin_device;
};

struct Task {
  uint64_t token = 0;
  int64_t seq = 0;
  std::vector<int64_t> indices;  // map-style: the batch's indices
  // A job of JobPool (kiln/data/detail/job_pool.h): run instead of loading, its value returned.
  std::function<std::shared_ptr<void>(int64_t worker)> job;
};

struct Result {
  enum class Kind { Batch, End, Error };
  int64_t seq = 0;
  int64_t worker = 0;
  Kind kind = Kind::End;
  Sample batch;
  int64_t samples = 0;          // in the batch
  Sample provenance;            // the stream's take_provenance(), when tracked
  std::shared_ptr<void> value;  // a JobPool job's
  std::exception_ptr error;
};

// Loads one task in the calling thread: a map-style batch, or the next batch of `stream`
// (opened on first use). Shared by the workers and the inline (workers(0)) loader.
class TaskLoader {
 public:
  // Fills result.kind, batch, samples and provenance; throws what the dataset throws.
  void load(const std::shared_ptr<const EpochSpec>& spec, const WorkerInfo& worker,
            const Task& task, Result& result);
  // Later tasks of this epoch get End (after an error in the stream).
  void finish() { stream_done_ = true; }
  // Forgets the stream (after an error, or a new epoch).
  void reset();

 private:
  // A map-style task: the batch of its indices.
  void load_indices(const EpochSpec& spec, const Task& task, Result& result);
  // An iterable task: the next batch of this worker's stream (End once it has ended).
  void load_from_stream(const std::shared_ptr<const EpochSpec>& spec, const WorkerInfo& worker,
                        const Task& task, Result& result);
  // Opens the worker's stream of epoch `token`, skipping what it delivered before a resume.
  void open_stream(const std::shared_ptr<const EpochSpec>& spec, const WorkerInfo& worker,
                   uint64_t token);

  std::unique_ptr<SampleStream> stream_;
  std::shared_ptr<const EpochSpec> stream_spec_;  // keeps the dataset alive with the stream
  uint64_t stream_token_ = 0;
  bool stream_open_ = false;
  bool stream_done_ = false;
};

// Note [Stuck workers]
// A dataset call can block forever (a hung network read, a deadlock in user code), and a thread
// cannot be killed. So stopping a pool waits for its threads only until a deadline (the loader's
// timeout, or 5 s when it has none, as PyTorch's _shutdown_workers waits for a worker process),
// then detaches the threads still running: they are abandoned, counted by abandoned_workers(),
// and end on their own when the call they are in returns. Everything an abandoned thread may
// touch afterwards is its own: the queues and flags live in WorkerPool::Shared, held by each
// thread's shared_ptr; the epoch's spec (and through it the dataset) and its stream are held by
// the thread's TaskLoader and locals; its result is dropped, as the epoch token has changed.
// Healthy workers stop within one sample: the loops over a batch's samples call
// check_cancelled(), which throws Cancelled once the task's epoch is over.
class WorkerPool {
 public:
  // Starts `workers` threads; each calls init_fn (if any) with `first` (id and seed set) once.
  // Stopping waits at most `grace` for the threads before abandoning them (Note [Stuck workers]).
  WorkerPool(int64_t workers, std::function<void(const WorkerInfo&)> init_fn,
             const WorkerInfo& first, std::chrono::milliseconds grace);
  // shutdown().
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int64_t size() const { return workers_; }
  // Starts epoch `spec`: drops the tasks and results of any earlier epoch.
  void begin_epoch(std::shared_ptr<const EpochSpec> spec);
  // Queues a task for one worker.
  void submit(int64_t worker, Task task);
  // The result with sequence number `seq` (any result when nullopt), waiting at most `timeout`
  // (0: forever); nullopt when the time ran out or the pool was shut down.
  std::optional<Result> take(std::optional<int64_t> seq, std::chrono::milliseconds timeout);
  // Drops the current epoch's queued tasks and unread results (early exit, errors); a worker in
  // a task stops at its next sample.
  void cancel();
  // Stops the threads: joins those that end within the grace period and abandons the others
  // (idempotent). Returns how many it abandoned.
  int64_t shutdown();
  bool stopped() const;

 private:
  struct Shared;
  static void run(std::shared_ptr<Shared> shared, int64_t id, WorkerInfo first);

  std::shared_ptr<Shared> shared_;
  int64_t workers_;
  std::chrono::milliseconds grace_;
  std::mutex threads_mutex_;  // shutdown() from the loader's and the iterator's threads
  std::vector<std::thread> threads_;
};

}  // namespace kiln::data::detail
