// Dataset base classes, TensorDataset, LambdaDataset and the map/filter decorators.
#include <kiln/data/collate.h>
#include <kiln/data/dataset.h>

#include "internal.h"

#include <kiln/error.h>
#include <kiln/ops.h>

namespace kiln::data {
namespace {

thread_local std::optional<WorkerInfo> t_worker_info;

class MapDataset : public Dataset {
 public:
  MapDataset(std::shared_ptr<Dataset> inner, Transform fn)
      : inner_(std::move(inner)), fn_(std::move(fn)) {}
  int64_t size() const override { return inner_->size(); }
  Sample get(int64_t index) override { return fn_(inner_->get(index)); }

 private:
  std::shared_ptr<Dataset> inner_;
  Transform fn_;
};

class MapStream : public SampleStream {
 public:
  MapStream(std::unique_ptr<SampleStream> inner, Transform fn)
      : inner_(std::move(inner)), fn_(std::move(fn)) {}
  std::optional<Sample> next() override {
    std::optional<Sample> s = inner_->next();
    if (!s) return s;
    return fn_(std::move(*s));
  }
  int64_t skip(int64_t n) override { return inner_->skip(n); }
  Sample take_provenance() override { return inner_->take_provenance(); }

 private:
  std::unique_ptr<SampleStream> inner_;
  Transform fn_;
};

class MapIterable : public IterableDataset {
 public:
  MapIterable(std::shared_ptr<IterableDataset> inner, Transform fn)
      : inner_(std::move(inner)), fn_(std::move(fn)) {}
  std::unique_ptr<SampleStream> iter(const WorkerInfo& worker) override {
    return std::make_unique<MapStream>(inner_->iter(worker), fn_);
  }
  bool tracks_provenance() const override { return inner_->tracks_provenance(); }
  void resume_from(const Sample& delivered) override { inner_->resume_from(delivered); }

 private:
  std::shared_ptr<IterableDataset> inner_;
  Transform fn_;
};

class FilterStream : public SampleStream {
 public:
  FilterStream(std::unique_ptr<SampleStream> inner, std::function<bool(const Sample&)> predicate)
      : inner_(std::move(inner)), predicate_(std::move(predicate)) {}
  std::optional<Sample> next() override {
    while (std::optional<Sample> s = inner_->next()) {
      if (predicate_(*s)) return s;
      detail::check_cancelled();  // a predicate may reject a long run
    }
    return std::nullopt;
  }

 private:
  std::unique_ptr<SampleStream> inner_;
  std::function<bool(const Sample&)> predicate_;
};

class FilterIterable : public IterableDataset {
 public:
  FilterIterable(std::shared_ptr<IterableDataset> inner,
                 std::function<bool(const Sample&)> predicate)
      : inner_(std::move(inner)), predicate_(std::move(predicate)) {}
  std::unique_ptr<SampleStream> iter(const WorkerInfo& worker) override {
    return std::make_unique<FilterStream>(inner_->iter(worker), predicate_);
  }

