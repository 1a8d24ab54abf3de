#include "tensor_internal.h"

#include <kiln/ops.h>
#include <kiln/tensor_data.h>

#include <vector>

namespace kiln {

TensorData::TensorData(std::initializer_list<TensorData> list) : is_scalar_(false) {
  sizes_ = {static_cast<int64_t>(list.size())};
  category_ = TypeCategory::Bool;
  bool first = true;
  std::vector<int64_t> inner;
  for (const TensorData& item : list) {
    std::vector<int64_t> item_sizes = item.is_scalar_ ? std::vector<int64_t>{} : item.sizes_;
    if (first) {
      inner = item_sizes;
      first = false;
    }
    KILN_CHECK_VALUE(item_sizes == inner, "tensor: expected all sub-lists to have sizes ",
                     IntArrayRef(inner), " but got ", IntArrayRef(item_sizes));
    if (item.is_scalar_) {
      values_.push_back(item.scalar_);
      category_ = std::max(category_, item.scalar_.category());
    } else {
      values_.insert(values_.end(), item.values_.begin(), item.values_.end());
      category_ = std::max(category_, item.category_);
    }
  }
  sizes_.insert(sizes_.end(), inner.begin(), inner.end());
  if (list.size() == 0) category_ = TypeCategory::Floating;  // tensor({}) is float32
}

ScalarType TensorData::inferred_dtype() const {
  TypeCategory c = is_scalar_ ? scalar_.category() : category_;
  return c == TypeCategory::Floating ? default_float_dtype()
                                     : (c == TypeCategory::Bool ? kBool : kLong);
}

Tensor tensor(const TensorData& data, const TensorOptions& options) {
  ScalarType dtype = options.dtype_or(data.inferred_dtype());
  const std::vector<Scalar>& values = data.values();
  // build on the host in float64 or int64, then convert on the target device
  bool floating = data.inferred_dtype() == default_float_dtype();
  int64_t n = static_cast<int64_t>(values.size());
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
