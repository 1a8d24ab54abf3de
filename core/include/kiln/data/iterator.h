// Iterator: the input iterator of the libtorch-shaped loaders (kiln/data/dataloader/base.h).
// begin() gives one over a new epoch, end() the past-the-end sentinel. Copies share the
// position; a batch is loaded when first needed (dereference, ++, or comparison with end()).
// Two valid iterators are equal only when they are copies of one another, as libtorch's.
#pragma once

#include <kiln/error.h>

#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>

namespace kiln::data {

namespace detail {
// One epoch's position, shared by the copies of an Iterator.
template <typename Batch>
class IteratorState {
 public:
  explicit IteratorState(std::function<std::optional<Batch>()> next) : next_(std::move(next)) {}

  // The current batch, loaded on first use; nullopt at the end of the epoch, and at a position
  // whose load raised (failed()).
  std::optional<Batch>& current() {
    if (!loaded_) {
      loaded_ = true;
      load();
    }
    return batch_;
  }
  // Loads the next batch. A load that raises (a worker's error) takes a position of its own, so
  // the ++ after catching it moves to the batch after the error, wherever the error came: before
  // this rule, an error raised by the first load left the position unloaded, and the ++ after it
  // loaded the first good batch and skipped it at once (with workers that finish out of order,
  // the error is not always at the same position).
  void advance() {
    KILN_CHECK(failed_ || current().has_value(), "Attempted to increment iterator past the end ",
               "(the DataLoader's epoch is exhausted; call begin() for the next one)");
    load();
  }
  // Whether loading the current position raised.
  bool failed() const { return failed_; }
  bool exhausted() const { return loaded_ && !batch_ && !failed_; }

 private:
  void load() {
    batch_.reset();
    failed_ = true;
    batch_ = next_();
    failed_ = false;
  }

  std::function<std::optional<Batch>()> next_;
  std::optional<Batch> batch_;
  bool loaded_ = false;
  bool failed_ = false;  // the current position's load raised
};
}  // namespace detail

template <typename Batch>
class Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  using pointer = Batch*;
  using reference = Batch&;

  // The past-the-end sentinel.
  Iterator() = default;
  explicit Iterator(std::shared_ptr<detail::IteratorState<Batch>> state)
      : state_(std::move(state)) {}

  // The current batch (loaded when first needed; a worker's error is raised here).
  Batch& operator*() const {
    KILN_CHECK(state_ != nullptr, "Dereferencing the DataLoader's past-the-end iterator is not ",
               "allowed");
    std::optional<Batch>& batch = state_->current();
    KILN_CHECK(!state_->failed(), "DataLoader: dereferencing an iterator whose batch failed to ",
               "load (its error was raised when it was loaded); increment it to go on");
    KILN_CHECK(batch.has_value(), "Attempted to dereference iterator that was past the end (the ",
               "DataLoader's epoch is exhausted)");
    return *batch;
  }
  Batch* operator->() const { return &**this; }
  // Loads the next batch.
  Iterator& operator++() {
    KILN_CHECK(state_ != nullptr, "Incrementing the DataLoader's past-the-end iterator is not ",
               "allowed");
    state_->advance();
    return *this;
  }
  void operator++(int) { ++*this; }

  // Sentinels are equal; a valid iterator equals the sentinel once its epoch is exhausted (this
  // loads its batch; a position whose load raised is not the end) and another valid iterator only
  // when they share their position.
  bool operator==(const Iterator& other) const {
    if (state_ && other.state_) return state_ == other.state_;
    if (!state_ && !other.state_) return true;
    const auto& valid = state_ ? state_ : other.state_;
    return !valid->current().has_value() && !valid->failed();
  }
  bool operator!=(const Iterator& other) const { return !(*this == other); }

 private:
  std::shared_ptr<detail::IteratorState<Batch>> state_;
};

}  // namespace kiln::data
