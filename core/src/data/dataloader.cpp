// DataLoader: options checks, starting or restoring an epoch, and the resumable state. The
// threads are in worker_pool.cpp, the order of batches in epoch_run.cpp, and the saved state's
// format in saved_state.cpp.
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

uint64_t detail::draw_seed() {
  Tensor t = randint(0, std::numeric_limits<int64_t>::max(), {}, kLong);
  return static_cast<uint64_t>(t.item<int64_t>());
}

namespace {

std::atomic<uint64_t> g_next_token{1};

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

// The sampler a map-style loader draws its indices from (its batch sampler's, if any); null for
// an iterable dataset.
const Sampler* sampler_of(const DataLoaderOptions& o) {
  return o.batch_sampler() ? o.batch_sampler()->sampler().get() : o.sampler().get();
}

// What every batch of an epoch shares, from the options; the epoch's seed and skips come later.
std::shared_ptr<detail::EpochSpec> make_spec(const DataLoaderOptions& o,
                                             const std::shared_ptr<Dataset>& map_dataset,
                                             const std::shared_ptr<IterableDataset>& iterable) {
  auto spec = std::make_shared<detail::EpochSpec>();
  spec->token = g_next_token.fetch_add(1);
  spec->map_dataset = map_dataset;
  spec->iterable_dataset = iterable;
  spec->batch_size = o.batch_size();
  spec->drop_last = o.drop_last();
  spec->collate_fn = o.collate_fn();
  spec->track_provenance = iterable && iterable->tracks_provenance();
  if (o.pin_memory()) {
    Device d = o.pin_memory_device().value_or(default_device());
    if (!d.is_cpu()) spec->pin_device = d;
  }
  return spec;
}

// Where an epoch's first batch is: the samples and batches a map-style epoch skips, the samples
// each worker of an iterable one skips, and the worker whose turn is first.
struct EpochStart {
  int64_t skip_samples = 0, skip_batches = 0;
  std::vector<int64_t> worker_skip;
  int64_t first_worker = 0;
};

// The per-reader counters of `s`, zero for `readers` readers.
void reset_readers(detail::LoaderState& s, int64_t readers) {
  s.worker_batches.assign(static_cast<size_t>(readers), 0);
  s.worker_samples.assign(static_cast<size_t>(readers), 0);
  s.exhausted.assign(static_cast<size_t>(readers), false);
  s.last_worker = -1;
}

// A new epoch from its first batch: the next one when the last was left early, with its seed.
EpochStart start_epoch(detail::LoaderState& s, const DataLoaderOptions& o, int64_t readers) {
  if (s.in_epoch) s.epoch += 1;
  s.base_seed = o.seed() ? detail::mix_seed(*o.seed(), static_cast<uint64_t>(s.epoch))
                         : detail::draw_seed();
  s.base_seed &= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  s.batches = s.samples = 0;
  reset_readers(s, readers);
  s.delivered.clear();
  s.resumed_from = Sample();
  return {};
}

// The epoch of a loaded state (checked by SavedState::check and load_state_dict), continuing
// after its last delivered batch. `sampler` is the map-style loader's, null for an iterable one.
EpochStart restore_epoch(detail::LoaderState& s, const detail::SavedState& r, int64_t readers,
                         const Sampler* sampler) {
  s.epoch = r.epoch;
  s.base_seed = r.base_seed;
  s.batches = r.batches;
  s.samples = r.samples;
  reset_readers(s, readers);
  s.delivered = r.delivered;
  s.resumed_from = Sample();
  EpochStart start;
  if (sampler != nullptr) {
    int64_t global = r.samples * r.replicas;  // checked not to overflow
    start.skip_samples = global / sampler->num_replicas();
    start.skip_batches = s.batches;
    s.samples = start.skip_samples;
    return start;
  }
  if (r.merged || r.readers != readers) {
    // Another worker count, or a merged state (merge_states): the dataset leaves out every
    // sample delivered so far.
    s.resumed_from = s.delivered.to_sample();
    return start;
  }
  // Note [Order of batches]: each worker skips what it delivered; turns go on after the worker
  // of the last delivered batch.
  for (size_t w = 0; w < static_cast<size_t>(readers); ++w) {
    if (w < r.worker_batches.size()) s.worker_batches[w] = r.worker_batches[w];
    if (w < r.worker_samples.size()) s.worker_samples[w] = r.worker_samples[w];
    if (w < r.exhausted.size()) s.exhausted[w] = r.exhausted[w];
  }
  s.last_worker = r.last_worker;  // in [-1, readers)
  start.worker_skip = s.worker_samples;
  start.first_worker = s.last_worker + 1;
  s.resumed_from = r.resumed_from;
  return start;
}

// The workers of an epoch: none when loading inline, the persistent pool (made again when a
// timeout stopped it), or a pool of the epoch's own.
std::shared_ptr<detail::WorkerPool> epoch_pool(const DataLoaderOptions& o, const WorkerInfo& info,
                                               std::shared_ptr<detail::WorkerPool>& persistent) {
  if (o.workers() == 0) return nullptr;
  // Note [Stuck workers]: the time stopping a pool waits before abandoning a worker
  std::chrono::milliseconds grace = o.timeout().count() > 0 ? o.timeout()
                                                            : std::chrono::milliseconds(5000);
  if (!o.persistent_workers()) {
    return std::make_shared<detail::WorkerPool>(o.workers(), o.worker_init_fn(), info, grace);
  }
  if (!persistent || persistent->stopped()) {  // (a timeout stops even persistent workers)
    persistent = std::make_shared<detail::WorkerPool>(o.workers(), o.worker_init_fn(), info, grace);
  }
  return persistent;
}

}  // namespace

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : map_dataset_(std::move(dataset)),
      options_(std::move(options)),
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
    : iterable_dataset_(std::move(dataset)),
      options_(std::move(options)),
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
  KILN_CHECK_VALUE(!o.max_jobs(), "DataLoader: max_jobs is an option of make_data_loader's ",
                   "libtorch-shaped loaders; kiln::data::DataLoader takes prefetch_factor ",
                   "(batches each worker prepares ahead) instead");
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
    KILN_CHECK_VALUE(o.batch_size() == std::optional<int64_t>(1) && !o.shuffle() && !o.sampler() &&
                         !o.drop_last(),
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
  int64_t readers = std::max<int64_t>(options_.workers(), 1);
  std::optional<detail::SavedState> resume = std::move(s.pending);
  s.pending.reset();
  auto spec = make_spec(options_, map_dataset_, iterable_dataset_);
  EpochStart start = resume ? restore_epoch(s, *resume, readers, sampler_of(options_))
                            : start_epoch(s, options_, readers);
  s.in_epoch = true;
  s.readers = readers;
  spec->skip = std::move(start.worker_skip);
  if (iterable_dataset_ && (spec->track_provenance || !s.resumed_from.is_none())) {
    iterable_dataset_->resume_from(s.resumed_from);
  }
  spec->info.num_workers = readers;
  spec->info.base_seed = s.base_seed;
  spec->info.seed = s.base_seed;
  spec->info.epoch = s.epoch;
  std::vector<std::vector<int64_t>> plan;
  if (map_dataset_) {
    plan = make_plan(options_, *sampler_of(options_), s.base_seed, s.epoch, start.skip_samples,
                     start.skip_batches);
  }
  std::shared_ptr<detail::WorkerPool> pool = epoch_pool(options_, spec->info, persistent_pool_);
  auto run = std::make_shared<detail::EpochRun>(spec, options_, state_, pool,
                                                options_.persistent_workers(), std::move(plan),
                                                start.first_worker);
  current_ = run;
  return Iterator(run);
}

