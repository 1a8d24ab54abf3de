// kiln::tensor(): a tensor from a scalar or nested braces, as libtorch's torch::tensor.
//   kiln::tensor(3)                       -> tensor(3)           int64
//   kiln::tensor({1.5, 2.})               -> tensor([1.5, 2.])   float32
//   kiln::tensor({{1, 2}, {3, 4}}, kInt)  -> int32 2x2
#pragma once

#include <kiln/export.h>
#include <kiln/options.h>
#include <kiln/tensor.h>

#include <initializer_list>
#include <type_traits>
#include <vector>

namespace kiln {

// Nested values with a shape; inner lists must agree in length (checked).
class KILN_API TensorData {
 public:
  TensorData(bool v) : scalar_(v), is_scalar_(true), values_{Scalar(v)} {}  // NOLINT
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorData(T v) : scalar_(v), is_scalar_(true), values_{Scalar(v)} {}  // NOLINT
  TensorData(std::initializer_list<TensorData> list);                    // NOLINT
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorData(const std::vector<T>& v) : is_scalar_(false) {  // NOLINT
    sizes_ = {static_cast<int64_t>(v.size())};
    for (const T& x : v) values_.push_back(Scalar(x));
    category_ = v.empty() ? TypeCategory::Floating : Scalar(v.front()).category();
  }

  const std::vector<int64_t>& sizes() const { return sizes_; }
  // Values flattened row-major (a scalar is one value).
  const std::vector<Scalar>& values() const { return values_; }
  // int64, float32 or bool, from the kinds of the values (the widest wins).
  ScalarType inferred_dtype() const;

 private:
  Scalar scalar_;
  bool is_scalar_;
  std::vector<Scalar> values_;
  std::vector<int64_t> sizes_;
  TypeCategory category_ = TypeCategory::Bool;

  friend class TensorDataBuilder;
};

KILN_API Tensor tensor(const TensorData& data, const TensorOptions& options = {});

}  // namespace kiln