 private:
  std::shared_ptr<IterableDataset> inner_;
  std::function<bool(const Sample&)> predicate_;
};

}  // namespace

namespace detail {
void set_worker_info(std::optional<WorkerInfo> info) { t_worker_info = info; }
}  // namespace detail

std::optional<WorkerInfo> get_worker_info() { return t_worker_info; }

Dataset::~Dataset() = default;

Sample Dataset::get_batch(const std::vector<int64_t>& indices) {
  std::vector<Sample> samples;
  samples.reserve(indices.size());
  for (int64_t i : indices) {
    detail::check_cancelled();
    try {
      samples.push_back(get(i));
    } catch (...) {
      detail::rethrow_with_context(std::current_exception(),
                                   kiln::detail::str("sample index ", i, ": "));
    }
  }
  return collate(samples);
}

SampleStream::~SampleStream() = default;

int64_t SampleStream::next_batch(int64_t n, Sample& batch) {
  std::vector<Sample> samples;
  samples.reserve(static_cast<size_t>(n));
  while (static_cast<int64_t>(samples.size()) < n) {
    detail::check_cancelled();
    std::optional<Sample> s = next();
    if (!s) break;
    samples.push_back(std::move(*s));
  }
  if (!samples.empty()) batch = collate(samples);
  return static_cast<int64_t>(samples.size());
}

int64_t SampleStream::skip(int64_t n) {
  int64_t done = 0;
  while (done < n) {
    detail::check_cancelled();
    if (!next()) break;
    ++done;
  }
  return done;
}

Sample SampleStream::take_provenance() { return Sample(); }

IterableDataset::~IterableDataset() = default;

void IterableDataset::resume_from(const Sample& delivered) {
  KILN_CHECK(delivered.is_none(), "this IterableDataset cannot resume with a different number ",
             "of workers (it does not track which samples were delivered): resume with the ",
             "worker count and batch size of the saved state");
}

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  KILN_CHECK_VALUE(!tensors_.empty(), "TensorDataset: expects at least one tensor");
  for (size_t i = 0; i < tensors_.size(); ++i) {
    KILN_CHECK_VALUE(tensors_[i].dim() > 0, "TensorDataset: tensor ", i, " is zero-dimensional");
    KILN_CHECK_VALUE(tensors_[i].size(0) == tensors_[0].size(0), "TensorDataset: size mismatch ",
                     "between tensors: tensor 0 has ", tensors_[0].size(0), " rows, tensor ", i,
                     " has ", tensors_[i].size(0));
  }
}

int64_t TensorDataset::size() const { return tensors_[0].size(0); }

Sample TensorDataset::get(int64_t index) {
  KILN_CHECK_INDEX(index >= 0 && index < size(), "TensorDataset: index ", index,
                   " is out of range for ", size(), " samples");
  Sample::List out;
  for (const Tensor& t : tensors_) out.emplace_back(t[index]);
  return out;
}

Sample TensorDataset::get_batch(const std::vector<int64_t>& indices) {
  for (int64_t i : indices) {
    KILN_CHECK_INDEX(i >= 0 && i < size(), "TensorDataset: index ", i, " is out of range for ",
                     size(), " samples");
  }
  Tensor index = empty({static_cast<int64_t>(indices.size())}, kLong);
  std::copy(indices.begin(), indices.end(), index.data_ptr<int64_t>());
  Sample::List out;
  for (const Tensor& t : tensors_) out.emplace_back(index_select(t, 0, index));
  return out;
}

LambdaDataset::LambdaDataset(int64_t size, std::function<Sample(int64_t)> get)
    : size_(size), get_(std::move(get)) {
  KILN_CHECK_VALUE(size_ >= 0, "LambdaDataset: size must be non-negative, got ", size_);
  KILN_CHECK_VALUE(static_cast<bool>(get_), "LambdaDataset: get must be a function");
}

std::shared_ptr<Dataset> map(std::shared_ptr<Dataset> dataset, Transform transform) {
  KILN_CHECK_VALUE(dataset != nullptr, "map: dataset is null");
  return std::make_shared<MapDataset>(std::move(dataset), std::move(transform));
}

std::shared_ptr<IterableDataset> map(std::shared_ptr<IterableDataset> dataset,
                                     Transform transform) {
  KILN_CHECK_VALUE(dataset != nullptr, "map: dataset is null");
  return std::make_shared<MapIterable>(std::move(dataset), std::move(transform));
}

std::shared_ptr<IterableDataset> filter(std::shared_ptr<IterableDataset> dataset,
                                        std::function<bool(const Sample&)> predicate) {
  KILN_CHECK_VALUE(dataset != nullptr, "filter: dataset is null");
  return std::make_shared<FilterIterable>(std::move(dataset), std::move(predicate));
}

}  // namespace kiln::data
