// Header-only C++ helpers over the plugin boundary (kiln/sdk/plugin.h), so that a kernel author
// writes ordinary C++: typed access to a call's tensors and attributes, a dtype switch, a strided
// loop over elementwise operands, and exception-safe kernel entry points.
//
//   // add(self, other; alpha): out = self + alpha * other (docs/primitives.md)
//   static void add_kernel(const kiln::sdk::Call& call) {
//     kiln::sdk::visit_dtype(call.output(0).dtype, [&](auto tag) {
//       using T = typename decltype(tag)::type;
//       auto alpha = call.attr_scalar<kiln::sdk::compute_t<T>>(0);  // I64 for integer dtypes
//       ...
//     });
//   }
//   host->register_kernel("add", my_type, kiln::sdk::kernel<add_kernel>, nullptr);
//
// A C++ exception thrown by a kernel wrapped with kiln::sdk::kernel<> never crosses the
// boundary: it becomes host->set_error_kind(kind, what()) and a non-zero status, the kind chosen
// by the exception's type (kiln/sdk/host.hpp): throw std::out_of_range for an IndexError,
// kiln::sdk::type_error for a TypeError, kiln::sdk::not_implemented for a case the kernel lacks.
//
// Attributes are read with the accessor of their kind (docs/primitives.md gives each operator's):
// attr_i64, attr_f64, attr_bool, attr_list; attr_scalar<T> converts any of I64, BOOL and F64 to
// T, for scalars such as alpha whose kind follows the dtype. Reading another kind throws.
#pragma once

#include <kiln/sdk/half.hpp>
#include <kiln/sdk/host.hpp>
#include <kiln/sdk/plugin.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kiln::sdk {

template <class T>
struct TypeTag {
  using type = T;
};

template <class T>
constexpr kiln_dtype dtype_of();
template <>
constexpr kiln_dtype dtype_of<bool>() {
  return KILN_BOOL;
}
template <>
constexpr kiln_dtype dtype_of<uint8_t>() {
  return KILN_U8;
}
template <>
constexpr kiln_dtype dtype_of<int8_t>() {
  return KILN_I8;
}
template <>
constexpr kiln_dtype dtype_of<int16_t>() {
  return KILN_I16;
}
template <>
constexpr kiln_dtype dtype_of<int32_t>() {
  return KILN_I32;
}
template <>
constexpr kiln_dtype dtype_of<int64_t>() {
  return KILN_I64;
}
template <>
constexpr kiln_dtype dtype_of<Half>() {
  return KILN_F16;
}
template <>
constexpr kiln_dtype dtype_of<BFloat16>() {
  return KILN_BF16;
}
template <>
constexpr kiln_dtype dtype_of<float>() {
  return KILN_F32;
}
template <>
constexpr kiln_dtype dtype_of<double>() {
  return KILN_F64;
}

inline const char* dtype_name(int32_t dtype) {
  static const char* const names[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                      "int64", "float16", "bfloat16", "float32", "float64"};
  return dtype >= 0 && dtype < KILN_NUM_DTYPES ? names[dtype] : "unknown";
}

inline size_t dtype_size(int32_t dtype) {
  static const size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return dtype >= 0 && dtype < KILN_NUM_DTYPES ? sizes[dtype] : 0;
}

// The type arithmetic happens in: float for the 16-bit floats, the type itself otherwise.
template <class T>
using compute_t =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <class T>
constexpr bool is_floating_v = std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                               std::is_same_v<T, BFloat16>;

// Calls f(TypeTag<T>{}) with the C++ type of dtype. Throws for an unknown dtype.
template <class F>
decltype(auto) visit_dtype(int32_t dtype, F&& f) {
  switch (dtype) {
    case KILN_BOOL: return f(TypeTag<bool>{});
    case KILN_U8: return f(TypeTag<uint8_t>{});
    case KILN_I8: return f(TypeTag<int8_t>{});
    case KILN_I16: return f(TypeTag<int16_t>{});
    case KILN_I32: return f(TypeTag<int32_t>{});
    case KILN_I64: return f(TypeTag<int64_t>{});
    case KILN_F16: return f(TypeTag<Half>{});
    case KILN_BF16: return f(TypeTag<BFloat16>{});
    case KILN_F32: return f(TypeTag<float>{});
    case KILN_F64: return f(TypeTag<double>{});
    default: throw std::invalid_argument("unknown dtype " + std::to_string(dtype));
  }
}

