// StatelessDataLoader: a loader over a dataset indexed by a sampler's batch requests (see
// base.h). Each worker gets its own copy of the dataset, copied once when the loader is made;
// wrap a dataset that must not be copied in make_shared_dataset.
#pragma once

#include <kiln/data/dataloader/base.h>

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::data {

template <typename Dataset, typename Sampler>
class StatelessDataLoader : public DataLoaderBase<Dataset, typename Dataset::BatchType,
                                                  typename Sampler::BatchRequestType> {
 public:
  using super =
      DataLoaderBase<Dataset, typename Dataset::BatchType, typename Sampler::BatchRequestType>;
  using typename super::BatchRequestType;

  // Throws kiln::ValueError for bad options, or when the dataset cannot be copied for workers.
  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : super(options, nullptr), sampler_(std::move(sampler)) {
    if (this->options_.workers == 0) {
      this->main_thread_dataset_ = std::make_shared<Dataset>(std::move(dataset));
      return;
    }
    if constexpr (std::is_copy_constructible_v<Dataset>) {
      std::vector<std::shared_ptr<Dataset>> copies;
      for (size_t w = 0; w < this->options_.workers; ++w) {
        copies.push_back(std::make_shared<Dataset>(dataset));  // one copy per worker
      }
      this->start_workers(std::move(copies), /*shared=*/false);
    } else {
      throw ValueError("make_data_loader: the dataset cannot be copied, and each of the " +
                       std::to_string(this->options_.workers) +
                       " workers needs a copy; wrap "
                       "it with datasets::make_shared_dataset to share one");
    }
  }

 private:
  void reset() override { sampler_.reset(std::nullopt); }

  // The sampler's next request; nullopt at its end, or for a short last batch with drop_last.
  std::optional<BatchRequestType> get_batch_request() override {
    auto request = sampler_.next(this->options_.batch_size);
    if (!request) return std::nullopt;
    if (request->size() < this->options_.batch_size && this->options_.drop_last) {
      return std::nullopt;
    }
    KILN_CHECK(request->size() > 0, "make_data_loader: the sampler returned an empty batch ",
               "request (a sampler ends an epoch with nullopt)");
    return request;
  }

  Sampler sampler_;
};

}  // namespace kiln::data
