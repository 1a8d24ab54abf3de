// JobPool: type-erased jobs on the DataLoader's WorkerPool. See kiln/data/detail/job_pool.h.
#include <kiln/data/detail/job_pool.h>

#include "worker_pool.h"

#include <kiln/data/detail/queue.h>
#include <kiln/error.h>

#include <set>

namespace kiln::data::detail {

// Jobs running now, shared with the job wrappers (so an abandoned thread never touches the pool).
struct Running {
  std::mutex mutex;
  std::condition_variable done;
  uint64_t token = 0;  // the current epoch's: a job of an older one is skipped when it starts
  int64_t count = 0;
};

struct JobPool::State {
  std::unique_ptr<WorkerPool> pool;
  std::shared_ptr<Running> running = std::make_shared<Running>();
  std::chrono::milliseconds grace{0};
  uint64_t token = 1;
  int64_t next_seq = 0;
  int64_t next_worker = 0;
  std::set<int64_t> outstanding;  // seqs submitted and not taken
};

namespace {

std::shared_ptr<const EpochSpec> spec_of(uint64_t token) {
  auto spec = std::make_shared<EpochSpec>();
  spec->token = token;
  return spec;
}

}  // namespace

JobPool::JobPool(int64_t workers, std::chrono::milliseconds grace)
    : state_(std::make_unique<State>()) {
  KILN_CHECK_VALUE(workers > 0, "JobPool: workers must be positive, got ", workers);
  state_->grace = grace;
  state_->pool = std::make_unique<WorkerPool>(workers, nullptr, WorkerInfo{}, grace);
  state_->running->token = state_->token;
  state_->pool->begin_epoch(spec_of(state_->token));
}

JobPool::~JobPool() { shutdown(); }

int64_t JobPool::workers() const { return state_->pool->size(); }

void JobPool::submit(Job job) {
  State& s = *state_;
  KILN_CHECK(!s.pool->stopped(), "DataLoader: a job was submitted after join(): the worker ",
             "threads are stopped");
  // The wrapper counts itself in Running while it runs, and skips a job of an older epoch.
  auto wrapped = [running = s.running, token = s.token, job = std::move(job)](int64_t worker) {
    {
      std::lock_guard<std::mutex> lock(running->mutex);
      if (running->token != token) return std::shared_ptr<void>();
      ++running->count;
    }
    struct Leave {
      Running& r;
      ~Leave() {
        std::lock_guard<std::mutex> lock(r.mutex);
        --r.count;
        r.done.notify_all();
      }
    } leave{*running};
    return job(worker);
  };
  Task task;
  task.token = s.token;
  task.seq = s.next_seq++;
  task.job = std::move(wrapped);
  int64_t worker = s.next_worker;
  s.next_worker = (s.next_worker + 1) % s.pool->size();
  s.outstanding.insert(task.seq);
  s.pool->submit(worker, std::move(task));
}

int64_t JobPool::in_flight() const { return static_cast<int64_t>(state_->outstanding.size()); }

std::optional<JobPool::Outcome> JobPool::take(bool ordered, std::chrono::milliseconds timeout) {
  State& s = *state_;
  if (s.outstanding.empty()) return std::nullopt;
  std::optional<int64_t> seq;
  if (ordered) seq = *s.outstanding.begin();
  std::optional<Result> r = s.pool->take(seq, timeout);
  if (!r) {
    KILN_CHECK(!s.pool->stopped(), "DataLoader: waiting for a batch after join(): the worker ",
               "threads are stopped; make a new loader to iterate again");
    throw Error(queue_timeout_message(timeout) +
                ": a worker is still loading it; raise DataLoaderOptions::timeout, or look for "
                "a dataset call that blocks");
  }
  s.outstanding.erase(r->seq);
  Outcome out;
  out.worker = r->worker;
  if (r->kind == Result::Kind::Error) {
    out.error = r->error;
  } else {
    out.value = std::move(r->value);
  }
  return out;
}

void JobPool::restart(bool wait_running) {
  State& s = *state_;
  ++s.token;
  s.outstanding.clear();
  s.next_seq = 0;
  std::unique_lock<std::mutex> lock(s.running->mutex);
  s.running->token = s.token;
  lock.unlock();
  s.pool->begin_epoch(spec_of(s.token));
  if (!wait_running) return;
  lock.lock();
  bool idle = s.running->done.wait_for(lock, s.grace, [&] { return s.running->count == 0; });
  KILN_CHECK(idle, "DataLoader: ", s.running->count, " worker(s) still loading a batch of the ",
             "previous epoch after ", s.grace.count(), " ms; the dataset cannot be reset under ",
             "them (is a dataset call blocked?)");
}

int64_t JobPool::shutdown() { return state_->pool->shutdown(); }

bool JobPool::stopped() const { return state_->pool->stopped(); }

}  // namespace kiln::data::detail