// *out = a * b, or false when the product overflows int64 (then *out is unchanged). Portable
// (nvcc's front end included), for the size products below.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  constexpr int64_t kMax = INT64_MAX, kMin = INT64_MIN;
  if (a != 0 && b != 0) {
    bool overflow = a > 0 ? (b > 0 ? a > kMax / b : b < kMin / a)
                          : (b > 0 ? a < kMin / b : a < kMax / b);
    if (overflow) return false;
  }
  *out = a * b;
  return true;
}

// The element count of t; throws std::overflow_error when it overflows int64 (the core never
// passes such a tensor).
inline int64_t numel(const kiln_tensor& t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (!checked_mul(n, t.sizes[d], &n)) {
      throw std::overflow_error("numel: the product of the sizes overflows int64");
    }
  }
  return n;
}

inline bool is_contiguous(const kiln_tensor& t) {
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (t.sizes[d] == 0) return true;  // no elements: any strides will do
  }
  int64_t expected = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] != 1 && t.strides[d] != expected) return false;
    if (!checked_mul(expected, t.sizes[d], &expected)) return false;
  }
  return true;
}

// "int64", "float64", "bool", "int64 list", "none": an attribute kind for messages.
inline const char* attr_kind_name(int32_t kind) {
  static const char* const names[] = {"int64", "float64", "bool", "int64 list", "none"};
  return kind >= 0 && kind <= KILN_ATTR_NONE ? names[kind] : "unknown";
}

// Typed, read-only access to one kernel call.
class Call {
 public:
  explicit Call(const kiln_call* call) : call_(call) {}

  const char* op() const { return call_->op; }
  int32_t num_inputs() const { return call_->n_inputs; }
  int32_t num_outputs() const { return call_->n_outputs; }
  const kiln_tensor& input(int32_t i) const { return call_->inputs[i]; }
  const kiln_tensor& output(int32_t i) const { return call_->outputs[i]; }
  void* stream() const { return call_->stream; }

  const kiln_attr& attr(int32_t i) const {
    if (i < 0 || i >= call_->n_attrs) {
      throw std::invalid_argument(std::string(call_->op) + ": attribute " + std::to_string(i) +
                                  " missing (the call has " + std::to_string(call_->n_attrs) + ")");
    }
    return call_->attrs[i];
  }
  bool has_attr(int32_t i) const { return i < call_->n_attrs && attr(i).kind != KILN_ATTR_NONE; }
  int64_t attr_i64(int32_t i) const { return attr_of_kind(i, KILN_ATTR_I64).value.i; }
  double attr_f64(int32_t i) const { return attr_of_kind(i, KILN_ATTR_F64).value.f; }
  bool attr_bool(int32_t i) const { return attr_of_kind(i, KILN_ATTR_BOOL).value.i != 0; }
  // A scalar attribute converted to T by its kind: I64 and BOOL from the integer, F64 from the
  // double. Throws for the other kinds.
  template <class T>
  T attr_scalar(int32_t i) const {
    const kiln_attr& a = attr(i);
    if (a.kind == KILN_ATTR_F64) return static_cast<T>(a.value.f);
    if (a.kind == KILN_ATTR_I64 || a.kind == KILN_ATTR_BOOL) return static_cast<T>(a.value.i);
    throw wrong_kind(i, "a scalar (int64, bool or float64)");
  }
  const int64_t* attr_list(int32_t i, int32_t* n) const {
    const kiln_attr& a = attr_of_kind(i, KILN_ATTR_I64S);
    *n = a.value.list.n;
    return a.value.list.v;
  }

 private:
  const kiln_attr& attr_of_kind(int32_t i, kiln_attr_kind kind) const {
    const kiln_attr& a = attr(i);
    if (a.kind != kind) throw wrong_kind(i, attr_kind_name(kind));
    return a;
  }
  // The kernel reads attribute i as another kind than the core passed: a bug in the kernel.
  std::logic_error wrong_kind(int32_t i, const char* asked) const {
    const kiln_attr& a = call_->attrs[i];
    return std::logic_error(std::string(call_->op) + ": attribute " + std::to_string(i) + " ('" +
                            (a.name != nullptr ? a.name : "?") + "') is " + attr_kind_name(a.kind) +
                            ", read as " + asked +
                            " (docs/primitives.md gives each attribute's kind)");
  }

  const kiln_call* call_;
};

// Adapts `void F(const Call&)` to a kiln_kernel_fn; exceptions become errors of their kind.
template <void (*F)(const Call&)>
kiln_status kernel(const kiln_call* call, void* /*user*/) noexcept {
  try {
    F(Call(call));
    return 0;
  } catch (...) {
    report_exception();
    return 1;
  }
}

