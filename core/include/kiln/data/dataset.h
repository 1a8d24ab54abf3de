// Datasets. Two kinds, as in PyTorch:
//
//  - a map-style Dataset has a size and returns the sample at an index (get(i)); a DataLoader
//    draws indices from a Sampler and spreads batches over its workers;
//  - an IterableDataset hands each DataLoader worker a SampleStream of that worker's share of the
//    samples (iter(worker)); a sharded source splits its shards by worker (and by rank) so that
//    every sample is read exactly once per epoch.
//
// Each worker thread sees a WorkerInfo (its id, the number of workers, its seed, the epoch),
// passed to iter() and available from get_worker_info() inside the worker, as PyTorch's
// torch.utils.data.get_worker_info().
//
// Decorators make new datasets from old: map(ds, fn) applies a transform to each sample,
// filter(ds, pred) keeps the samples pred accepts (iterable datasets only, as a map-style index
// must always name a sample).
#pragma once

#include <kiln/data/sample.h>
#include <kiln/export.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace kiln::data {

// What a DataLoader worker knows about itself, as PyTorch's WorkerInfo.
struct WorkerInfo {
  int64_t id = 0;           // 0 .. num_workers - 1
  int64_t num_workers = 1;  // 1 when the DataLoader runs inline (workers(0))
  uint64_t seed = 0;        // base_seed + id, as PyTorch's worker seed
  uint64_t base_seed = 0;   // the DataLoader's seed of this epoch
  int64_t epoch = 0;        // the DataLoader's epoch, counted from 0
};

// The calling DataLoader worker's info; nullopt outside worker threads (and inline loaders).
KILN_API std::optional<WorkerInfo> get_worker_info();

// A sample-to-sample function: the transform of map() and of kiln::data::transforms.
using Transform = std::function<Sample(Sample)>;

// A map-style dataset. get() may be called from several worker threads at once.
class KILN_API Dataset {
 public:
  virtual ~Dataset();
  // Number of samples.
  virtual int64_t size() const = 0;
  // The sample at `index` in [0, size()).
  virtual Sample get(int64_t index) = 0;
  // The samples at `indices` collated into one batch (kiln/data/collate.h); a dataset may
  // override it to build batches without per-sample copies.
  virtual Sample get_batch(const std::vector<int64_t>& indices);
};

// One worker's samples of one epoch, read in order by one thread.
class KILN_API SampleStream {
 public:
  virtual ~SampleStream();
  // The next sample, or nullopt at the end.
  virtual std::optional<Sample> next() = 0;
  // Up to n samples collated into `batch` (kiln/data/collate.h); returns how many (0 at the
  // end). The default calls next() and collate(); a stream may override it to decode straight
  // into the batch's tensors.
  virtual int64_t next_batch(int64_t n, Sample& batch);
  // Discards up to n samples (resumption); returns how many it discarded.
  virtual int64_t skip(int64_t n);
  // Where the samples yielded since the previous call came from, for resumption with another
  // worker count: a list of [shard, first, count] runs of sample ordinals within shards; None
  // when the stream does not track it (the default).
  virtual Sample take_provenance();
};

// A dataset read as streams, one per worker (sharded files, generators).
class KILN_API IterableDataset {
 public:
  virtual ~IterableDataset();
  // A stream of `worker`'s share of this epoch's samples. `worker.num_workers` readers together
  // must yield every sample once: split by worker.id, or yield everything only from worker 0.
  virtual std::unique_ptr<SampleStream> iter(const WorkerInfo& worker) = 0;
  // Resumption with a different number of workers: whether the streams report
  // take_provenance() and iter() honours resume_from().
  virtual bool tracks_provenance() const { return false; }
  // Makes the following iter() calls leave out the samples in `delivered` (a list of
  // [shard, begin, end) ordinal ranges, from a DataLoader state); None clears it.
  virtual void resume_from(const Sample& delivered);
};

// Tensors indexed along their first dimension: get(i) is the list [t0[i], t1[i], ...], as
// PyTorch's TensorDataset. All tensors must have the same size(0).
class KILN_API TensorDataset : public Dataset {
 public:
  explicit TensorDataset(std::vector<Tensor> tensors);
  int64_t size() const override;
  Sample get(int64_t index) override;
  Sample get_batch(const std::vector<int64_t>& indices) override;

 private:
  std::vector<Tensor> tensors_;
};

// get(i) and size() from functions, for small datasets and tests.
class KILN_API LambdaDataset : public Dataset {
 public:
  LambdaDataset(int64_t size, std::function<Sample(int64_t)> get);
  int64_t size() const override { return size_; }
  Sample get(int64_t index) override { return get_(index); }

 private:
  int64_t size_;
  std::function<Sample(int64_t)> get_;
};

// A dataset whose samples are `transform` of `dataset`'s.
KILN_API std::shared_ptr<Dataset> map(std::shared_ptr<Dataset> dataset, Transform transform);
KILN_API std::shared_ptr<IterableDataset> map(std::shared_ptr<IterableDataset> dataset,
                                              Transform transform);
// The samples of `dataset` for which `predicate` is true.
KILN_API std::shared_ptr<IterableDataset> filter(std::shared_ptr<IterableDataset> dataset,
                                                 std::function<bool(const Sample&)> predicate);

}  // namespace kiln::data
