// The DataLoader's worker threads. See worker_pool.h; a task is loaded by task_loader.cpp.
#include "worker_pool.h"

#include "internal.h"

#include <kiln/data/dataloader.h>
#include <kiln/error.h>

#include "../runtime.h"

#include <algorithm>

namespace kiln::data::detail {

// --- WorkerPool -------------------------------------------------------------------------------

namespace {

std::atomic<int64_t> g_abandoned{0};

// The epoch token the calling worker's task belongs to, and the pool's current one.
thread_local const std::atomic<uint64_t>* t_pool_token = nullptr;
thread_local uint64_t t_task_token = 0;

}  // namespace

void check_cancelled() {
  if (t_pool_token != nullptr && t_pool_token->load(std::memory_order_relaxed) != t_task_token) {
    throw Cancelled{};
  }
}

// What the threads share with the pool; each thread owns a reference (Note [Stuck workers]).
struct WorkerPool::Shared {
  std::function<void(const WorkerInfo&)> init_fn;
  std::mutex mutex;
  std::condition_variable work_cv, result_cv, exit_cv;
  std::vector<std::deque<Task>> tasks;
  std::map<int64_t, Result> results;
  std::shared_ptr<const EpochSpec> spec;
  std::atomic<uint64_t> token{0};  // spec's token, 0 when none; read by check_cancelled()
  bool stop = false;
  std::vector<bool> running;    // per thread: not ended yet
  std::vector<bool> abandoned;  // per thread: detached while running
};

WorkerPool::WorkerPool(int64_t workers, std::function<void(const WorkerInfo&)> init_fn,
                       const WorkerInfo& first, std::chrono::milliseconds grace)
    : shared_(std::make_shared<Shared>()), workers_(workers), grace_(grace) {
  shared_->init_fn = std::move(init_fn);
  shared_->tasks.resize(static_cast<size_t>(workers));
  shared_->running.assign(static_cast<size_t>(workers), false);
  shared_->abandoned.assign(static_cast<size_t>(workers), false);
  threads_.reserve(static_cast<size_t>(workers));
  try {
    for (int64_t id = 0; id < workers; ++id) {
      WorkerInfo info = first;
      info.id = id;
      info.num_workers = workers;
      info.seed = first.base_seed + static_cast<uint64_t>(id);
      {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->running[static_cast<size_t>(id)] = true;
      }
      try {
        threads_.emplace_back([shared = shared_, id, info] { run(shared, id, info); });
      } catch (...) {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->running[static_cast<size_t>(id)] = false;
        throw;
      }
    }
  } catch (...) {
    shutdown();  // std::system_error from a thread that could not start
    throw;
  }
}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::begin_epoch(std::shared_ptr<const EpochSpec> spec) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  for (auto& q : shared_->tasks) q.clear();
  shared_->results.clear();
  shared_->token.store(spec ? spec->token : 0);
  shared_->spec = std::move(spec);
}

void WorkerPool::submit(int64_t worker, Task task) {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->tasks[static_cast<size_t>(worker)].push_back(std::move(task));
  }
  shared_->work_cv.notify_all();
}

std::optional<Result> WorkerPool::take(std::optional<int64_t> seq,
                                       std::chrono::milliseconds timeout) {
  Shared& sh = *shared_;
  std::unique_lock<std::mutex> lock(sh.mutex);
  auto has = [&] { return seq ? sh.results.count(*seq) > 0 : !sh.results.empty(); };
  auto ready = [&] { return sh.stop || has(); };
  if (timeout.count() > 0) {
    sh.result_cv.wait_for(lock, timeout, ready);
  } else {
    sh.result_cv.wait(lock, ready);  // the loader's timeout is 0: forever, as asked
  }
  if (!has()) return std::nullopt;
  auto it = seq ? sh.results.find(*seq) : sh.results.begin();
  Result r = std::move(it->second);
  sh.results.erase(it);
  return r;
}

void WorkerPool::cancel() {
  std::map<int64_t, Result> dropped;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(shared_->mutex);
  for (auto& q : shared_->tasks) q.clear();
  dropped.swap(shared_->results);
  shared_->spec.reset();
  shared_->token.store(0);
}

