// The libtorch-shaped datasets (namespace kiln::data::datasets), class templates over the
// dataset's own type (CRTP) and its batch types, for make_data_loader (kiln/data/dataloader.h):
//
//   struct Squares : kiln::data::datasets::Dataset<Squares, int> {
//     int get(size_t i) override { return int(i * i); }
//     std::optional<size_t> size() const override { return 10; }
//   };
//   auto loader = kiln::data::make_data_loader(Squares().map(transform), /*batch_size=*/4);
//
//  - BatchDataset<Self, Batch, BatchRequest>: get_batch(request) -> Batch, size();
//  - Dataset<Self, Example>: get(index) -> Example; get_batch(indices) gathers get() into a
//    std::vector<Example>;
//  - StreamDataset<Self, Batch>: get_batch(batch_size), for sources without indices;
//  - StatefulDataset<Self, Batch, Request> (stateful.h): get_batch returns std::optional<Batch>,
//    nullopt once the epoch is exhausted; reset() starts a new one.
// map(transform) (map.h) makes a MapDataset applying a transform to each batch.
//
// These live beside kiln's own kiln::data::Dataset (kiln/data/dataset.h), whose samples are
// kiln::data::Sample values and which kiln::data::DataLoader takes.
#pragma once

#include <kiln/array_ref.h>
#include <kiln/data/example.h>

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {
// libtorch's torch::optional and torch::nullopt, which the signatures of its data API use
// (`torch::optional<size_t> size() const override`): std::optional's.
using std::nullopt;
using std::optional;
}  // namespace kiln

namespace kiln::data::datasets {

template <typename S, typename T>
class MapDataset;
template <typename D, typename T>
MapDataset<D, T> map(D dataset, T transform);

namespace detail {
// What every BatchDataset derives from, to recognize one (make_data_loader).
struct BatchDatasetTag {};

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
}  // namespace detail

template <typename Self, typename Batch = std::vector<Example<>>,
          typename BatchRequest = ArrayRef<size_t>>
class BatchDataset : public detail::BatchDatasetTag {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  // A stateful dataset's batches are optional: nullopt ends the epoch.
  constexpr static bool is_stateful = detail::is_optional<BatchType>::value;

  virtual ~BatchDataset() = default;

  // The batch `request` asks for.
  virtual Batch get_batch(BatchRequest request) = 0;
  // The number of samples, or nullopt when unknown (a stream).
  virtual std::optional<size_t> size() const = 0;

  // A dataset applying `transform` to this one's batches (this one is copied, or moved from an
  // rvalue: `Dataset().map(t)` copies nothing).
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  // The example at `index`.
  virtual ExampleType get(size_t index) = 0;

  // get(i) for each index, in order.
  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

template <typename Self, typename Batch = std::vector<Example<>>>
using StreamDataset = BatchDataset<Self, Batch, /*BatchRequest=*/size_t>;

}  // namespace kiln::data::datasets
