// Queue: a thread-safe FIFO whose pop() waits, for at most a timeout when given, as libtorch's
// torch::data::detail::Queue. kiln's loaders do not use it (their worker pool has its own
// queues, kiln/data/detail/job_pool.h); it is here for code written against libtorch's.
#pragma once

#include <kiln/error.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <utility>

namespace kiln::data::detail {

// The text of a loader's timeout error (shared with JobPool::take).
inline std::string queue_timeout_message(std::chrono::milliseconds timeout) {
  return kiln::detail::str("Timeout in DataLoader queue while waiting for next batch (timeout was ",
                           timeout.count(), " ms)");
}

template <typename T>
class Queue {
 public:
  void push(T value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push(std::move(value));
    }
    cv_.notify_one();
  }

  // The oldest value; waits for one, at most `timeout` when given (then throws kiln::Error).
  T pop(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto ready = [this] { return !queue_.empty(); };
    if (timeout) {
      KILN_CHECK(cv_.wait_for(lock, *timeout, ready), queue_timeout_message(*timeout));
    } else {
      cv_.wait(lock, ready);
    }
    T value = std::move(queue_.front());
    queue_.pop();
    return value;
  }

  // Empties the queue; returns how many values it dropped.
  size_t clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t size = queue_.size();
    queue_ = std::queue<T>();
    return size;
  }

 private:
  std::queue<T> queue_;
  std::mutex mutex_;
  std::condition_variable cv_;
};

}  // namespace kiln::data::detail
