// TaskLoader: loads one task of an epoch in the calling thread (a worker, or the iterating thread
// of an inline loader). See worker_pool.h.
#include "worker_pool.h"

#include "internal.h"

#include <kiln/data/pin_memory.h>
#include <kiln/error.h>

namespace kiln::data::detail {

void TaskLoader::reset() {
  stream_.reset();
  stream_spec_.reset();
  stream_open_ = false;
  stream_done_ = false;
}

void TaskLoader::load(const std::shared_ptr<const EpochSpec>& spec, const WorkerInfo& worker,
                      const Task& task, Result& result) {
  result.kind = Result::Kind::Batch;
  if (task.job) {
    result.value = task.job(worker.id);
    return;
  }
  if (spec->map_dataset) {
    load_indices(*spec, task, result);
  } else {
    load_from_stream(spec, worker, task, result);
    if (result.kind == Result::Kind::End) return;
  }
  if (spec->pin_device) result.batch = pin_memory(result.batch, *spec->pin_device);
}

void TaskLoader::load_indices(const EpochSpec& spec, const Task& task, Result& result) {
  Dataset& ds = *spec.map_dataset;
  if (!spec.batch_size) {
    result.batch = ds.get(task.indices.at(0));
  } else if (spec.collate_fn) {
    std::vector<Sample> samples;
    samples.reserve(task.indices.size());
    for (int64_t i : task.indices) {
      check_cancelled();
      try {
        samples.push_back(ds.get(i));
      } catch (...) {
        rethrow_with_context(std::current_exception(), kiln::detail::str("sample index ", i, ": "));
      }
    }
    result.batch = spec.collate_fn(std::move(samples));
  } else {
    result.batch = ds.get_batch(task.indices);
  }
  result.samples = static_cast<int64_t>(task.indices.size());
}

void TaskLoader::open_stream(const std::shared_ptr<const EpochSpec>& spec, const WorkerInfo& worker,
                             uint64_t token) {
  reset();
  stream_spec_ = spec;
  stream_token_ = token;
  stream_open_ = true;
  stream_ = spec->iterable_dataset->iter(worker);
  int64_t skip = worker.id < static_cast<int64_t>(spec->skip.size())
                     ? spec->skip[static_cast<size_t>(worker.id)]
                     : 0;
  if (skip > 0 && stream_) stream_->skip(skip);
  if (spec->track_provenance && stream_) stream_->take_provenance();  // not delivered
}

void TaskLoader::load_from_stream(const std::shared_ptr<const EpochSpec>& spec_ptr,
                                  const WorkerInfo& worker, const Task& task, Result& result) {
  if (!stream_open_ || stream_token_ != task.token) open_stream(spec_ptr, worker, task.token);
  if (stream_done_ || !stream_) {
    result.kind = Result::Kind::End;
    return;
  }
  const EpochSpec& spec = *spec_ptr;
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
      check_cancelled();
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

}  // namespace kiln::data::detail
