// SequentialSampler: the indices 0, 1, ..., size-1 in order, `batch_size` at a time.
#pragma once

#include <kiln/data/samplers/base.h>

namespace kiln::data::samplers {

class KILN_API SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size);

  // Back to index 0; `new_size` replaces the size when given.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  // The next min(batch_size, remaining) indices; nullopt at the end. batch_size must be > 0.
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  // Writes "index" and "size"; load() checks index <= size.
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  // The next index to hand out.
  size_t index() const noexcept { return index_; }

 private:
  size_t size_;
  size_t index_ = 0;
};

}  // namespace kiln::data::samplers
