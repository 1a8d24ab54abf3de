// Shared machinery of elementwise operators: PyTorch's type promotion over dimensioned tensors,
// 0-dim tensors and wrapped numbers; broadcasting; device agreement; and the checks of in-place
// variants. Each family (binary.cpp, compare.cpp, unary.cpp, ...) plugs its dtype rule in.
#pragma once

#include "../kernel_call.h"
#include "../tensor_internal.h"

#include <kiln/dispatch.h>
#include <kiln/ops.h>

namespace kiln::detail {

// The broadcast of two shapes, without allocating for up to 6 dimensions.
DimVector broadcast_dims(IntArrayRef a, IntArrayRef b);

// torch.result_type of a tensor and a C++ number.
ScalarType scalar_result_type(const Tensor& a, const Scalar& s);

// torch.result_type over tensors (a wrapped number is a 0-dim tensor with wrapped_number set).
ScalarType result_type_of(std::initializer_list<const Tensor*> tensors);

// The 0-dim tensor a C++ number becomes in an operation with `like`: dtype `dtype`, on like's
// device, flagged as a wrapped number.
Tensor wrap_scalar(const Scalar& s, ScalarType dtype, Device device);

// The device all tensors are on. 0-dim CPU tensors may join tensors of another device (they are
// moved). Throws PyTorch's "Expected all tensors to be on the same device" otherwise.
Device common_device(const char* op, std::initializer_list<const Tensor*> tensors);

// t moved to `device` if it is a 0-dim tensor elsewhere, converted to dtype, expanded to sizes.
Tensor prepare_input(const Tensor& t, ScalarType dtype, Device device, IntArrayRef sizes);

// The same without a copy of the handle when t is ready as it is (the common case, which keeps
// two reference-count round trips off every small operator); otherwise the prepared tensor is
// kept in `slot`, which must outlive the use of the result.
inline const Tensor& prepared_input(const Tensor& t, ScalarType dtype, Device device,
                                    IntArrayRef sizes, Tensor& slot) {
  if (t.dtype() == dtype && t.device() == device && t.sizes().equals(sizes)) return t;
  slot = prepare_input(t, dtype, device, sizes);
  return slot;
}

// Throws when an in-place operator's result (dtype, sizes) cannot be written into self.
void check_inplace(const char* op, const Tensor& self, ScalarType result, IntArrayRef sizes);

// Throws when self has elements that alias each other (an expanded tensor) and is written to.
void check_no_internal_overlap(const char* op, const Tensor& self);

// Marks self modified (autograd's version counter).
inline void bump_version(const Tensor& self) { self.storage()->bump_version(); }

// Whether the device type has a copy_ kernel (dtype conversions).
bool copy_op_has_kernel(Device device);

// Throws TypeError "op: not implemented for 'bool'" style messages.
[[noreturn]] void throw_dtype_unsupported(const char* op, ScalarType dtype);

}  // namespace kiln::detail
