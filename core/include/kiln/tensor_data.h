// kiln::tensor(): a tensor from a scalar, nested braces, a std::vector or an ArrayRef, with the
// dtype libtorch's torch::tensor infers from the C++ type of the values:
//   kiln::tensor(3)                        -> int64 0-dim     (int and int64_t give int64)
//   kiln::tensor({1.5, 2.})                -> float32 [2]     (float and double give the default
//                                                              dtype, get_default_dtype())
//   kiln::tensor(std::vector<int16_t>{1})  -> int16 [1]       (other types keep their dtype)
//   kiln::tensor({{1, 2}, {3, 4}}, kInt)   -> int32 [2, 2]
// All values must have one C++ type ({1, 2.5} is refused, as libtorch refuses it) and sub-lists
// one shape.
#pragma once

#include <kiln/array_ref.h>
#include <kiln/export.h>
#include <kiln/options.h>
#include <kiln/tensor.h>

#include <initializer_list>
#include <ostream>
#include <type_traits>
#include <vector>

namespace kiln {

// Nested values with a shape and the ScalarType of their C++ type.
class KILN_API TensorData {
 public:
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorData(T v) : type_(type_of<T>()), values_{Scalar(v)} {}  // NOLINT
  TensorData(std::initializer_list<TensorData> list);           // NOLINT
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorData(ArrayRef<T> v)  // NOLINT
      : type_(type_of<T>()), sizes_{static_cast<int64_t>(v.size())} {
    for (const T& x : v) values_.push_back(Scalar(x));
  }
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorData(const std::vector<T>& v)  // NOLINT
      : type_(type_of<T>()), sizes_{static_cast<int64_t>(v.size())} {
    for (const T& x : v) values_.push_back(Scalar(x));
  }

  const std::vector<int64_t>& sizes() const { return sizes_; }
  // Values flattened row-major (a scalar is one value).
  const std::vector<Scalar>& values() const { return values_; }
  // The ScalarType of the values' C++ type (the default dtype for an empty list).
  ScalarType scalar_type() const { return type_; }
  // The dtype the tensor gets without a dtype option, as libtorch's: int64 for int and int64_t,
  // the default dtype for float and double, the values' own dtype otherwise.
  ScalarType inferred_dtype() const;

 private:
  template <class T>
  static constexpr ScalarType type_of() {
    if constexpr (std::is_same_v<T, bool>) {
      return kBool;
    } else if constexpr (std::is_floating_point_v<T>) {
      return sizeof(T) == sizeof(float) ? kFloat : kDouble;
    } else if constexpr (std::is_unsigned_v<T>) {
      return sizeof(T) == 1 ? kByte : kLong;
    } else {
      constexpr ScalarType by_size[] = {kChar, kShort, kInt, kInt, kLong};
      return by_size[sizeof(T) == 8 ? 4 : sizeof(T) - 1];
    }
  }

  ScalarType type_;
  std::vector<Scalar> values_;
  std::vector<int64_t> sizes_;
};

// "{{1, 2}, {3, 4}}": the values in braces, as libtorch prints a TensorDataContainer.
KILN_API std::ostream& operator<<(std::ostream& out, const TensorData& data);

KILN_API Tensor tensor(const TensorData& data, const TensorOptions& options = {});

namespace detail {
using TensorDataContainer = TensorData;  // libtorch's name
}  // namespace detail

}  // namespace kiln
