// The libtorch-shaped samplers: a Sampler hands out one batch request at a time (next(n)), until
// the epoch is over (nullopt), and starts again at reset(). BatchRequest is what a dataset's
// get_batch() takes: a list of indices by default (std::vector<size_t>), a batch size for stream
// datasets (StreamSampler), or any type a user defines (CustomBatchRequest).
//
//   kiln::data::samplers::SequentialSampler s(10);
//   s.next(3);   // {0, 1, 2}
//   s.reset();   // start again
//
// These live beside kiln's own kiln::data::Sampler (kiln/data/sampler.h), which is a function of
// (seed, epoch) that kiln::data::DataLoader calls; these are what make_data_loader takes.
#pragma once

#include <kiln/export.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace kiln::serialize {
class OutputArchive;  // kiln/serialize/archive.h
class InputArchive;
}  // namespace kiln::serialize

namespace kiln::data::samplers {

namespace detail {
// What every Sampler derives from, to recognize one (make_data_loader).
struct SamplerTag {};
}  // namespace detail

template <typename BatchRequest = std::vector<size_t>>
class Sampler : public detail::SamplerTag {
 public:
  using BatchRequestType = BatchRequest;

  virtual ~Sampler() = default;
  // Starts a new epoch; `new_size` replaces the number of samples when given.
  virtual void reset(std::optional<size_t> new_size) = 0;
  // The next request of at most `batch_size` samples; nullopt when the epoch is over.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
  // Writes where the sampler stands to `archive`; load() restores it.
  virtual void save(serialize::OutputArchive& archive) const = 0;
  virtual void load(serialize::InputArchive& archive) = 0;
};

}  // namespace kiln::data::samplers
