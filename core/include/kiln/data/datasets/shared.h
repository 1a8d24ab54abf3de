// SharedBatchDataset: a dataset held by shared_ptr, so that copies (one per loader worker) share
// one underlying dataset instead of copying it; make_shared_dataset<D>(args...) makes one.
// Use it for a dataset that cannot or should not be copied, and for a stateful dataset read by
// several workers.
#pragma once

#include <kiln/data/datasets/base.h>
#include <kiln/error.h>

#include <memory>
#include <utility>

namespace kiln::data::datasets {

template <typename UnderlyingDataset>
class SharedBatchDataset : public BatchDataset<SharedBatchDataset<UnderlyingDataset>,
                                               typename UnderlyingDataset::BatchType,
                                               typename UnderlyingDataset::BatchRequestType> {
 public:
  using BatchType = typename UnderlyingDataset::BatchType;
  using BatchRequestType = typename UnderlyingDataset::BatchRequestType;

  // Throws kiln::ValueError for a null dataset.
  SharedBatchDataset(std::shared_ptr<UnderlyingDataset> shared_dataset)  // NOLINT: as libtorch
      : dataset_(std::move(shared_dataset)) {
    KILN_CHECK_VALUE(dataset_ != nullptr, "SharedBatchDataset: the dataset is null");
  }

  BatchType get_batch(BatchRequestType request) override {
    return dataset_->get_batch(std::move(request));
  }
  std::optional<size_t> size() const override { return dataset_->size(); }

  UnderlyingDataset& operator*() { return *dataset_; }
  const UnderlyingDataset& operator*() const { return *dataset_; }
  UnderlyingDataset* operator->() { return dataset_.get(); }
  const UnderlyingDataset* operator->() const { return dataset_.get(); }

  // A stateful dataset's reset(), save() and load().
  void reset() { dataset_->reset(); }
  template <typename Archive>
  void save(Archive& archive) const {
    dataset_->save(archive);
  }
  template <typename Archive>
  void load(Archive& archive) {
    dataset_->load(archive);
  }

 private:
  std::shared_ptr<UnderlyingDataset> dataset_;
};

// A SharedBatchDataset of a new UnderlyingDataset(args...).
template <typename UnderlyingDataset, typename... Args>
SharedBatchDataset<UnderlyingDataset> make_shared_dataset(Args&&... args) {
  return std::make_shared<UnderlyingDataset>(std::forward<Args>(args)...);
}

}  // namespace kiln::data::datasets
