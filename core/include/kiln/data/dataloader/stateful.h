// StatefulDataLoader: a loader over a stateful dataset, which keeps its own position (see
// base.h): every request is the batch size, and the epoch ends when the dataset returns nullopt
// (with workers: once every request in flight came back empty). begin() calls the dataset's
// reset(). The workers share the one dataset, which must then be thread-safe.
#pragma once

#include <kiln/data/dataloader/base.h>

#include <memory>
#include <utility>
#include <vector>

namespace kiln::data {

template <typename Dataset>
class StatefulDataLoader : public DataLoaderBase<Dataset, typename Dataset::BatchType::value_type,
                                                 typename Dataset::BatchRequestType> {
 public:
  using super = DataLoaderBase<Dataset, typename Dataset::BatchType::value_type,
                               typename Dataset::BatchRequestType>;
  using typename super::BatchRequestType;

  // Throws kiln::ValueError for bad options.
  StatefulDataLoader(Dataset dataset, DataLoaderOptions options)
      : super(options, std::make_shared<Dataset>(std::move(dataset))) {
    std::vector<std::shared_ptr<Dataset>> shared(this->options_.workers,
                                                 this->main_thread_dataset_);
    this->start_workers(std::move(shared), /*shared=*/true);
  }

 private:
  void reset() override { this->main_thread_dataset_->reset(); }
  std::optional<BatchRequestType> get_batch_request() override {
    return BatchRequestType(this->options_.batch_size);
  }
};

}  // namespace kiln::data
