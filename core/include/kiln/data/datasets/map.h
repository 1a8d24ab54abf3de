// MapDataset: a dataset whose batches are `transform.apply_batch()` of another dataset's (see
// kiln/data/transforms/base.h), made by dataset.map(transform) or datasets::map(). It holds both
// by value; a stateful source gives a stateful MapDataset (nullopt batches pass through).
#pragma once

#include <kiln/data/datasets/base.h>

#include <type_traits>
#include <utility>

namespace kiln::data::datasets {

namespace detail {
template <bool Optional, typename T>
using optional_if_t = std::conditional_t<Optional, std::optional<T>, T>;
}  // namespace detail

template <typename SourceDataset, typename AppliedTransform>
class MapDataset
    : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                          detail::optional_if_t<SourceDataset::is_stateful,
                                                typename AppliedTransform::OutputBatchType>,
                          typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType =
      detail::optional_if_t<SourceDataset::is_stateful, typename AppliedTransform::OutputBatchType>;

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  // The source's batch for `request`, transformed.
  OutputBatchType get_batch(BatchRequestType request) override {
    if constexpr (SourceDataset::is_stateful) {
      auto batch = dataset_.get_batch(std::move(request));
      if (!batch) return std::nullopt;
      return transform_.apply_batch(std::move(*batch));
    } else {
      return transform_.apply_batch(dataset_.get_batch(std::move(request)));
    }
  }
  std::optional<size_t> size() const override { return dataset_.size(); }

  // A stateful source's reset(), save() and load().
  void reset() { dataset_.reset(); }
  template <typename Archive>
  void save(Archive& archive) const {
    dataset_.save(archive);
  }
  template <typename Archive>
  void load(Archive& archive) {
    dataset_.load(archive);
  }

  const SourceDataset& dataset() noexcept { return dataset_; }
  const AppliedTransform& transform() noexcept { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

// A MapDataset of `dataset` (moved in) and `transform`; the transform must take the dataset's
// (unwrapped) batch type.
template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform) {
  using Batch = typename DatasetType::BatchType;
  using Input = std::conditional_t<DatasetType::is_stateful, typename Batch::value_type, Batch>;
  static_assert(std::is_same_v<Input, typename TransformType::InputBatchType>,
                "map: the dataset's batch type is not the transform's input batch type");
  return {std::move(dataset), std::move(transform)};
}

}  // namespace kiln::data::datasets
