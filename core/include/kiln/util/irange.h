// Integer ranges for range-for, as libtorch's c10::irange: `for (auto i : kiln::irange(n))`
// visits 0, 1, ..., n-1 with `i` of n's type; `irange(begin, end)` visits begin, ..., end-1 typed
// as `end`. A range whose end is below its begin is empty, never a wrap-around.
#pragma once

#include <concepts>
#include <cstddef>
#include <iterator>

namespace kiln {

template <std::integral Integer>
class integer_range {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Integer;
    using difference_type = std::ptrdiff_t;
    using pointer = const Integer*;
    using reference = Integer;

    constexpr iterator() = default;
    constexpr explicit iterator(Integer value) : value_(value) {}
    constexpr Integer operator*() const { return value_; }
    constexpr const Integer* operator->() const { return &value_; }
    constexpr iterator& operator++() {
      ++value_;
      return *this;
    }
    constexpr iterator operator++(int) {
      iterator before = *this;
      ++value_;
      return before;
    }
    constexpr bool operator==(const iterator&) const = default;

   private:
    Integer value_{};
  };

  constexpr integer_range(Integer begin, Integer end)
      : begin_(begin), end_(end < begin ? begin : end) {}
  constexpr iterator begin() const { return iterator(begin_); }
  constexpr iterator end() const { return iterator(end_); }
  constexpr bool empty() const { return begin_ == end_; }

 private:
  Integer begin_;
  Integer end_;  // never below begin_
};

// 0, 1, ..., end-1 (empty when end <= 0).
template <std::integral Integer>
constexpr integer_range<Integer> irange(Integer end) {
  return integer_range<Integer>(Integer{}, end);
}

// begin, begin+1, ..., end-1 as end's type (empty when end <= begin).
template <std::integral Begin, std::integral End>
constexpr integer_range<End> irange(Begin begin, End end) {
  return integer_range<End>(static_cast<End>(begin), end);
}

}  // namespace kiln
