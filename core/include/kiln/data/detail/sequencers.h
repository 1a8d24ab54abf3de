// Sequencers: put results that carry a `sequence_number` back in order, as libtorch's
// torch::data::detail::sequencers (for code written against them; kiln's loaders order batches
// in their worker pool, kiln/data/detail/job_pool.h).
#pragma once

#include <kiln/error.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace kiln::data::detail::sequencers {

template <typename Result>
struct Sequencer {
  using ResultProducer = std::function<std::optional<Result>()>;
  virtual ~Sequencer() = default;
  // The next result; nullopt when the producer has no more.
  virtual std::optional<Result> next(ResultProducer next_result) = 0;
};

// Results in the order they are produced.
template <typename Result>
struct NoSequencer final : public Sequencer<Result> {
  using typename Sequencer<Result>::ResultProducer;
  std::optional<Result> next(ResultProducer next_result) override { return next_result(); }
};

// Results by sequence number 0, 1, 2, ...: a result that comes early waits in a buffer of
// max_jobs slots (so at most max_jobs results may be in flight).
template <typename Result>
struct OrderedSequencer : public Sequencer<Result> {
  using typename Sequencer<Result>::ResultProducer;

  // Throws kiln::ValueError when max_jobs is 0.
  explicit OrderedSequencer(size_t max_jobs) : buffer_(max_jobs) {
    KILN_CHECK_VALUE(max_jobs > 0, "OrderedSequencer: max_jobs must be positive, got 0");
  }

  std::optional<Result> next(ResultProducer next_result) override {
    if (auto& waiting = buffer(next_sequence_number_)) {
      std::optional<Result> result = std::move(waiting);
      waiting.reset();
      ++next_sequence_number_;
      return result;
    }
    while (std::optional<Result> result = next_result()) {
      if (result->sequence_number == next_sequence_number_) {
        ++next_sequence_number_;
        return result;
      }
      KILN_CHECK_VALUE(result->sequence_number > next_sequence_number_ &&
                           result->sequence_number - next_sequence_number_ < buffer_.size(),
                       "OrderedSequencer: sequence number ", result->sequence_number,
                       " is outside the window [", next_sequence_number_, ", ",
                       next_sequence_number_ + buffer_.size(), ") of ", buffer_.size(),
                       " jobs in flight");
      buffer(result->sequence_number) = std::move(result);
    }
    return std::nullopt;
  }

  // The slot of sequence number `index`.
  std::optional<Result>& buffer(size_t index) { return buffer_.at(index % buffer_.size()); }

  size_t next_sequence_number_ = 0;
  std::vector<std::optional<Result>> buffer_;
};

}  // namespace kiln::data::detail::sequencers
