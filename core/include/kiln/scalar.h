// Scalar: a number passed to an operator (`x + 2.5`, `full({2}, 7)`), tagged bool, integral or
// floating, which decides type promotion like PyTorch's wrapped numbers.
#pragma once

#include <kiln/dtype.h>
#include <kiln/export.h>

#include <cstdint>
#include <ostream>
#include <type_traits>

namespace kiln {

class KILN_API Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(TypeCategory::Bool) { i_ = v; }  // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(TypeCategory::Integral) {  // NOLINT
    i_ = static_cast<int64_t>(v);
  }
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(TypeCategory::Floating) {  // NOLINT
    d_ = static_cast<double>(v);
  }
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}      // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}  // NOLINT

  TypeCategory category() const { return kind_; }
  bool is_floating_point() const { return kind_ == TypeCategory::Floating; }
  bool is_integral(bool include_bool) const {
    return kind_ == TypeCategory::Integral || (include_bool && kind_ == TypeCategory::Bool);
  }
  bool is_bool() const { return kind_ == TypeCategory::Bool; }

  double to_double() const { return is_floating_point() ? d_ : static_cast<double>(i_); }
  int64_t to_long() const { return is_floating_point() ? static_cast<int64_t>(d_) : i_; }
  bool to_bool() const { return is_floating_point() ? d_ != 0 : i_ != 0; }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return to_bool();
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(to_long());
    } else {
      return static_cast<T>(to_double());
    }
  }
  // The dtype a wrapped number of this kind has: bool, int64 or the default float dtype.
  ScalarType type() const {
    return kind_ == TypeCategory::Floating ? default_float_dtype()
                                           : (kind_ == TypeCategory::Bool ? kBool : kLong);
  }
  Scalar operator-() const { return is_floating_point() ? Scalar(-d_) : Scalar(-i_); }

 private:
  TypeCategory kind_;
  union {
    int64_t i_;
    double d_;
  };
};

KILN_API std::ostream& operator<<(std::ostream& out, const Scalar& s);

}  // namespace kiln
