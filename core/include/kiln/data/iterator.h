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

  // The current batch, loaded on first use; nullopt at the end of the epoch.
  std::optional<Batch>& current() {
    if (!loaded_) {
      batch_ = next_();
      loaded_ = true;
    }
    return batch_;
  }
  // Loads the next batch.
  void advance() {
    KILN_CHECK(current().has_value(), "Attempted to increment iterator past the end (the ",
               "DataLoader's epoch is exhausted; call begin() for the next one)");
    batch_ = next_();
  }
  bool exhausted() const { return loaded_ && !batch_; }

 private:
  std::function<std::optional<Batch>()> next_;
  std::optional<Batch> batch_;
  bool loaded_ = false;
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
  // loads its batch) and another valid iterator only when they share their position.
  bool operator==(const Iterator& other) const {
    if (state_ && other.state_) return state_ == other.state_;
    if (!state_ && !other.state_) return true;
    const auto& valid = state_ ? state_ : other.state_;
    return !valid->current().has_value();
  }
  bool operator!=(const Iterator& other) const { return !(*this == other); }

 private:
  std::shared_ptr<detail::IteratorState<Batch>> state_;
};

}  // namespace kiln::data