// Iterates N operands of the same sizes (output first by convention) in row-major order of
// those sizes, in runs along the innermost dimension. Adjacent dimensions that are contiguous
// in every operand are merged first, so a contiguous tensor is one run.
//
//   StridedLoop<3> loop({&out, &a, &b});
//   loop.run(0, loop.numel(), [&](char** p, const int64_t* step, int64_t n) { ... });
//
// `step[k]` is operand k's stride in bytes along the run; `p[k]` its first element. run()
// covers the element range [begin, end), so callers split the range across threads.
template <int N>
class StridedLoop {
 public:
  static constexpr int kMaxDims = 16;

  explicit StridedLoop(const kiln_tensor* const (&ops)[N]) {
    const kiln_tensor& first = *ops[0];
    if (first.ndim > kMaxDims) throw std::invalid_argument("too many dimensions for StridedLoop");
    for (int k = 0; k < N; ++k) {
      base_[k] = static_cast<char*>(ops[k]->data);
      item_[k] = static_cast<int64_t>(dtype_size(ops[k]->dtype));
    }
    // dims stored innermost first, dropping size-1 dims and merging contiguous neighbours
    ndim_ = 0;
    size_[0] = 0;
    numel_ = sdk::numel(first);
    if (numel_ == 0) {  // nothing to run; the strides of an empty tensor may not fit
      ndim_ = 1;
      for (int k = 0; k < N; ++k) stride_[0][k] = item_[k];
      return;
    }
    for (int32_t d = first.ndim - 1; d >= 0; --d) {
      int64_t size = first.sizes[d];
      if (size == 1) continue;
      int64_t bytes[N];  // the operands' byte strides along d
      for (int k = 0; k < N; ++k) bytes[k] = byte_stride(ops[k]->strides[d], item_[k]);
      bool merge = ndim_ > 0;
      for (int k = 0; k < N && merge; ++k) {
        int64_t span = 0;
        merge = checked_mul(stride_[ndim_ - 1][k], size_[ndim_ - 1], &span) && bytes[k] == span;
      }
      if (merge) {
        size_[ndim_ - 1] *= size;
        continue;
      }
      size_[ndim_] = size;
      for (int k = 0; k < N; ++k) stride_[ndim_][k] = bytes[k];
      ++ndim_;
    }
    if (ndim_ == 0) {  // a single element
      size_[0] = 1;
      for (int k = 0; k < N; ++k) stride_[0][k] = item_[k];
      ndim_ = 1;
    }
  }

  int64_t numel() const { return numel_; }
  // Elements per run (the size of the merged innermost dimension).
  int64_t inner_size() const { return size_[0]; }
  // Byte stride of operand k along runs.
  int64_t inner_stride(int k) const { return stride_[0][k]; }

  template <class F>
  void run(int64_t begin, int64_t end, F&& f) const {
    if (begin >= end) return;
    int64_t index[kMaxDims];
    char* ptr[N];
    int64_t rest = begin;
    for (int k = 0; k < N; ++k) ptr[k] = base_[k];
    for (int d = 0; d < ndim_; ++d) {
      if (rest == 0) {  // no divisions for the common begin == 0
        index[d] = 0;
        continue;
      }
      index[d] = rest % size_[d];
      rest /= size_[d];
      for (int k = 0; k < N; ++k) ptr[k] += index[d] * stride_[d][k];
    }
    int64_t step[N];
    for (int k = 0; k < N; ++k) step[k] = stride_[0][k];
    int64_t pos = begin;
    while (pos < end) {
      int64_t n = size_[0] - index[0];
      if (n > end - pos) n = end - pos;
      f(ptr, static_cast<const int64_t*>(step), n);
      pos += n;
      if (pos >= end) break;
      // the run ended at the end of the innermost dimension: go back to its start, carry
      for (int k = 0; k < N; ++k) ptr[k] -= index[0] * stride_[0][k];
      index[0] = 0;
      for (int d = 1; d < ndim_; ++d) {
        ++index[d];
        for (int k = 0; k < N; ++k) ptr[k] += stride_[d][k];
        if (index[d] < size_[d]) break;
        for (int k = 0; k < N; ++k) ptr[k] -= size_[d] * stride_[d][k];
        index[d] = 0;
      }
    }
  }

 private:
  static int64_t byte_stride(int64_t stride, int64_t item) {
    int64_t bytes = 0;
    if (!checked_mul(stride, item, &bytes)) {
      throw std::overflow_error("StridedLoop: a stride in bytes overflows int64");
    }
    return bytes;
  }

  char* base_[N];
  int64_t item_[N];
  int64_t size_[kMaxDims];
  int64_t stride_[kMaxDims][N];
  int ndim_ = 0;
  int64_t numel_ = 1;
};

}  // namespace kiln::sdk
