// RandomSampler: a random permutation of 0 .. size-1, `batch_size` at a time; a new one at each
// reset(). The permutation's seed is drawn from kiln's default generator, so kiln::manual_seed
// makes it reproducible (libtorch draws it from its default generator the same way).
#pragma once

#include <kiln/data/samplers/base.h>

#include <cstdint>

namespace kiln::data::samplers {

class KILN_API RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size);

  // A new permutation of `new_size` (or the current size) indices, from its start.
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  // The next min(batch_size, remaining) indices of the permutation; nullopt at the end.
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  // Writes "index" and "indices" (the permutation); load() checks that they are one.
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  // How many indices of the permutation were handed out.
  size_t index() const noexcept { return index_; }

 private:
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

}  // namespace kiln::data::samplers
