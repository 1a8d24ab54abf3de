// DataShuttle: jobs one way, results the other, with a count of jobs in flight, as libtorch's
// torch::data::detail::DataShuttle (for code written against it; kiln's loaders use their worker
// pool, kiln/data/detail/job_pool.h).
#pragma once

#include <kiln/data/detail/queue.h>

#include <chrono>
#include <optional>

namespace kiln::data::detail {

template <typename Job, typename Result>
class DataShuttle {
 public:
  void push_job(Job job) {
    new_jobs_.push(std::move(job));
    ++in_flight_jobs_;
  }
  void push_result(Result result) { results_.push(std::move(result)); }
  // The oldest job; waits for one.
  Job pop_job() { return new_jobs_.pop(); }
  // The next result, waiting at most `timeout` when given (then throws kiln::Error); nullopt
  // when no job is in flight.
  std::optional<Result> pop_result(
      std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    if (in_flight_jobs_ == 0) return std::nullopt;
    Result result = results_.pop(timeout);
    --in_flight_jobs_;
    return result;
  }
  // Drops the queued jobs and waits for the results of those already taken.
  void drain() {
    in_flight_jobs_ -= new_jobs_.clear();
    while (in_flight_jobs_ > 0) pop_result();
  }
  size_t in_flight_jobs() const noexcept { return in_flight_jobs_; }

 private:
  size_t in_flight_jobs_ = 0;
  Queue<Job> new_jobs_;
  Queue<Result> results_;
};

}  // namespace kiln::data::detail
