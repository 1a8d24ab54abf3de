// StreamSampler: batch sizes for a stream dataset (BatchDataset<..., size_t>), whose get_batch()
// takes how many samples to return: `batch_size` at a time until epoch_size samples were asked.
#pragma once

#include <kiln/data/samplers/base.h>
#include <kiln/data/samplers/custom_batch_request.h>

namespace kiln::data::samplers {

// A batch request that is a size; converts to size_t for a get_batch(size_t).
struct KILN_API BatchSize : public CustomBatchRequest {
  explicit BatchSize(size_t size) : size_(size) {}
  size_t size() const noexcept override { return size_; }
  operator size_t() const noexcept { return size_; }  // NOLINT: implicit, as libtorch's
  size_t size_;
};

class KILN_API StreamSampler : public Sampler<BatchSize> {
 public:
  explicit StreamSampler(size_t epoch_size);

  // Starts the epoch again; `new_size` replaces epoch_size when given.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  // min(batch_size, samples left in the epoch); nullopt at the end.
  std::optional<BatchSize> next(size_t batch_size) override;
  // Writes "examples_retrieved_so_far" and "epoch_size"; load() checks the first <= the second.
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 private:
  size_t examples_retrieved_so_far_ = 0;
  size_t epoch_size_;
};

}  // namespace kiln::data::samplers