DataLoader::Iterator DataLoader::end() { return Iterator(); }

Sample DataLoader::state_dict() const {
  const detail::LoaderState& s = *state_;
  if (s.pending) return s.pending->original;  // loaded and not started yet
  const Sampler* sampler = sampler_of(options_);
  detail::SavedState saved;
  saved.epoch = s.epoch;
  saved.in_epoch = s.in_epoch;
  saved.base_seed = s.base_seed;
  saved.batches = s.in_epoch ? s.batches : 0;
  saved.samples = s.in_epoch ? s.samples : 0;
  saved.workers = options_.workers();
  saved.batch_size = options_.batch_size();
  saved.replicas = sampler ? sampler->num_replicas() : 1;
  saved.per_reader = iterable_dataset_ && s.in_epoch;
  if (saved.per_reader) {
    saved.worker_batches = s.worker_batches;
    saved.worker_samples = s.worker_samples;
    saved.exhausted = s.exhausted;
    saved.last_worker = s.last_worker;
    saved.delivered = s.delivered;
    saved.resumed_from = s.resumed_from;
  }
  return saved.to_sample();
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
    const Sampler* sampler = sampler_of(options_);
    int64_t global = saved.samples * saved.replicas;  // checked not to overflow
    KILN_CHECK_VALUE(global % sampler->num_replicas() == 0, "DataLoader.load_state_dict: ", global,
                     " samples were delivered across ", saved.replicas, " replicas, which ",
                     sampler->num_replicas(), " replicas cannot split ",
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
  if (!saved.front().per_reader || states.size() == 1) return states.front();
  detail::SavedState out = saved.front();
  out.delivered.clear();
  for (const detail::SavedState& s : saved) {
    KILN_CHECK_VALUE(s.epoch == out.epoch && s.in_epoch == out.in_epoch,
                     "merge_states: the states are not of the same epoch");
    out.delivered.add_all(s.delivered);
  }
  out.merged = true;
  out.resumed_from = Sample();
  return out.to_sample();
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
