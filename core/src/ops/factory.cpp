// Factories: empty, zeros, ones, full, arange, linspace, eye, from_blob and the *_like forms.
#include "elementwise.h"

#include <cmath>
#include <limits>

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

// A 1-D tensor of n values value(i) of type T, made on the host and copied to the options'
// device in the options' dtype. The count is checked first (Note [Checked sizes]; T has the
// largest element size), so a huge one is a ValueError naming `op` and never a std::length_error.
template <class T, class F>
Tensor from_host(const char* op, int64_t n, const TensorOptions& options, F&& value) {
  detail::checked_numel(op, {n}, scalar_type_of<T>());
  Tensor host = detail::empty_tensor({n}, scalar_type_of<T>(), Device(kCPU));
  T* p = host.data_ptr<T>();
  for (int64_t i = 0; i < n; ++i) p[i] = value(i);
  ScalarType dtype = options.dtype_or(scalar_type_of<T>());
  if (dtype == host.dtype() && options.device() == host.device()) return host;
  Tensor out = detail::empty_tensor({n}, dtype, options.device());
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

Tensor arange(const Scalar& end, const TensorOptions& options) {
  return arange(0, end, 1, options);
}
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options) {
  return arange(start, end, 1, options);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options) {
  bool integral = start.is_integral(true) && end.is_integral(true) && step.is_integral(true);
  ScalarType dtype = options.dtype_or(integral ? kLong : default_float_dtype());
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  KILN_CHECK_VALUE(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: ", s, " -> ",
                   e);
  KILN_CHECK_VALUE(st != 0, "arange: step must be nonzero");
  KILN_CHECK_VALUE(std::isfinite(st), "arange: step must be finite, got ", st);
  KILN_CHECK_VALUE((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound and larger ",
                   "bound inconsistent with step sign");
  if (is_integral(dtype, false) && integral) {
    // exact in 128 bits: int64 bounds a whole int64 range apart do not fit a double
    __int128 first = start.to_long(), span = __int128{end.to_long()} - first;
    __int128 by = step.to_long();
    __int128 count = (span + by - (by > 0 ? 1 : -1)) / by;
    KILN_CHECK_VALUE(count <= std::numeric_limits<int64_t>::max(), "arange: the range ", s, " -> ",
                     e, " with step ", st, " has more than 2^63 - 1 elements");
    auto value = [&](int64_t i) { return static_cast<int64_t>(first + i * by); };
    return finish(from_host<int64_t>("arange", static_cast<int64_t>(count), options.dtype(dtype),
                                     value),
                  options);
  }
  double count = std::ceil((e - s) / st);
  KILN_CHECK_VALUE(count < 0x1p63, "arange: the range ", s, " -> ", e, " with step ", st, " has ",
                   count, " elements, more than 2^63 - 1");
  auto value = [&](int64_t i) { return s + static_cast<double>(i) * st; };
  return finish(from_host<double>("arange", static_cast<int64_t>(count), options.dtype(dtype),
                                  value),
                options);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& options) {
  KILN_CHECK_VALUE(steps >= 0, "linspace: number of steps must be non-negative (got ", steps, ")");
  double s = start.to_double(), e = end.to_double();
  double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  // as PyTorch: the first half counts up from start, the second half down from end
  int64_t half = steps / 2;
  auto value = [&](int64_t i) {
    return i < half || steps == 1 ? s + step * static_cast<double>(i)
                                  : e - step * static_cast<double>(steps - i - 1);
  };
  return finish(from_host<double>("linspace", steps,
                                  options.dtype(options.dtype_or(default_float_dtype())), value),
                options);
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

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  KILN_CHECK_VALUE(sizes.size() == strides.size(), "from_blob: sizes ", sizes, " and strides ",
                   strides, " differ in length");
  ScalarType dtype = options.dtype_or(default_float_dtype());
  int64_t numel = detail::checked_numel("from_blob", sizes, dtype);
  int64_t extent = numel == 0 ? 0 : 1;  // elements spanned
  bool overflow = false;
  for (size_t i = 0; i < sizes.size() && numel > 0; ++i) {
    KILN_CHECK_VALUE(strides[i] >= 0, "from_blob: negative stride ", strides[i], " in ", strides);
    int64_t span = 0;
    overflow = overflow || __builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
               __builtin_add_overflow(extent, span, &extent);
  }
  size_t nbytes = 0;
  overflow = overflow ||
             __builtin_mul_overflow(static_cast<size_t>(extent), element_size(dtype), &nbytes);
  KILN_CHECK_VALUE(!overflow && nbytes <= static_cast<size_t>(std::numeric_limits<int64_t>::max()),
                   "from_blob: sizes ", sizes, " and strides ", strides, " of ", dtype_name(dtype),
                   " span more than 2^63 - 1 bytes");
  auto storage = std::make_shared<Storage>(options.device(), data, nbytes, nullptr);
  return finish(detail::make_tensor(std::move(storage), sizes, strides, 0, dtype), options);
}

}  // namespace kiln
