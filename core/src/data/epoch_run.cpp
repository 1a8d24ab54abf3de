// One epoch of a DataLoader. See epoch_run.h and Note [Order of batches].
#include "epoch_run.h"

#include "internal.h"

#include <kiln/error.h>

#include <sstream>

namespace kiln::data::detail {

EpochRun::EpochRun(std::shared_ptr<const EpochSpec> spec, const DataLoaderOptions& options,
                   std::shared_ptr<LoaderState> state, std::shared_ptr<WorkerPool> pool,
                   bool persistent, std::vector<std::vector<int64_t>> plan, int64_t first_worker)
    : spec_(std::move(spec)),
      options_(options),
      state_(std::move(state)),
      pool_(std::move(pool)),
      persistent_(persistent),
      plan_(std::move(plan)),
      iterable_(spec_->iterable_dataset != nullptr),
      workers_(pool_ ? pool_->size() : 0),
      prefetch_(options.prefetch_factor()) {
  outstanding_.assign(static_cast<size_t>(workers_), 0);
  active_.assign(static_cast<size_t>(std::max<int64_t>(workers_, 1)), true);
  if (iterable_) {
    for (size_t w = 0; w < active_.size() && w < state_->exhausted.size(); ++w) {
      active_[w] = !state_->exhausted[w];
    }
  }
  rr_ = workers_ > 0 ? first_worker % workers_ : 0;
  first_batch_ = state_->batches;
  if (pool_) pool_->begin_epoch(spec_);
}

EpochRun::~EpochRun() { cancel(); }

void EpochRun::cancel() {
  if (finished_) return;
  finished_ = true;
  if (pool_) {
    if (persistent_) {
      pool_->cancel();
    } else {
      pool_->shutdown();
    }
  }
  inline_loader_.reset();
}

void EpochRun::finish() {
  LoaderState& s = *state_;
  s.in_epoch = false;
  s.epoch += 1;
  s.batches = s.samples = 0;
  s.worker_batches.assign(s.worker_batches.size(), 0);
  s.worker_samples.assign(s.worker_samples.size(), 0);
  s.exhausted.assign(s.exhausted.size(), false);
  s.last_worker = -1;
  s.delivered.clear();
  s.resumed_from = Sample();
  cancel();
}

std::string EpochRun::describe_task(int64_t seq, int64_t worker) const {
  std::ostringstream out;
  if (worker >= 0) {
    out << "DataLoader worker " << worker << " (of " << workers_ << "): ";
  } else {
    out << "DataLoader: ";
  }
  if (!iterable_ && seq >= 0 && seq < static_cast<int64_t>(plan_.size())) {
    const std::vector<int64_t>& idx = plan_[static_cast<size_t>(seq)];
    out << "batch " << first_batch_ + seq << " (indices [";
    for (size_t i = 0; i < idx.size() && i < 8; ++i) out << (i ? ", " : "") << idx[i];
    if (idx.size() > 8) out << ", ... " << idx.size() << " in all";
    out << "]): ";
  }
  return out.str();
}

void EpochRun::fail(std::exception_ptr error, const std::string& context) {
  cancel();
  rethrow_with_context(error, context);
}

void EpochRun::deliver(Result& result) {
  LoaderState& s = *state_;
  s.batches += 1;
  s.samples += result.samples;
  if (iterable_) {
    auto w = static_cast<size_t>(result.worker);
    s.worker_batches[w] += 1;
    s.worker_samples[w] += result.samples;
    s.last_worker = result.worker;
    if (spec_->track_provenance) s.delivered.add_runs(result.provenance);
  }
  current_ = std::move(result.batch);
  delivered_ += 1;
}

bool EpochRun::advance() {
  if (finished_) return false;
  return pool_ ? advance_workers() : advance_inline();
}

bool EpochRun::advance_inline() {
  Task task;
  task.token = spec_->token;
  task.seq = next_seq_;
  if (!iterable_) {
    if (next_seq_ >= static_cast<int64_t>(plan_.size())) {
      finish();
      return false;
    }
    task.indices = plan_[static_cast<size_t>(next_seq_)];
  }
  WorkerInfo info = spec_->info;
  info.id = 0;
  info.num_workers = 1;
  info.seed = info.base_seed;
  Result result;
  result.worker = 0;
  try {
    inline_loader_.load(spec_, info, task, result);
  } catch (...) {
    fail(std::current_exception(), describe_task(next_seq_, -1));
  }
  next_seq_ += 1;
  if (result.kind == Result::Kind::End) {
    finish();
    return false;
  }
  deliver(result);
  return true;
}

void EpochRun::submit(int64_t worker) {
  Task task;
  task.token = spec_->token;
  task.seq = next_seq_++;
  if (!iterable_) task.indices = plan_[static_cast<size_t>(task.seq)];
  seq_worker_.push_back(worker);
  outstanding_[static_cast<size_t>(worker)] += 1;
  in_flight_ += 1;
  pool_->submit(worker, std::move(task));
}

void EpochRun::dispatch() {
  if (!iterable_) {
    // Any worker with room takes the next batch of the plan, in turn.
    for (int64_t tried = 0; tried < workers_ && next_seq_ < static_cast<int64_t>(plan_.size());) {
      if (outstanding_[static_cast<size_t>(rr_)] < prefetch_) {
        submit(rr_);
        tried = 0;
      } else {
        ++tried;
      }
      rr_ = (rr_ + 1) % workers_;
    }
    return;
  }
  if (options_.enforce_ordering()) {
    // Strict turns: the order of batches must not depend on timing.
    for (int64_t guard = 0; guard < workers_; ++guard) {
      if (active_[static_cast<size_t>(rr_)]) {
        if (outstanding_[static_cast<size_t>(rr_)] >= prefetch_) return;
        submit(rr_);
        guard = -1;
      }
      rr_ = (rr_ + 1) % workers_;
    }
    return;
  }
  for (int64_t w = 0; w < workers_; ++w) {
    while (active_[static_cast<size_t>(w)] && outstanding_[static_cast<size_t>(w)] < prefetch_) {
      submit(w);
    }
  }
}

void EpochRun::timed_out(std::optional<int64_t> seq) {
  bool stopped = pool_->stopped();
  int64_t worker = -1;
  if (seq && *seq < static_cast<int64_t>(seq_worker_.size())) {
    worker = seq_worker_[static_cast<size_t>(*seq)];
  }
  // Stop the pool even when persistent: a stuck worker is abandoned within the grace period
  // (Note [Stuck workers]) and the loader's next epoch starts new threads.
  finished_ = true;
  int64_t abandoned = pool_->shutdown();
  inline_loader_.reset();
  if (stopped) throw Error("DataLoader: the workers were stopped (the loader was destroyed)");
  throw Error(kiln::detail::str(
      "DataLoader timed out after ", options_.timeout().count(), " ms waiting for batch ",
      state_->batches, worker >= 0 ? kiln::detail::str(" from worker ", worker) : "",
      " (timeout option)",
      abandoned > 0 ? kiln::detail::str("; ", abandoned, " stuck worker thread(s) abandoned")
                    : ""));
}

bool EpochRun::advance_workers() {
  for (;;) {
    dispatch();
    if (in_flight_ == 0) {
      finish();
      return false;
    }
    std::optional<int64_t> seq;
    if (options_.enforce_ordering()) seq = next_deliver_;
    std::optional<Result> taken = pool_->take(seq, options_.timeout());
    if (!taken) timed_out(seq);
    Result& r = *taken;
    outstanding_[static_cast<size_t>(r.worker)] -= 1;
    in_flight_ -= 1;
    if (options_.enforce_ordering()) next_deliver_ += 1;
    switch (r.kind) {
      case Result::Kind::Error: fail(r.error, describe_task(r.seq, r.worker));
      case Result::Kind::End:
        if (active_[static_cast<size_t>(r.worker)]) {
          active_[static_cast<size_t>(r.worker)] = false;
          state_->exhausted[static_cast<size_t>(r.worker)] = true;
        }
        if (!iterable_) {
          cancel();
          throw Error("DataLoader: internal error: a map-style task ended without a batch");
        }
        continue;
      case Result::Kind::Batch: deliver(r); return true;
    }
  }
}

}  // namespace kiln::data::detail