bool WorkerPool::stopped() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->stop;
}

int64_t WorkerPool::shutdown() {
  std::lock_guard<std::mutex> threads_lock(threads_mutex_);
  Shared& sh = *shared_;
  {
    std::lock_guard<std::mutex> lock(sh.mutex);
    sh.stop = true;
    sh.token.store(0);
    for (auto& q : sh.tasks) q.clear();
  }
  sh.work_cv.notify_all();
  sh.result_cv.notify_all();
  if (threads_.empty()) return 0;
  std::vector<int64_t> stuck;
  {
    std::unique_lock<std::mutex> lock(sh.mutex);
    auto all_ended = [&] {
      return std::none_of(sh.running.begin(), sh.running.end(), [](bool r) { return r; });
    };
    sh.exit_cv.wait_for(lock, grace_, all_ended);
    for (size_t id = 0; id < sh.running.size(); ++id) {
      if (sh.running[id]) {
        sh.abandoned[id] = true;
        g_abandoned.fetch_add(1);
        stuck.push_back(static_cast<int64_t>(id));
      }
    }
  }
  for (size_t id = 0; id < threads_.size(); ++id) {
    if (!threads_[id].joinable()) continue;
    bool abandon = std::find(stuck.begin(), stuck.end(), static_cast<int64_t>(id)) != stuck.end();
    if (abandon) {
      threads_[id].detach();  // it owns what it uses: Note [Stuck workers]
    } else {
      threads_[id].join();  // it has ended its loop: only its teardown is left
    }
  }
  threads_.clear();
  std::map<int64_t, Result> dropped;
  std::shared_ptr<const EpochSpec> spec;
  {
    std::lock_guard<std::mutex> lock(sh.mutex);
    dropped.swap(sh.results);
    spec.swap(sh.spec);
  }
  for (int64_t id : stuck) {
    kiln::detail::warn(kiln::detail::str(
        "DataLoader: worker ", id, " (of ", workers_, ") did not stop within ", grace_.count(),
        " ms (stuck in its dataset?): it is abandoned and ends on its own when the call it is "
        "in returns (",
        abandoned_workers(), " abandoned worker thread(s) still running)"));
  }
  return static_cast<int64_t>(stuck.size());
}

void WorkerPool::run(std::shared_ptr<Shared> shared, int64_t id, WorkerInfo first) {
  Shared& sh = *shared;
  auto slot = static_cast<size_t>(id);
  set_worker_info(first);
  std::exception_ptr init_error;
  if (sh.init_fn) {
    try {
      sh.init_fn(first);
    } catch (...) {
      init_error = std::current_exception();
    }
  }
  TaskLoader loader;
  for (;;) {
    Task task;
    std::shared_ptr<const EpochSpec> spec;
    {
      std::unique_lock<std::mutex> lock(sh.mutex);
      sh.work_cv.wait(lock, [&] { return sh.stop || !sh.tasks[slot].empty(); });
      if (sh.stop) break;
      task = std::move(sh.tasks[slot].front());
      sh.tasks[slot].pop_front();
      spec = sh.spec;
    }
    if (!spec || spec->token != task.token) continue;
    WorkerInfo info = spec->info;
    info.id = id;
    info.seed = info.base_seed + static_cast<uint64_t>(id);
    set_worker_info(info);
    Result result;
    result.seq = task.seq;
    result.worker = id;
    t_pool_token = &sh.token;
    t_task_token = task.token;
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
    t_pool_token = nullptr;
    {
      std::lock_guard<std::mutex> lock(sh.mutex);
      if (sh.spec && sh.spec->token == task.token) {
        sh.results.emplace(task.seq, std::move(result));
        sh.result_cv.notify_all();
      }
    }
  }
  loader.reset();  // the stream closes in its own thread
  set_worker_info(std::nullopt);
  std::lock_guard<std::mutex> lock(sh.mutex);
  sh.running[slot] = false;
  if (sh.abandoned[slot]) g_abandoned.fetch_sub(1);
  sh.exit_cv.notify_all();
}

}  // namespace kiln::data::detail

namespace kiln::data {

int64_t abandoned_workers() { return detail::g_abandoned.load(); }

}  // namespace kiln::data
