#include "jit/tracer.h"
#include "kernel_call.h"
#include "print_format.h"
#include "runtime.h"
#include "small_pool.h"
#include "tensor_internal.h"

#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/ops.h>
#include <kiln/sdk/half.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>

namespace kiln {
namespace detail {

Tensor make_tensor(std::shared_ptr<Storage> storage, IntArrayRef sizes, IntArrayRef strides,
                   int64_t offset, ScalarType dtype) {
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->device = storage->device();
  impl->storage = std::move(storage);
  impl->sizes.assign(sizes);
  impl->strides.assign(strides);
  impl->offset = offset;
  impl->numel = checked_numel("tensor", sizes, dtype);
  impl->dtype = dtype;
  impl->inference = autograd::InferenceMode::is_enabled();
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  Tensor v = make_tensor(t.storage(), sizes, strides, offset, t.dtype());
  v.impl().view = true;
  // a view of an inference tensor is one; a view of a normal tensor is normal, even when made
  // in InferenceMode (as in PyTorch)
  v.impl().inference = t.impl().inference;
  return v;
}

Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  int64_t n = checked_numel("empty", sizes, dtype);
  auto storage = std::allocate_shared<Storage>(PoolAllocator<Storage>(), device,
                                               static_cast<size_t>(n) * element_size(dtype));
  // make_tensor with the contiguous strides written in place (no temporary DimVector)
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->device = device;
  impl->storage = std::move(storage);
  impl->sizes.assign(sizes);
  impl->strides.resize(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    impl->strides[i] = stride;
    stride *= sizes[i] > 1 ? sizes[i] : 1;
  }
  impl->numel = n;
  impl->dtype = dtype;
  impl->inference = autograd::InferenceMode::is_enabled();
  return Tensor(std::move(impl));
}

int64_t checked_numel(const char* op, IntArrayRef sizes, ScalarType dtype) {
  int64_t numel = 1;
  auto extent = static_cast<int64_t>(element_size(dtype));  // bytes, each 0 counted as 1
  for (int64_t s : sizes) {
    KILN_CHECK_VALUE(s >= 0, op, ": negative dimension ", s, " in sizes ", sizes);
    if (__builtin_mul_overflow(extent, s > 1 ? s : 1, &extent)) {
      bool none = std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
      throw ValueError(str(op, ": sizes ", sizes, " of ", dtype_name(dtype), " are too large: ",
                           none ? "the strides of a tensor with these sizes (which has no "
                                  "elements)"
                                : "the byte count",
                           " would overflow int64 (at most ", std::numeric_limits<int64_t>::max(),
                           " bytes)"));
    }
    numel *= s;  // at most extent
  }
  return numel;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

int64_t product(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = ndim == 0 ? 1 : ndim;
  KILN_CHECK_INDEX(dim >= -n && dim < n, op, ": dimension out of range (expected to be in range ",
                   "of [", -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

std::vector<unsigned char> host_bytes(const Tensor& t) {
  note_host_read();
  if (local_dispatch_state().tracer != nullptr) [[unlikely]] {
    jit::detail::note_value_read("item(), nonzero, a bool or the printing of a tensor");
  }
  std::vector<unsigned char> buf(t.nbytes());
  if (t.numel() == 0) return buf;
  DeviceTypeRecord& r = require_device(t.device(), "read");
  DimVector strides = contiguous_strides(t.sizes());
  kiln_tensor dst{buf.data(),
                  static_cast<int32_t>(t.dtype()),
                  static_cast<int32_t>(t.dim()),
                  t.sizes().data(),
                  strides.data(),
                  {KILN_DEVICE_HOST, 0}};
  kiln_tensor src = describe(t);
  if (r.ops->copy(r.self, &dst, &src) != 0) {
    throw Error(str("copy to host from ", t.device().str(), ": ", take_plugin_error()));
  }
  return buf;
}

double host_double(const unsigned char* data, ScalarType dtype, int64_t i) {
  switch (dtype) {
    case kBool: return reinterpret_cast<const bool*>(data)[i] ? 1.0 : 0.0;
    case kByte: return data[i];
    case kChar: return reinterpret_cast<const int8_t*>(data)[i];
    case kShort: return reinterpret_cast<const int16_t*>(data)[i];
    case kInt: return reinterpret_cast<const int32_t*>(data)[i];
    case kLong: return static_cast<double>(reinterpret_cast<const int64_t*>(data)[i]);
    case kHalf: return reinterpret_cast<const Half*>(data)[i];
    case kBFloat16: return reinterpret_cast<const BFloat16*>(data)[i];
    case kFloat: return reinterpret_cast<const float*>(data)[i];
    case kDouble: return reinterpret_cast<const double*>(data)[i];
  }
  return 0;
}

int64_t host_long(const unsigned char* data, ScalarType dtype, int64_t i) {
  if (dtype == kLong) return reinterpret_cast<const int64_t*>(data)[i];
  return static_cast<int64_t>(host_double(data, dtype, i));
}

std::string describe_tensor(const Tensor& t) {
  return str(dtype_name(t.dtype()), t.sizes(), " on ", t.device().str());
}

void throw_data_ptr_mismatch(const Tensor& t, ScalarType requested) {
  throw TypeError(str("data_ptr: expected scalar type ", dtype_name(requested), " but found ",
                      dtype_name(t.dtype())));
}

Scalar item_scalar(const Tensor& t) {
  KILN_CHECK_VALUE(t.numel() == 1, "item: a Tensor with ", t.numel(),
                   " elements cannot be converted to Scalar");
  std::vector<unsigned char> b = host_bytes(t);
  ScalarType d = t.dtype();
  if (d == kBool) return Scalar(b[0] != 0);
  if (is_floating_point(d)) return Scalar(host_double(b.data(), d, 0));
  return Scalar(host_long(b.data(), d, 0));
}

}  // namespace detail

bool TensorImpl::is_contiguous() const {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return numel == 0;
    expected *= sizes[d];
  }
  return true;
}

int64_t Tensor::size(int64_t dim) const {
  KILN_CHECK_INDEX(this->dim() > 0, "size: a 0-dim tensor has no dimension ", dim);
  return impl().sizes[detail::wrap_dim(dim, this->dim(), "size")];
}

int64_t Tensor::stride(int64_t dim) const {
  KILN_CHECK_INDEX(this->dim() > 0, "stride: a 0-dim tensor has no dimension ", dim);
  return impl().strides[detail::wrap_dim(dim, this->dim(), "stride")];
}

TensorOptions Tensor::options() const { return TensorOptions().dtype(dtype()).device(device()); }

const Tensor& Tensor::set_requires_grad(bool requires_grad) const {
  requires_grad_(requires_grad);
  return *this;
}

const Tensor& Tensor::requires_grad_(bool requires_grad) const {
  KILN_CHECK(!requires_grad || !impl().inference || autograd::InferenceMode::is_enabled(),
             "requires_grad_: Setting requires_grad=True on inference tensor outside ",
             "InferenceMode is not allowed (", detail::describe_tensor(*this), "); clone it ",
             "outside InferenceMode first");
  KILN_CHECK(!requires_grad || is_floating_point(), "requires_grad_: only tensors of floating ",
             "point dtype can require gradients (got ", dtype_name(dtype()), ")");
  KILN_CHECK(is_leaf(), "requires_grad_: you can only change requires_grad flags of leaf ",
             "variables.");
  impl().requires_grad = requires_grad;
  return *this;
}

Scalar Tensor::item() const { return detail::item_scalar(*this); }

DispatchKeySet Tensor::key_set() const {
  uint32_t autocast_types = detail::local_dispatch_state().autocast_device_types;
  return DispatchKeySet(DispatchKey::Backend) |
         DispatchKeySet::from_bits(detail::tensor_keys(*this, autocast_types));
}

const Tensor& Tensor::resize_(IntArrayRef sizes) const {
  KILN_CHECK(!requires_grad(), "resize_: cannot resize variables that require grad (",
             detail::describe_tensor(*this), "); resize a detach()ed tensor or one made under ",
             "NoGradGuard instead");
  if (sizes.equals(this->sizes())) return *this;  // strides kept, as PyTorch's
  int64_t numel = detail::checked_numel("resize_", sizes, dtype());
  if (numel > 0) {
    int64_t bytes = 0;
    auto item = static_cast<int64_t>(element_size());
    if (__builtin_add_overflow(storage_offset(), numel, &bytes) ||
        __builtin_mul_overflow(bytes, item, &bytes)) {
      throw ValueError(detail::str("resize_: sizes ", sizes, " at storage offset ",
                                   storage_offset(), " of ", dtype_name(dtype()),
                                   " overflow int64 bytes"));
    }
    Storage& storage = *impl().storage;
    if (static_cast<size_t>(bytes) > storage.nbytes()) {
      KILN_CHECK(storage.resizable(), "resize_: Trying to resize storage that is not resizable ",
                 "(memory the caller owns, from from_blob) from ", storage.nbytes(), " to ", bytes,
                 " bytes; clone() the tensor first");
      auto bigger = std::make_shared<Storage>(device(), static_cast<size_t>(bytes));
      auto old_bytes = static_cast<int64_t>(storage.nbytes());
      if (old_bytes > 0) {
        NoGradGuard no_grad;
        Tensor to = detail::make_tensor(bigger, {old_bytes}, {1}, 0, kByte);
        to.copy_(detail::make_tensor(impl().storage, {old_bytes}, {1}, 0, kByte));
      }
      storage.swap_memory(*bigger);  // every tensor sharing the storage sees the new memory
    }
  }
  impl().sizes.assign(sizes);
  impl().strides = detail::contiguous_strides(sizes);
  impl().numel = numel;
  return *this;
}

void Tensor::set_data(const Tensor& new_data) const {
  KILN_CHECK_TYPE(new_data.device().type() == device().type(), "set_data: attempted to set the ",
                  "data of a tensor on ", device().str(), " to a tensor on ",
                  new_data.device().str(), ", a different device type; move it with to() first");
  TensorImpl& self = impl();
  const TensorImpl& src = new_data.impl();
  self.storage = src.storage;
  self.sizes = src.sizes;
  self.strides = src.strides;
  self.offset = src.offset;
  self.numel = src.numel;
  self.dtype = src.dtype;
  self.device = src.device;
  // the leaf's accumulator recorded the old sizes and dtype: the next backward makes a new one
  if (autograd::AutogradMeta* m = autograd::detail::meta_if(*this)) m->grad_accumulator.reset();
}

Tensor Tensor::data() const { return detach(); }

std::string Tensor::str() const {
  if (!defined()) return "[ undefined tensor ]";
  detail::PrintInput in;
  in.sizes = sizes().vec();
  ScalarType d = dtype();
  in.kind = d == kBool
                ? detail::PrintKind::Bool
                : (is_floating_point() ? detail::PrintKind::Floating : detail::PrintKind::Integer);
  std::vector<unsigned char> bytes = detail::host_bytes(*this);
  for (int64_t i = 0; i < numel(); ++i) {
    if (in.kind == detail::PrintKind::Floating) {
      in.floats.push_back(detail::host_double(bytes.data(), d, i));
    } else {
      in.ints.push_back(detail::host_long(bytes.data(), d, i));
    }
  }
  in.dtype_name = dtype_name(d);
  in.dtype_is_default = d == kFloat || d == kLong || d == kBool;
  int index = device().has_index() ? device().index() : 0;
  in.device = device().is_cpu() ? "" : Device(device().type(), index).str();
  in.requires_grad = requires_grad();
  if (grad_fn()) in.grad_fn = grad_fn()->name();
  return detail::format_tensor(in);
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << t.str(); }

}  // namespace kiln
