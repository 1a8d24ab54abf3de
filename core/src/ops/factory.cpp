// Factories: empty, zeros, ones, full, arange, linspace, eye, from_blob and the *_like forms.
#include "elementwise.h"

#include <cmath>
#include <vector>

namespace kiln {
namespace {

// A factory's result: at version 0 whatever filled it (as in PyTorch, a new tensor's version
// counts the in-place changes made to it since), requiring grad when asked.
Tensor finish(Tensor t, const TensorOptions& options) {
  t.storage()->reset_version();
  if (options.requires_grad()) t.requires_grad_();
  return t;
}

TensorOptions like(const Tensor& t, const TensorOptions& options) {
  return options.dtype(options.dtype_or(t.dtype()))
      .device(options.device_opt().value_or(t.device()));
}

// A 1-D tensor from host values, copied to the options' device.
template <class T>
Tensor from_host(const std::vector<T>& values, const TensorOptions& options) {
  int64_t n = static_cast<int64_t>(values.size());
  Tensor host = from_blob(const_cast<T*>(values.data()), {n},
                          TensorOptions().dtype(scalar_type_of<T>()));
  Tensor out = detail::empty_tensor({n}, options.dtype_or(scalar_type_of<T>()), options.device());
  if (n > 0) out.copy_(host);
  return out;
}

}  // namespace

Tensor empty(IntArrayRef sizes, const TensorOptions& options) {
  return finish(detail::empty_tensor(sizes, options.dtype_or(default_float_dtype()),
                                     options.device()),
                options);
}

Tensor zeros(IntArrayRef sizes, const TensorOptions& options) {
  Tensor t = detail::empty_tensor(sizes, options.dtype_or(default_float_dtype()), options.device());
  t.fill_(0);
  return finish(t, options);
}

Tensor ones(IntArrayRef sizes, const TensorOptions& options) {
  Tensor t = detail::empty_tensor(sizes, options.dtype_or(default_float_dtype()), options.device());
  t.fill_(1);
  return finish(t, options);
}

Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options) {
  Tensor t = detail::empty_tensor(sizes, options.dtype_or(value.type()), options.device());
  t.fill_(value);
  return finish(t, options);
}

Tensor empty_like(const Tensor& t, const TensorOptions& o) { return empty(t.sizes(), like(t, o)); }
Tensor zeros_like(const Tensor& t, const TensorOptions& o) { return zeros(t.sizes(), like(t, o)); }
Tensor ones_like(const Tensor& t, const TensorOptions& o) { return ones(t.sizes(), like(t, o)); }
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& o) {
  return full(t.sizes(), value, like(t, o));
}

Tensor arange(const Scalar& end, const TensorOptions& options) { return arange(0, end, 1, options); }
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options) {
  return arange(start, end, 1, options);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options) {
  bool integral = start.is_integral(true) && end.is_integral(true) && step.is_integral(true);
  ScalarType dtype = options.dtype_or(integral ? kLong : default_float_dtype());
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  KILN_CHECK_VALUE(st != 0, "arange: step must be nonzero");
  KILN_CHECK_VALUE((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound and larger ",
                   "bound inconsistent with step sign");
  auto n = static_cast<int64_t>(std::ceil((e - s) / st));
  if (is_integral(dtype, false) && integral) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = start.to_long() + i * step.to_long();
    return finish(from_host(v, options.dtype(dtype)), options);
  }
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = s + static_cast<double>(i) * st;
  return finish(from_host(v, options.dtype(dtype)), options);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& options) {
  KILN_CHECK_VALUE(steps >= 0, "linspace: number of steps must be non-negative (got ", steps, ")");
  double s = start.to_double(), e = end.to_double();
  std::vector<double> v(static_cast<size_t>(steps));
  double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  // as PyTorch: the first half counts up from start, the second half down from end
  int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    v[i] = i < half || steps == 1 ? s + step * static_cast<double>(i)
                    : e - step * static_cast<double>(steps - i - 1);
  }
  return finish(from_host(v, options.dtype(options.dtype_or(default_float_dtype()))), options);
}

Tensor eye(int64_t n, const TensorOptions& options) { return eye(n, n, options); }

Tensor eye(int64_t n, int64_t m, const TensorOptions& options) {
  KILN_CHECK_VALUE(n >= 0 && m >= 0, "eye: n and m must be non-negative, got n=", n, " m=", m);
  Tensor t = zeros({n, m}, options.requires_grad(false));
  int64_t k = std::min(n, m);
  if (k > 0) t.as_strided({k}, {m + 1}, 0).fill_(1);
  return finish(t, options);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  return from_blob(data, sizes, detail::contiguous_strides(sizes), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const TensorOptions& options) {
  KILN_CHECK_VALUE(sizes.size() == strides.size(), "from_blob: sizes ", sizes, " and strides ",
                   strides, " differ in length");
  ScalarType dtype = options.dtype_or(default_float_dtype());
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) {
      extent = 0;
      break;
    }
    extent += (sizes[i] - 1) * strides[i];
  }
  auto storage = std::make_shared<Storage>(options.device(), data,
                                           static_cast<size_t>(extent) * element_size(dtype),
                                           nullptr);
  return finish(detail::make_tensor(std::move(storage), sizes, strides, 0, dtype), options);
}

}  // namespace kiln
