// Building blocks of module options, as libtorch's: KILN_ARG declares an option with a chaining
// setter and a getter (`Conv2dOptions(3, 8, 3).stride(2).padding(1)`, `options.stride()`), and
// ExpandingArray<D> takes one value for every dimension or D values (`kernel_size(3)` or
// `kernel_size({3, 5})`). Reduction is the reduction of a loss.
#pragma once

#include <kiln/array_ref.h>
#include <kiln/error.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

// Declares option `name` of type T (its default is the member initialiser that follows the
// macro's use, `KILN_ARG(int64_t, groups) = 1;`).
#define KILN_ARG(T, name)                                         \
 public:                                                          \
  inline auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                                   \
    return *this;                                                 \
  }                                                               \
  inline const T& name() const noexcept { return this->name##_; } \
                                                                  \
 private:                                                         \
  T name##_

namespace kiln::nn {

// D integers given as one (repeated) or as D.
template <size_t D>
class ExpandingArray {
 public:
  ExpandingArray(int64_t single) { values_.fill(single); }  // NOLINT: as libtorch
  ExpandingArray(std::initializer_list<int64_t> list) {     // NOLINT: as libtorch
    KILN_CHECK_VALUE(list.size() == D, "Expected ", D, " values, but instead got ", list.size());
    std::copy(list.begin(), list.end(), values_.begin());
  }
  ExpandingArray(const std::vector<int64_t>& v) {  // NOLINT: as libtorch
    KILN_CHECK_VALUE(v.size() == D, "Expected ", D, " values, but instead got ", v.size());
    std::copy(v.begin(), v.end(), values_.begin());
  }
  ExpandingArray(const std::array<int64_t, D>& values) : values_(values) {}  // NOLINT
  // The D values, as libtorch's `*array`.
  std::array<int64_t, D>& operator*() { return values_; }
  const std::array<int64_t, D>& operator*() const { return values_; }
  std::array<int64_t, D>* operator->() { return &values_; }
  const std::array<int64_t, D>* operator->() const { return &values_; }
  IntArrayRef ref() const { return IntArrayRef(values_.data(), D); }
  operator IntArrayRef() const { return ref(); }  // NOLINT
  const int64_t& operator[](size_t i) const { return values_[i]; }
  int64_t* data() { return values_.data(); }
  const int64_t* data() const { return values_.data(); }
  static constexpr size_t size() { return D; }
  bool operator==(const ExpandingArray& other) const { return values_ == other.values_; }

 private:
  std::array<int64_t, D> values_;
};

// Prints as libtorch's: [3, 3], and a single value alone (3).
template <size_t D>
std::ostream& operator<<(std::ostream& out, const ExpandingArray<D>& a) {
  if (D == 1) return out << a[0];
  out << '[';
  for (size_t i = 0; i < D; ++i) out << (i ? ", " : "") << a[i];
  return out << ']';
}

// How a loss reduces its elementwise values: kept (None), averaged (Mean) or summed (Sum).
enum class Reduction { None, Mean, Sum };

}  // namespace kiln::nn

namespace kiln {
// libtorch's spellings: `kiln::kMean` as torch::kMean.
inline constexpr nn::Reduction kNone = nn::Reduction::None;
inline constexpr nn::Reduction kMean = nn::Reduction::Mean;
inline constexpr nn::Reduction kSum = nn::Reduction::Sum;
}  // namespace kiln
