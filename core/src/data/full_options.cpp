// FullDataLoaderOptions: the checked options of the libtorch-shaped loaders. See
// kiln/data/dataloader_options.h.
#include <kiln/data/dataloader_options.h>

#include <kiln/error.h>

#include <limits>

namespace kiln::data {
namespace {

// Rejects an option of kiln::data::DataLoader that the libtorch-shaped loaders do not have.
void reject(bool set, const char* option, const char* instead) {
  KILN_CHECK_VALUE(!set, "make_data_loader: DataLoaderOptions::", option, " is an option of ",
                   "kiln::data::DataLoader, which make_data_loader's loaders do not take; ",
                   instead);
}

}  // namespace

FullDataLoaderOptions::FullDataLoaderOptions(const DataLoaderOptions& o) {
  reject(o.shuffle(), "shuffle", "pass a samplers::RandomSampler (the default sampler)");
  reject(o.sampler() != nullptr, "sampler", "pass a kiln::data::samplers:: sampler instead");
  reject(o.batch_sampler() != nullptr, "batch_sampler", "use a sampler and batch_size");
  reject(o.prefetch_factor_opt().has_value(), "prefetch_factor", "use max_jobs");
  reject(o.persistent_workers(), "persistent_workers", "workers live as long as the loader");
  reject(o.pin_memory(), "pin_memory", "pin the batches in a transform");
  reject(o.worker_init_fn() != nullptr, "worker_init_fn", "initialize in the dataset's copy");
  reject(o.collate_fn() != nullptr, "collate_fn", "map the dataset with a Collation transform");
  reject(o.seed().has_value(), "seed", "seed kiln's default generator (kiln::manual_seed)");
  KILN_CHECK_VALUE(o.batch_size().has_value(), "make_data_loader: batch_size must be set (the ",
                   "libtorch-shaped loaders always batch), got none");
  KILN_CHECK_VALUE(*o.batch_size() > 0, "make_data_loader: batch_size must be positive, got ",
                   *o.batch_size());
  KILN_CHECK_VALUE(o.workers() >= 0, "make_data_loader: workers must be non-negative, got ",
                   o.workers());
  KILN_CHECK_VALUE(o.workers() <= std::numeric_limits<int64_t>::max() / 2,
                   "make_data_loader: workers ", o.workers(), " is too large (2 x workers jobs ",
                   "overflow)");
  int64_t jobs = o.max_jobs().value_or(2 * o.workers());
  KILN_CHECK_VALUE(jobs >= 0, "make_data_loader: max_jobs must be non-negative, got ", jobs);
  KILN_CHECK_VALUE(jobs > 0 || o.workers() == 0, "make_data_loader: max_jobs must be positive ",
                   "with ", o.workers(), " workers, got 0 (no batch would ever be requested)");
  KILN_CHECK_VALUE(o.timeout().count() >= 0, "make_data_loader: timeout must be non-negative, ",
                   "got ", o.timeout().count(), " ms");
  batch_size = static_cast<size_t>(*o.batch_size());
  workers = static_cast<size_t>(o.workers());
  max_jobs = static_cast<size_t>(jobs);
  if (o.timeout().count() > 0) timeout = o.timeout();
  enforce_ordering = o.enforce_ordering();
  drop_last = o.drop_last();
}

}  // namespace kiln::data
