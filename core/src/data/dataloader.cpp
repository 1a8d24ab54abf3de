// DataLoader: options checks, epochs, and the resumable state. The threads are in
// worker_pool.cpp and the order of batches in epoch_run.cpp.
#include <kiln/data/dataloader.h>

#include "epoch_run.h"
#include "internal.h"
#include "loader_state.h"
#include "worker_pool.h"

#include <kiln/error.h>
#include <kiln/ops.h>

#include <atomic>
#include <limits>

namespace kiln::data {
namespace {

std::atomic<uint64_t> g_next_token{1};

// A 63-bit seed from kiln's default generator, as PyTorch draws its loaders' base_seed.
uint64_t draw_seed() {
  Tensor t = randint(0, std::numeric_limits<int64_t>::max(), {}, kLong);
  return static_cast<uint64_t>(t.item<int64_t>());
}

// The epoch's indices cut into batches (map-style), skipping what `skip_samples` /
// `skip_batches` say was delivered already.
std::vector<std::vector<int64_t>> make_plan(const DataLoaderOptions& o, const Sampler& sampler,
                                            uint64_t seed, int64_t epoch, int64_t skip_samples,
                                            int64_t skip_batches) {
  std::vector<std::vector<int64_t>> plan;
  if (o.batch_sampler()) {
    plan = o.batch_sampler()->batches(seed, epoch);
    auto n = static_cast<size_t>(std::min<int64_t>(skip_batches, plan.size()));
    plan.erase(plan.begin(), plan.begin() + static_cast<std::ptrdiff_t>(n));
    return plan;
  }
  std::vector<int64_t> idx = sampler.indices(seed, epoch);
  auto skip = static_cast<size_t>(std::min<int64_t>(skip_samples, idx.size()));
  size_t bs = o.batch_size() ? static_cast<size_t>(*o.batch_size()) : 1;
  for (size_t start = skip; start < idx.size(); start += bs) {
    size_t end = std::min(idx.size(), start + bs);
    if (o.batch_size() && o.drop_last() && end - start < bs) break;
    plan.emplace_back(idx.begin() + static_cast<std::ptrdiff_t>(start),
                      idx.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return plan;
}

}  // namespace

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : map_dataset_(std::move(dataset)), options_(std::move(options)),
      state_(std::make_shared<detail::LoaderState>()) {
  KILN_CHECK_VALUE(map_dataset_ != nullptr, "DataLoader: dataset is null");
  check_options();
  if (!options_.sampler() && !options_.batch_sampler()) {
    int64_t n = map_dataset_->size();
    if (options_.shuffle()) {
      options_.sampler(std::make_shared<RandomSampler>(n));
    } else {
      options_.sampler(std::make_shared<SequentialSampler>(n));
    }
  }
}

DataLoader::DataLoader(std::shared_ptr<IterableDataset> dataset, DataLoaderOptions options)
    : iterable_dataset_(std::move(dataset)), options_(std::move(options)),
      state_(std::make_shared<detail::LoaderState>()) {
  KILN_CHECK_VALUE(iterable_dataset_ != nullptr, "DataLoader: dataset is null");
  check_options();
}

DataLoader::~DataLoader() {
  if (auto run = current_.lock()) run->cancel();
  if (persistent_pool_) persistent_pool_->shutdown();
}

void DataLoader::check_options() const {
  const DataLoaderOptions& o = options_;
  KILN_CHECK_VALUE(o.workers() >= 0, "num_workers option should be non-negative; use ",
                   "num_workers=0 to disable multiprocessing.");
  KILN_CHECK_VALUE(o.timeout().count() >= 0, "timeout option should be non-negative");
  KILN_CHECK_VALUE(o.workers() > 0 || !o.prefetch_factor_opt(), "prefetch_factor option could ",
                   "only be specified in multiprocessing.let num_workers > 0 to enable ",
                   "multiprocessing, otherwise set prefetch_factor to None.");
  KILN_CHECK_VALUE(o.prefetch_factor() > 0, "prefetch_factor option should be a positive ",
                   "integer, but got prefetch_factor=", o.prefetch_factor());
  KILN_CHECK_VALUE(!o.persistent_workers() || o.workers() > 0, "persistent_workers option ",
                   "needs num_workers > 0");
  if (iterable_dataset_) {
    KILN_CHECK_VALUE(!o.shuffle(), "DataLoader with IterableDataset: expected unspecified ",
                     "shuffle option, but got shuffle=True");
    KILN_CHECK_VALUE(!o.sampler(), "DataLoader with IterableDataset: expected unspecified ",
                     "sampler option, but got a sampler");
    KILN_CHECK_VALUE(!o.batch_sampler(), "DataLoader with IterableDataset: expected ",
                     "unspecified batch_sampler option, but got a batch_sampler");
  }
  KILN_CHECK_VALUE(!(o.sampler() && o.shuffle()), "sampler option is mutually exclusive with ",
                   "shuffle");
  if (o.batch_sampler()) {
    KILN_CHECK_VALUE(o.batch_size() == std::optional<int64_t>(1) && !o.shuffle() &&
                         !o.sampler() && !o.drop_last(),
                     "batch_sampler option is mutually exclusive with batch_size, shuffle, ",
                     "sampler, and drop_last");
  }
  KILN_CHECK_VALUE(o.batch_size() || !o.drop_last(), "batch_size=None option disables ",
                   "auto-batching and is mutually exclusive with drop_last");
  KILN_CHECK_VALUE(!o.batch_size() || *o.batch_size() > 0, "batch_size should be a positive ",
                   "integer value, but got batch_size=", o.batch_size().value_or(0));
}

int64_t DataLoader::size() const {
  KILN_CHECK_TYPE(map_dataset_ != nullptr, "DataLoader: an IterableDataset has no length (the ",
                  "number of batches is known only once its streams end)");
  if (options_.batch_sampler()) return options_.batch_sampler()->size();
  int64_t n = options_.sampler()->size();
  if (!options_.batch_size()) return n;
  int64_t bs = *options_.batch_size();
  return n / bs + (!options_.drop_last() && n % bs != 0 ? 1 : 0);  // (n + bs - 1 overflows)
}

DataLoader::Iterator DataLoader::begin() {
  if (auto old = current_.lock()) old->cancel();
  detail::LoaderState& s = *state_;
  int64_t workers = options_.workers();
  int64_t readers = std::max<int64_t>(workers, 1);
  const Sampler* sampler = options_.batch_sampler() ? options_.batch_sampler()->sampler().get()
                                                    : options_.sampler().get();
  std::optional<detail::SavedState> resume = std::move(s.pending);
  s.pending.reset();

  auto spec = std::make_shared<detail::EpochSpec>();
  spec->token = g_next_token.fetch_add(1);
  spec->map_dataset = map_dataset_;
  spec->iterable_dataset = iterable_dataset_;
  spec->batch_size = options_.batch_size();
  spec->drop_last = options_.drop_last();
  spec->collate_fn = options_.collate_fn();
  spec->track_provenance = iterable_dataset_ && iterable_dataset_->tracks_provenance();
  if (options_.pin_memory()) {
    Device d = options_.pin_memory_device().value_or(default_device());
    if (!d.is_cpu()) spec->pin_device = d;
  }

  int64_t skip_samples = 0, skip_batches = 0, first_worker = 0;
  if (resume) {
    // checked by load_state_dict (SavedState::check)
    const detail::SavedState& r = *resume;
    s.epoch = r.epoch;
    s.base_seed = r.base_seed;
    s.batches = r.batches;
    s.samples = r.samples;
    // a merged state (merge_states) always resumes through the delivered record
    int64_t saved_readers = r.merged ? -1 : r.readers;
    s.worker_batches.assign(static_cast<size_t>(readers), 0);
    s.worker_samples.assign(static_cast<size_t>(readers), 0);
    s.exhausted.assign(static_cast<size_t>(readers), false);
    s.last_worker = -1;
    s.delivered = r.delivered;
    s.resumed_from = Sample();
    if (map_dataset_) {
      int64_t global = r.samples * r.replicas;  // checked not to overflow
      skip_samples = global / sampler->num_replicas();
      skip_batches = s.batches;
      s.samples = skip_samples;
    } else if (saved_readers == readers) {
      // Note [Order of batches]: each worker skips what it delivered; turns go on after the
      // worker of the last delivered batch.
      for (size_t w = 0; w < static_cast<size_t>(readers); ++w) {
        if (w < r.worker_batches.size()) s.worker_batches[w] = r.worker_batches[w];
        if (w < r.worker_samples.size()) s.worker_samples[w] = r.worker_samples[w];
        if (w < r.exhausted.size()) s.exhausted[w] = r.exhausted[w];
      }
      s.last_worker = r.last_worker;  // in [-1, readers)
      spec->skip = s.worker_samples;
      first_worker = s.last_worker + 1;
      s.resumed_from = r.resumed_from;
    } else {
      // Another worker count: the dataset leaves out every sample delivered so far.
      s.resumed_from = s.delivered.to_sample();
    }
  } else {
    if (s.in_epoch) s.epoch += 1;  // the last epoch was left early: start the next one
    s.base_seed = options_.seed() ? detail::mix_seed(*options_.seed(), static_cast<uint64_t>(
                                                                           s.epoch))
                                  : draw_seed();
    s.base_seed &= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    s.batches = s.samples = 0;
    s.worker_batches.assign(static_cast<size_t>(readers), 0);
    s.worker_samples.assign(static_cast<size_t>(readers), 0);
    s.exhausted.assign(static_cast<size_t>(readers), false);
    s.last_worker = -1;
    s.delivered.clear();
    s.resumed_from = Sample();
  }
  s.in_epoch = true;
  s.readers = readers;
  if (iterable_dataset_ && (spec->track_provenance || !s.resumed_from.is_none())) {
    iterable_dataset_->resume_from(s.resumed_from);
  }
  spec->info.num_workers = readers;
  spec->info.base_seed = s.base_seed;
  spec->info.seed = s.base_seed;
  spec->info.epoch = s.epoch;

  std::vector<std::vector<int64_t>> plan;
  if (map_dataset_) {
    plan = make_plan(options_, *sampler, s.base_seed, s.epoch, skip_samples, skip_batches);
  }

  std::shared_ptr<detail::WorkerPool> pool;
  if (workers > 0) {
    // Note [Stuck workers]: the time stopping a pool waits before abandoning a worker
    std::chrono::milliseconds grace =
        options_.timeout().count() > 0 ? options_.timeout() : std::chrono::milliseconds(5000);
    if (options_.persistent_workers()) {
      // (a timeout stops even persistent workers)
      if (!persistent_pool_ || persistent_pool_->stopped()) {
        persistent_pool_ = std::make_shared<detail::WorkerPool>(
            workers, options_.worker_init_fn(), spec->info, grace);
      }
      pool = persistent_pool_;
    } else {
      pool = std::make_shared<detail::WorkerPool>(workers, options_.worker_init_fn(),
                                                  spec->info, grace);
    }
  }
  auto run = std::make_shared<detail::EpochRun>(spec, options_, state_, pool,
                                                options_.persistent_workers(), std::move(plan),
                                                first_worker);
  current_ = run;
  return Iterator(run);
}

DataLoader::Iterator DataLoader::end() { return Iterator(); }

Sample DataLoader::state_dict() const {
  const detail::LoaderState& s = *state_;
  if (s.pending) return s.pending->original;  // loaded and not started yet
  const Sampler* sampler = nullptr;
  if (map_dataset_) {
    sampler = options_.batch_sampler() ? options_.batch_sampler()->sampler().get()
                                       : options_.sampler().get();
  }
  Sample::Map m;
  m["version"] = 1;
  m["epoch"] = s.epoch;
  m["in_epoch"] = s.in_epoch;
  m["base_seed"] = static_cast<int64_t>(s.base_seed);
  m["batches"] = s.in_epoch ? s.batches : 0;
  m["samples"] = s.in_epoch ? s.samples : 0;
  m["workers"] = options_.workers();
  m["batch_size"] = options_.batch_size() ? Sample(*options_.batch_size()) : Sample();
  m["replicas"] = sampler ? sampler->num_replicas() : 1;
  if (iterable_dataset_ && s.in_epoch) {
    Sample::List wb, ws, ex;
    for (int64_t v : s.worker_batches) wb.emplace_back(v);
    for (int64_t v : s.worker_samples) ws.emplace_back(v);
    for (bool v : s.exhausted) ex.emplace_back(static_cast<int64_t>(v));
    m["worker_batches"] = std::move(wb);
    m["worker_samples"] = std::move(ws);
    m["exhausted"] = std::move(ex);
    m["last_worker"] = s.last_worker;
    m["delivered"] = s.delivered.to_sample();
    m["resumed_from"] = s.resumed_from;
  }
  return m;
}

void DataLoader::load_state_dict(const Sample& state) {
  detail::SavedState saved = detail::SavedState::check(state, "DataLoader.load_state_dict");
  if (auto run = current_.lock()) run->cancel();
  detail::LoaderState& s = *state_;
  s.epoch = saved.epoch;
  s.in_epoch = false;
  s.pending.reset();
  if (!saved.in_epoch) return;  // the next begin() starts that epoch from its first batch
  int64_t readers = std::max<int64_t>(options_.workers(), 1);
  int64_t saved_readers = saved.merged ? -1 : saved.readers;
  if (map_dataset_) {
    const Sampler* sampler = options_.batch_sampler() ? options_.batch_sampler()->sampler().get()
                                                      : options_.sampler().get();
    int64_t global = saved.samples * saved.replicas;  // checked not to overflow
    KILN_CHECK_VALUE(global % sampler->num_replicas() == 0, "DataLoader.load_state_dict: ",
                     global, " samples were delivered across ", saved.replicas,
                     " replicas, which ", sampler->num_replicas(), " replicas cannot split ",
                     "evenly: resume with the same global batch (batch_size x replicas)");
  } else if (saved_readers != readers && !iterable_dataset_->tracks_provenance()) {
    KILN_CHECK_VALUE(saved_readers > 0, "DataLoader.load_state_dict: a merged state (",
                     "merge_states) resumes only datasets that track provenance");
    throw ValueError(kiln::detail::str(
        "DataLoader.load_state_dict: the state was saved with ", saved_readers, " reader",
        saved_readers == 1 ? "" : "s", " (workers=", saved.workers, ") and this loader has ",
        readers, "; this IterableDataset cannot resume with a different worker count (it ",
        "does not track which samples were delivered): use the same number of workers"));
  }
  s.pending = std::move(saved);
}

Sample merge_states(const std::vector<Sample>& states) {
  KILN_CHECK_VALUE(!states.empty(), "merge_states: no states");
  std::vector<detail::SavedState> saved;
  for (size_t i = 0; i < states.size(); ++i) {
    saved.push_back(detail::SavedState::check(states[i],
                                              kiln::detail::str("merge_states: state ", i)));
  }
  Sample out = states.front();
  if (!out.contains("delivered") || states.size() == 1) return out;
  detail::DeliveredSet all;
  for (const detail::SavedState& s : saved) {
    KILN_CHECK_VALUE(s.epoch == saved.front().epoch && s.in_epoch == saved.front().in_epoch,
                     "merge_states: the states are not of the same epoch");
    all.add_all(s.delivered);
  }
  out["delivered"] = all.to_sample();
  out["merged"] = true;
  out["resumed_from"] = Sample();
  return out;
}

// --- Iterator ---------------------------------------------------------------------------------

DataLoader::Iterator::Iterator(std::shared_ptr<detail::EpochRun> run) : run_(std::move(run)) {
  if (run_ && !run_->advance()) run_.reset();
}

Sample& DataLoader::Iterator::operator*() const {
  KILN_CHECK(run_ != nullptr, "DataLoader iterator: dereferencing the end of the epoch");
  return run_->current();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  KILN_CHECK(run_ != nullptr, "DataLoader iterator: advancing past the end of the epoch");
  std::shared_ptr<detail::EpochRun> run = run_;
  try {
    if (!run->advance()) run_.reset();
  } catch (...) {
    run_.reset();
    throw;
  }
  return *this;
}

bool DataLoader::Iterator::operator==(const Iterator& other) const {
  if (!run_ || !other.run_) return run_ == other.run_;
  return run_ == other.run_ && run_->position() == other.run_->position();
}

}  // namespace kiln::data
