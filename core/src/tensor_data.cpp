#include "tensor_internal.h"

#include <kiln/ops.h>
#include <kiln/tensor_data.h>

#include <sstream>
#include <vector>

namespace kiln {
namespace {

// libtorch's names of the C++ types in its messages ("Int", "Double").
const char* cpp_type_name(ScalarType t) {
  static const char* const names[kNumScalarTypes] = {"Bool", "Byte", "Char",     "Short", "Int",
                                                     "Long", "Half", "BFloat16", "Float", "Double"};
  return names[static_cast<int>(t)];
}

// Prints the values of `data` from `first` with sizes from dimension `d` on.
void print(std::ostream& out, const TensorData& data, size_t d, size_t& next) {
  if (d == data.sizes().size()) {
    const Scalar& v = data.values().at(next++);
    if (v.is_floating_point()) {
      out << v.to_double();
    } else if (v.is_bool()) {
      out << v.to_bool();
    } else {
      out << v.to_long();
    }
    return;
  }
  out << "{";
  for (int64_t i = 0; i < data.sizes()[d]; ++i) {
    if (i > 0) out << ", ";
    print(out, data, d + 1, next);
  }
  out << "}";
}

}  // namespace

TensorData::TensorData(std::initializer_list<TensorData> list) : type_(default_float_dtype()) {
  sizes_ = {static_cast<int64_t>(list.size())};
  if (list.size() == 0) return;  // tensor({}): the default dtype, as libtorch's
  const TensorData& first = *list.begin();
  type_ = first.type_;
  for (const TensorData& item : list) {
    KILN_CHECK_VALUE(item.sizes_ == first.sizes_,
                     "tensor: Expected all sub-lists to have sizes: ", IntArrayRef(first.sizes_),
                     " (e.g. ", first, "), but got sub-list ", item,
                     " with sizes: ", IntArrayRef(item.sizes_));
    KILN_CHECK_TYPE(item.type_ == first.type_, "tensor: Expected all elements of the tensor to ",
                    "have the same scalar type: ", cpp_type_name(first.type_), ", but got ",
                    "element of scalar type: ", cpp_type_name(item.type_));
    values_.insert(values_.end(), item.values_.begin(), item.values_.end());
  }
  sizes_.insert(sizes_.end(), first.sizes_.begin(), first.sizes_.end());
}

ScalarType TensorData::inferred_dtype() const {
  if (type_ == kInt || type_ == kLong) return kLong;
  if (type_ == kFloat || type_ == kDouble) return default_float_dtype();
  return type_;
}

std::ostream& operator<<(std::ostream& out, const TensorData& data) {
  size_t next = 0;
  print(out, data, 0, next);
  return out;
}

Tensor tensor(const TensorData& data, const TensorOptions& options) {
  ScalarType dtype = options.dtype_or(data.inferred_dtype());
  const std::vector<Scalar>& values = data.values();
  // build on the host in float64 or int64, then convert on the target device
  bool floating = is_floating_point(data.scalar_type());
  auto n = static_cast<int64_t>(values.size());
  Tensor host;
  std::vector<double> d;
  std::vector<int64_t> i;
  if (floating) {
    for (const Scalar& s : values) d.push_back(s.to_double());
    host = from_blob(d.data(), {n}, TensorOptions().dtype(kDouble));
  } else {
    for (const Scalar& s : values) i.push_back(s.to_long());
    host = from_blob(i.data(), {n}, TensorOptions().dtype(kLong));
  }
  Tensor out = detail::empty_tensor(data.sizes(), dtype, options.device());
  if (n > 0) out.copy_(host.view(data.sizes()));
  out.storage()->reset_version();  // a new tensor is at version 0
  if (options.requires_grad()) out.requires_grad_();
  return out;
}

}  // namespace kiln
