// Element types and PyTorch's type promotion.
//
// ScalarType's values equal the SDK's kiln_dtype codes, so a dtype crosses the plugin boundary
// unchanged. Names follow libtorch: kFloat (= kFloat32), kLong (= kInt64), kBFloat16, ...
#pragma once

#include <kiln/export.h>
#include <kiln/sdk/half.hpp>

#include <cstdint>
#include <ostream>

namespace kiln {

using Half = sdk::Half;
using BFloat16 = sdk::BFloat16;

enum class ScalarType : int8_t {
  Bool = 0,
  Byte = 1,   // uint8
  Char = 2,   // int8
  Short = 3,  // int16
  Int = 4,    // int32
  Long = 5,   // int64
  Half = 6,
  BFloat16 = 7,
  Float = 8,
  Double = 9,
};
constexpr int kNumScalarTypes = 10;

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kUInt8 = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kInt8 = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt16 = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kFloat64 = ScalarType::Double;

// Bytes per element.
inline size_t element_size(ScalarType t) {
  constexpr size_t sizes[kNumScalarTypes] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return sizes[static_cast<int>(t)];
}
// "float32", "int64", "bfloat16", ... (PyTorch's names).
KILN_API const char* dtype_name(ScalarType t);
KILN_API std::ostream& operator<<(std::ostream& out, ScalarType t);

constexpr bool is_floating_point(ScalarType t) {
  return t == kHalf || t == kBFloat16 || t == kFloat || t == kDouble;
}
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return (t >= kByte && t <= kLong) || (include_bool && t == kBool);
}

// The default floating dtype (float32 unless set_default_dtype changed it), as
// torch.get_default_dtype(): the dtype of floating factories without a dtype, of floating
// numbers in kiln::tensor and type promotion, and of floating results of integer inputs.
KILN_API ScalarType default_float_dtype();

// The smallest dtype both a and b convert to without losing range or kind, as
// torch.promote_types: uint8 + int8 -> int16, float16 + bfloat16 -> float32, bool + x -> x.
KILN_API ScalarType promote_types(ScalarType a, ScalarType b);

// Type category for scalar/tensor promotion: bool < integral < floating.
enum class TypeCategory : int8_t { Bool = 0, Integral = 1, Floating = 2 };
constexpr TypeCategory category(ScalarType t) {
  return t == kBool ? TypeCategory::Bool
                    : (is_floating_point(t) ? TypeCategory::Floating : TypeCategory::Integral);
}

// C++ type to ScalarType: scalar_type_of<float>() == kFloat.
template <class T>
constexpr ScalarType scalar_type_of();
template <>
constexpr ScalarType scalar_type_of<bool>() {
  return kBool;
}
template <>
constexpr ScalarType scalar_type_of<uint8_t>() {
  return kByte;
}
template <>
constexpr ScalarType scalar_type_of<int8_t>() {
  return kChar;
}
template <>
constexpr ScalarType scalar_type_of<int16_t>() {
  return kShort;
}
template <>
constexpr ScalarType scalar_type_of<int32_t>() {
  return kInt;
}
template <>
constexpr ScalarType scalar_type_of<int64_t>() {
  return kLong;
}
template <>
constexpr ScalarType scalar_type_of<Half>() {
  return kHalf;
}
template <>
constexpr ScalarType scalar_type_of<BFloat16>() {
  return kBFloat16;
}
template <>
constexpr ScalarType scalar_type_of<float>() {
  return kFloat;
}
template <>
constexpr ScalarType scalar_type_of<double>() {
  return kDouble;
}

// libtorch's caffe2::TypeMeta, as far as its default-dtype API uses it: a dtype as a value
// with an item size and a name. It compares equal to its ScalarType.
class TypeMeta {
 public:
  constexpr TypeMeta() = default;  // float32
  static constexpr TypeMeta fromScalarType(ScalarType t) { return TypeMeta(t); }
  template <class T>
  static constexpr TypeMeta Make() {
    return TypeMeta(scalar_type_of<T>());
  }
  constexpr ScalarType toScalarType() const { return type_; }
  size_t itemsize() const { return element_size(type_); }
  const char* name() const { return dtype_name(type_); }
  friend constexpr bool operator==(TypeMeta a, TypeMeta b) { return a.type_ == b.type_; }
  friend constexpr bool operator==(TypeMeta a, ScalarType b) { return a.type_ == b; }

 private:
  constexpr explicit TypeMeta(ScalarType t) : type_(t) {}
  ScalarType type_ = kFloat;
};
constexpr TypeMeta scalarTypeToTypeMeta(ScalarType t) { return TypeMeta::fromScalarType(t); }
constexpr ScalarType typeMetaToScalarType(TypeMeta m) { return m.toScalarType(); }

// Sets the default floating dtype for every thread (a floating dtype; others are refused),
// as torch::set_default_dtype.
KILN_API void set_default_dtype(TypeMeta dtype);
KILN_API TypeMeta get_default_dtype();
inline ScalarType get_default_dtype_as_scalartype() { return default_float_dtype(); }

}  // namespace kiln
