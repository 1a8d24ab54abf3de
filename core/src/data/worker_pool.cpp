// The DataLoader's worker threads and the loading of one task. See worker_pool.h.
#include "worker_pool.h"

#include "internal.h"

#include <kiln/data/collate.h>
#include <kiln/data/pin_memory.h>
#include <kiln/error.h>

namespace kiln::data::detail {

// --- TaskLoader -------------------------------------------------------------------------------

void TaskLoader::reset() {
  stream_.reset();
  stream_spec_.reset();
  stream_open_ = false;
  stream_done_ = false;
}

void TaskLoader::load(const std::shared_ptr<const EpochSpec>& spec_ptr, const WorkerInfo& worker,
                      const Task& task, Result& result) {
  const EpochSpec& spec = *spec_ptr;
  result.kind = Result::Kind::Batch;
  if (spec.map_dataset) {
    Dataset& ds = *spec.map_dataset;
    if (!spec.batch_size) {
      result.batch = ds.get(task.indices.at(0));
    } else if (spec.collate_fn) {
      std::vector<Sample> samples;
      samples.reserve(task.indices.size());
      for (int64_t i : task.indices) {
        try {
          samples.push_back(ds.get(i));
        } catch (...) {
          rethrow_with_context(std::current_exception(), kiln::detail::str("sample index ", i,
                                                                           ": "));
        }
      }
      result.batch = spec.collate_fn(std::move(samples));
    } else {
      result.batch = ds.get_batch(task.indices);
    }
    result.samples = static_cast<int64_t>(task.indices.size());
  } else {
    if (!stream_open_ || stream_token_ != task.token) {
      reset();
      stream_spec_ = spec_ptr;
      stream_token_ = task.token;
      stream_open_ = true;
      stream_ = spec.iterable_dataset->iter(worker);
      int64_t skip = worker.id < static_cast<int64_t>(spec.skip.size())
                         ? spec.skip[static_cast<size_t>(worker.id)]
                         : 0;
      if (skip > 0 && stream_) stream_->skip(skip);
      if (spec.track_provenance && stream_) stream_->take_provenance();  // not delivered
    }
    if (stream_done_ || !stream_) {
      result.kind = Result::Kind::End;
      return;
    }
    int64_t n = 0;
    if (!spec.batch_size) {
      std::optional<Sample> s = stream_->next();
      if (s) {
        result.batch = std::move(*s);
        n = 1;
      }
    } else if (spec.collate_fn) {
      std::vector<Sample> samples;
      while (static_cast<int64_t>(samples.size()) < *spec.batch_size) {
        std::optional<Sample> s = stream_->next();
        if (!s) break;
        samples.push_back(std::move(*s));
      }
      n = static_cast<int64_t>(samples.size());
      if (n > 0) result.batch = spec.collate_fn(std::move(samples));
    } else {
      n = stream_->next_batch(*spec.batch_size, result.batch);
    }
    if (n == 0 || (spec.drop_last && spec.batch_size && n < *spec.batch_size)) {
      stream_done_ = true;
      result.kind = Result::Kind::End;
      result.batch = Sample();
      return;
    }
    result.samples = n;
    if (spec.track_provenance) result.provenance = stream_->take_provenance();
  }
  if (spec.pin_device) result.batch = pin_memory(result.batch, *spec.pin_device);
}

// --- WorkerPool -------------------------------------------------------------------------------

WorkerPool::WorkerPool(int64_t workers, std::function<void(const WorkerInfo&)> init_fn,
                       const WorkerInfo& first)
    : init_fn_(std::move(init_fn)), tasks_(static_cast<size_t>(workers)) {
  threads_.reserve(static_cast<size_t>(workers));
  try {
    for (int64_t id = 0; id < workers; ++id) {
      WorkerInfo info = first;
      info.id = id;
      info.num_workers = workers;
      info.seed = first.base_seed + static_cast<uint64_t>(id);
      threads_.emplace_back([this, id, info] { run(id, info); });
    }
  } catch (...) {
    shutdown();  // std::system_error from a thread that could not start
    throw;
  }
}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::begin_epoch(std::shared_ptr<const EpochSpec> spec) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& q : tasks_) q.clear();
  results_.clear();
  spec_ = std::move(spec);
}

void WorkerPool::submit(int64_t worker, Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_[static_cast<size_t>(worker)].push_back(std::move(task));
  }
  work_cv_.notify_all();
}

std::optional<Result> WorkerPool::take(std::optional<int64_t> seq,
                                       std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto ready = [&] { return seq ? results_.count(*seq) > 0 : !results_.empty(); };
  if (timeout.count() > 0) {
    if (!result_cv_.wait_for(lock, timeout, ready)) return std::nullopt;
  } else {
    result_cv_.wait(lock, ready);
  }
  auto it = seq ? results_.find(*seq) : results_.begin();
  Result r = std::move(it->second);
  results_.erase(it);
  return r;
}

void WorkerPool::cancel() {
  std::map<int64_t, Result> dropped;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& q : tasks_) q.clear();
  dropped.swap(results_);
  spec_.reset();
}

void WorkerPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
    for (auto& q : tasks_) q.clear();
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  results_.clear();
  spec_.reset();
}

void WorkerPool::run(int64_t id, WorkerInfo first) {
  set_worker_info(first);
  std::exception_ptr init_error;
  if (init_fn_) {
    try {
      init_fn_(first);
    } catch (...) {
      init_error = std::current_exception();
    }
  }
  TaskLoader loader;
  for (;;) {
    Task task;
    std::shared_ptr<const EpochSpec> spec;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return stop_ || !tasks_[static_cast<size_t>(id)].empty(); });
      if (stop_) break;
      task = std::move(tasks_[static_cast<size_t>(id)].front());
      tasks_[static_cast<size_t>(id)].pop_front();
      spec = spec_;
    }
    if (!spec || spec->token != task.token) continue;
    WorkerInfo info = spec->info;
    info.id = id;
    info.seed = info.base_seed + static_cast<uint64_t>(id);
    set_worker_info(info);
    Result result;
    result.seq = task.seq;
    result.worker = id;
    try {
      if (init_error) {
        rethrow_with_context(init_error, "worker_init_fn: ");
      }
      loader.load(spec, info, task, result);
    } catch (...) {
      result.kind = Result::Kind::Error;
      result.batch = Sample();
      result.error = std::current_exception();
      loader.finish();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (spec_ && spec_->token == task.token) {
        results_.emplace(task.seq, std::move(result));
        result_cv_.notify_all();
      }
    }
  }
  loader.reset();  // the stream closes in its own thread
  set_worker_info(std::nullopt);
}

}  // namespace kiln::data::detail
