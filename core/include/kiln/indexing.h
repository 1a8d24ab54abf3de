// Indexing with libtorch's names: x.index({Slice(0, 2), 1, None, Ellipsis, idx}), as PyTorch's
// x[0:2, 1, None, ..., idx]. Integers select, slices narrow with a step, None inserts a
// dimension, Ellipsis ("...") stands for the dimensions not named: these give views of x.
//
// Tensors index as PyTorch's advanced indexing and give a copy (with gradients):
// - an int64 tensor picks entries along its dimension (negative values count from the end);
// - a bool (or uint8) mask of k dimensions stands for the int64 indices of its true elements
//   over the next k dimensions (mask.nonzero()); `true` and `false` index a new dimension of
//   size 1 with [0] and [];
// - the index tensors broadcast together to a shape B. When they index adjacent dimensions, B
//   replaces those dimensions in place; when a slice, None or integer separates them, B comes
//   first and the other dimensions follow in order: for x [5, 6, 7] and i, j of shape [2],
//   x.index({Slice(), i, j}) is [5, 2] and x.index({i, Slice(), j}) is [2, 6].
// A 0-dim int64 tensor selects as an integer does.
//
// x.index_put_(indices, v) writes v (broadcast to the shape x.index(indices) has) where the
// indices point, through the views the basic indices make; with repeated indices the last write
// wins. accumulate = true adds instead, every repeat adding up.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <cstdint>
#include <optional>
#include <type_traits>

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

class KILN_API TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Boolean, Tensor };
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}      // NOLINT
  // exactly bool (a size_t must not pick it)
  template <class T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T b) : kind_(Kind::Boolean), integer_(b ? 1 : 0) {}      // NOLINT
  TensorIndex(indexing::Slice s) : kind_(Kind::Slice), slice_(s) {}    // NOLINT
  TensorIndex(indexing::NoneIndexType) : kind_(Kind::None) {}          // NOLINT
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}                   // NOLINT
  TensorIndex(indexing::EllipsisIndexType) : kind_(Kind::Ellipsis) {}  // NOLINT
  // "..." only, as libtorch's
  TensorIndex(const char* ellipsis);                                     // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return integer_ != 0; }
  const indexing::Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  indexing::Slice slice_;
  Tensor tensor_;
};

}  // namespace kiln
