// StatefulDataset: a dataset that keeps its own position and hands out batches until it is
// exhausted (get_batch returns nullopt), then starts again at reset(); its save()/load() write
// and read that position (kiln/serialize/archive.h). make_data_loader calls reset() at each
// begin(), and its workers all call get_batch() on the one dataset, so it must be thread-safe
// when the loader has workers.
#pragma once

#include <kiln/data/datasets/base.h>
#include <kiln/data/samplers/base.h>

namespace kiln::data::datasets {

template <typename Self, typename Batch = std::vector<Example<>>, typename BatchRequest = size_t>
class StatefulDataset : public BatchDataset<Self, std::optional<Batch>, BatchRequest> {
 public:
  // Starts a new epoch.
  virtual void reset() = 0;
  // Writes where the dataset stands; load() restores it.
  virtual void save(serialize::OutputArchive& archive) const = 0;
  virtual void load(serialize::InputArchive& archive) = 0;
};

}  // namespace kiln::data::datasets
