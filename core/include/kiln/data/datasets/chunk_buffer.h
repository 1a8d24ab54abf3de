// ChunkBuffer: ChunkDataset's cache between its preloader threads (writers) and get_batch()
// (readers, possibly several loader workers). A loaded group of chunks is shuffled by the
// example sampler and cut into batches; the cache holds at most `capacity` examples (writers
// wait), and a reader waits for a full batch, or for the end (stop()) to take a last, smaller
// one. An exception a writer adds is raised by the reader that reaches it.
#pragma once

#include <kiln/data/worker_exception.h>
#include <kiln/error.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>

namespace kiln::data::datasets::detail {

template <typename UnwrappedBatch, typename ExampleSampler>
class ChunkBuffer {
 public:
  ChunkBuffer(size_t batch_size, ExampleSampler& example_sampler, size_t capacity)
      : batch_size_(batch_size), example_sampler_(example_sampler), capacity_(capacity) {}

  // The next batch; nullopt once stopped and empty. Raises a writer's exception as a
  // WorkerException.
  std::optional<UnwrappedBatch> get_batch() {
    std::unique_lock<std::mutex> lock(mutex_);
    read_cv_.wait(lock, [&] {
      return examples_ >= batch_size_ || stop_ || (!queue_.empty() && queue_.front().error);
    });
    if (queue_.empty()) return std::nullopt;
    Entry entry = std::move(queue_.front());
    queue_.pop_front();
    if (entry.error) throw WorkerException(entry.error);
    examples_ -= entry.batch.size();
    lock.unlock();
    write_cv_.notify_all();
    return std::move(entry.batch);
  }

  // Shuffles `data` with the example sampler and appends it in batches (topping up the last,
  // smaller one first); waits while the cache is full. A no-op once stopped.
  void add_chunk_data(UnwrappedBatch data) {
    std::unique_lock<std::mutex> lock(mutex_);
    write_cv_.wait(lock, [&] { return examples_ < capacity_ || stop_; });
    if (stop_) return;
    const size_t n = data.size();
    example_sampler_.reset(n);
    size_t left = n;
    auto fill = [&](size_t count, UnwrappedBatch& batch) {
      auto indices = example_sampler_.next(count);
      KILN_CHECK(indices && indices->size() == count, "ChunkDataset: the example sampler gave ",
                 indices ? indices->size() : 0, " indices where ", count, " were asked (of a ",
                 "loaded chunk of ", n, " examples)");
      for (size_t i : *indices) {
        KILN_CHECK_INDEX(i < n, "ChunkDataset: the example sampler gave index ", i,
                         " for a loaded chunk of ", n, " examples");
        batch.push_back(std::move(data[i]));
      }
      left -= count;
    };
    if (!queue_.empty() && !queue_.back().error && queue_.back().batch.size() < batch_size_) {
      fill(std::min(left, batch_size_ - queue_.back().batch.size()), queue_.back().batch);
    }
    while (left > 0) {
      Entry entry;
      entry.batch.reserve(std::min(left, batch_size_));
      fill(std::min(left, batch_size_), entry.batch);
      queue_.push_back(std::move(entry));
    }
    examples_ += n;
    lock.unlock();
    read_cv_.notify_all();
  }

  // Queues `error` for the reader that reaches it (a no-op once stopped).
  void add_error(std::exception_ptr error) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (stop_) return;
    Entry entry;
    entry.error = std::move(error);
    queue_.push_back(std::move(entry));
    lock.unlock();
    read_cv_.notify_all();
  }

  // No more data: readers drain what is cached, writers return at once.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    write_cv_.notify_all();
    read_cv_.notify_all();
  }
  bool stopped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stop_;
  }

 private:
  struct Entry {
    UnwrappedBatch batch;
    std::exception_ptr error;
  };

  const size_t batch_size_;
  ExampleSampler& example_sampler_;  // the dataset's; used under mutex_
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable read_cv_, write_cv_;
  std::deque<Entry> queue_;
  size_t examples_ = 0;  // in queue_
  bool stop_ = false;
};

}  // namespace kiln::data::datasets::detail
