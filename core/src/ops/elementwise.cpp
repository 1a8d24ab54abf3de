#include "elementwise.h"

#include "../runtime.h"

namespace kiln::detail {
namespace {

// Promotion state of one priority class (dimensioned, 0-dim, wrapped).
struct ResultState {
  bool any = false;
  ScalarType type = kBool;
  void add(ScalarType t) {
    type = any ? promote_types(type, t) : t;
    any = true;
  }
};

// PyTorch's combine step: a lower-priority class only matters when its category is higher.
ScalarType combine(ScalarType higher, bool higher_any, ScalarType lower, bool lower_any) {
  if (!higher_any) return lower;
  if (!lower_any) return higher;
  if (category(lower) > category(higher)) {
    return promote_types(higher, lower);
  }
  return higher;
}

}  // namespace

ScalarType result_type_of(std::initializer_list<const Tensor*> tensors) {
  ResultState dims, zero_dims, wrapped;
  for (const Tensor* t : tensors) {
    if (t->impl().wrapped_number) {
      // a wrapped number counts by category: bool, int64 or the default float dtype
      ScalarType d = t->dtype();
      wrapped.add(is_floating_point(d) ? default_float_dtype() : (d == kBool ? kBool : kLong));
    } else if (t->dim() == 0) {
      zero_dims.add(t->dtype());
    } else {
      dims.add(t->dtype());
    }
  }
  ScalarType r = combine(dims.type, dims.any, zero_dims.type, zero_dims.any);
  bool any = dims.any || zero_dims.any;
  return combine(r, any, wrapped.type, wrapped.any);
}

Tensor wrap_scalar(const Scalar& s, ScalarType dtype, Device device) {
  Tensor t = empty_tensor({}, dtype, device);
  t.fill_(s);
  t.impl().wrapped_number = true;
  return t;
}

Device common_device(const char* op, std::initializer_list<const Tensor*> tensors) {
  const Tensor* first = nullptr;
  for (const Tensor* t : tensors) {
    if (t->dim() == 0 && t->device().is_cpu()) continue;  // may join any device
    if (first == nullptr) {
      first = t;
      continue;
    }
    if (!(t->device() == first->device())) {
      throw Error(str(op, ": expected all tensors to be on the same device, but found at least ",
                      "two devices, ", first->device().str(), " and ", t->device().str(), "!"));
    }
  }
  return first != nullptr ? first->device() : (*tensors.begin())->device();
}

Tensor prepare_input(const Tensor& t, ScalarType dtype, Device device, IntArrayRef sizes) {
  Tensor r = t;
  if (!(r.device() == device)) r = r.to(device);
  if (r.dtype() != dtype) r = r.to(dtype);
  if (!r.sizes().equals(sizes)) r = r.expand(sizes);
  return r;
}

namespace {
bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

// PyTorch's C++ names of the dtypes, which its message for a failed in-place cast uses.
const char* torch_type_name(ScalarType t) {
  static const char* const names[kNumScalarTypes] = {"Bool", "Byte", "Char",     "Short", "Int",
                                                     "Long", "Half", "BFloat16", "Float", "Double"};
  return names[static_cast<int>(t)];
}
}  // namespace

void check_inplace(const char* op, const Tensor& self, ScalarType result, IntArrayRef sizes) {
  KILN_CHECK_TYPE(can_cast(result, self.dtype()), op, ": result type ", torch_type_name(result),
                  " can't be cast to the desired output type ", torch_type_name(self.dtype()));
  KILN_CHECK_VALUE(self.sizes().equals(sizes), op, ": output with shape ", self.sizes(),
                   " doesn't match the broadcast shape ", sizes);
  check_no_internal_overlap(op, self);
}

void check_no_internal_overlap(const char* op, const Tensor& self) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    KILN_CHECK_VALUE(self.strides()[d] != 0 || self.sizes()[d] <= 1, op,
                     ": unsupported operation: more than one element of the written-to tensor ",
                     "refers to a single memory location. Please clone() the tensor before ",
                     "performing the operation.");
  }
}

void throw_dtype_unsupported(const char* op, ScalarType dtype) {
  throw TypeError(str(op, ": not implemented for dtype ", dtype_name(dtype)));
}

}  // namespace kiln::detail

namespace kiln {

std::vector<int64_t> broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  return detail::broadcast_dims(a, b).vec();
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  return detail::result_type_of({&a, &b});
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  return detail::scalar_result_type(a, b);
}

}  // namespace kiln

namespace kiln::detail {

ScalarType scalar_result_type(const Tensor& a, const Scalar& s) {
  ScalarType t = a.dtype();
  if (a.impl().wrapped_number) {
    t = is_floating_point(t) ? default_float_dtype() : (t == kBool ? kBool : kLong);
    return promote_types(t, s.type());
  }
  return combine(t, true, s.type(), true);
}

DimVector broadcast_dims(IntArrayRef a, IntArrayRef b) {
  if (a.equals(b)) return DimVector(a);
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    KILN_CHECK_VALUE(da == db || da == 1 || db == 1, "The size of tensor a (", da,
                     ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace kiln::detail
