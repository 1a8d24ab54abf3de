// Scalar: a number passed to an operator (`x + 2.5`, `full({2}, 7)`), tagged bool, integral or
// floating, which decides type promotion like PyTorch's wrapped numbers.
#pragma once

#include <kiln/dtype.h>
#include <kiln/export.h>

#include <cstdint>
#include <limits>
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
  // Truncates a floating value toward zero; raises kiln::ValueError when it is NaN or outside
  // int64's range (the conversion would be undefined).
  int64_t to_long() const { return is_floating_point() ? checked_long(d_, "int64_t") : i_; }
  bool to_bool() const { return is_floating_point() ? d_ != 0 : i_ != 0; }
  // The value as T; an integral T that cannot hold it raises kiln::ValueError ("value cannot be
  // converted to type int32_t without overflow"), as libtorch's Scalar::to does.
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return to_bool();
    } else if constexpr (std::is_integral_v<T>) {
      static_assert(sizeof(T) <= sizeof(int64_t), "Scalar::to: integers up to 64 bits");
      if constexpr (std::is_same_v<T, int64_t>) {
        return to_long();
      } else {
        int64_t v = is_floating_point() ? checked_long(d_, integral_name<T>()) : i_;
        bool fits = std::is_unsigned_v<T>
                        ? v >= 0 && static_cast<uint64_t>(v) <= std::numeric_limits<T>::max()
                        : v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
        if (!fits) overflow(integral_name<T>());
        return static_cast<T>(v);
      }
    } else {
      return static_cast<T>(to_double());
    }
  }
  // libtorch's spellings.
  double toDouble() const { return to<double>(); }
  float toFloat() const { return to<float>(); }
  Half toHalf() const { return to<Half>(); }
  BFloat16 toBFloat16() const { return to<BFloat16>(); }
  int64_t toLong() const { return to<int64_t>(); }
  int32_t toInt() const { return to<int32_t>(); }
  int16_t toShort() const { return to<int16_t>(); }
  int8_t toChar() const { return to<int8_t>(); }
  uint8_t toByte() const { return to<uint8_t>(); }
  bool toBool() const { return to<bool>(); }
  bool isFloatingPoint() const { return is_floating_point(); }
  bool isIntegral(bool include_bool) const { return is_integral(include_bool); }
  bool isBoolean() const { return is_bool(); }

  // The dtype a wrapped number of this kind has: bool, int64 or the default float dtype.
  ScalarType type() const {
    return kind_ == TypeCategory::Floating ? default_float_dtype()
                                           : (kind_ == TypeCategory::Bool ? kBool : kLong);
  }
  Scalar operator-() const { return is_floating_point() ? Scalar(-d_) : Scalar(-i_); }

 private:
  int64_t checked_long(double v, const char* type) const {
    // 2^63 is exact as a double; int64's range is [-2^63, 2^63).
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) overflow(type);
    return static_cast<int64_t>(v);
  }
  template <class T>
  static constexpr const char* integral_name() {
    if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
    if constexpr (std::is_same_v<T, int16_t>) return "int16_t";
    if constexpr (std::is_same_v<T, int8_t>) return "int8_t";
    if constexpr (std::is_same_v<T, uint8_t>) return "uint8_t";
    return "an integer type";
  }
  [[noreturn]] void overflow(const char* type) const;

  TypeCategory kind_;
  union {
    int64_t i_;
    double d_;
  };
};

KILN_API std::ostream& operator<<(std::ostream& out, const Scalar& s);

}  // namespace kiln
