// Indexing with libtorch's names: x.index({Slice(0, 2), 1, None, Ellipsis}). Integers select,
// slices narrow with a step, None inserts a dimension, Ellipsis stands for the dimensions not
// named. Every form gives a view of x's storage.
#pragma once

#include <kiln/export.h>

#include <cstdint>
#include <optional>

namespace kiln::indexing {

struct NoneIndexType {};
struct EllipsisIndexType {};
inline constexpr NoneIndexType None{};
inline constexpr EllipsisIndexType Ellipsis{};

// A slice bound: an integer, or None / std::nullopt for "the edge of the dimension".
class SliceBound {
 public:
  SliceBound(int64_t v) : v_(v) {}                 // NOLINT
  SliceBound(int v) : v_(v) {}                     // NOLINT
  SliceBound(std::nullopt_t) {}                    // NOLINT
  SliceBound(NoneIndexType) {}                     // NOLINT
  SliceBound(std::optional<int64_t> v) : v_(v) {}  // NOLINT
  std::optional<int64_t> value() const { return v_; }

 private:
  std::optional<int64_t> v_;
};

// Python's start:stop:step; an absent bound means the edge of the dimension.
class Slice {
 public:
  Slice(SliceBound start = std::nullopt, SliceBound stop = std::nullopt,
        SliceBound step = std::nullopt)
      : start_(start.value()), stop_(stop.value()), step_(step.value().value_or(1)) {}
  std::optional<int64_t> start() const { return start_; }
  std::optional<int64_t> stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  std::optional<int64_t> start_, stop_;
  int64_t step_;
};

}  // namespace kiln::indexing

namespace kiln {

class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis };
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}        // NOLINT
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}            // NOLINT
  TensorIndex(indexing::Slice s) : kind_(Kind::Slice), slice_(s) {}    // NOLINT
  TensorIndex(indexing::NoneIndexType) : kind_(Kind::None) {}          // NOLINT
  TensorIndex(indexing::EllipsisIndexType) : kind_(Kind::Ellipsis) {}  // NOLINT

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const indexing::Slice& slice() const { return slice_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  indexing::Slice slice_;
};

}  // namespace kiln
