// fill_ and copy_ (with every dtype conversion).
#include "arith.hpp"
#include "loops.hpp"
#include "registry.hpp"

#include <cstring>

namespace kiln::cpu {
namespace {

using sdk::kernel;

// out = value everywhere; the value is converted to the dtype once and stored as bits.
void fill_kernel(const Call& call) {
  visit<Dtypes::all>(call.output(0).dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using B = bits_t<T>;
    T value = static_cast<T>(scalar_attr<T>(call.attr(0)));
    B bits;
    std::memcpy(&bits, &value, sizeof(B));
    map<B>([bits] { return bits; }, call.output(0), {});
  });
}

// dst = convert(src), see convert() in arith.hpp for the rules.
template <class D>
void copy_to(const kiln_tensor& dst, const kiln_tensor& src) {
  visit<Dtypes::all>(src.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    map<D, S>([](compute_t<S> x) { return convert<D>(x); }, dst, {&src});
  });
}

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

// Contiguous float <-> bfloat16 or float16 (autocast's casts): the bulk conversions of
// convert.cpp straight from src to dst, with the rounding of convert(); false for other calls.
bool copy_16bit_float(const kiln_tensor& dst, const kiln_tensor& src) {
  if (!is_contiguous(dst) || !is_contiguous(src)) return false;
  const int32_t f32 = sdk::dtype_of<float>(), bf16 = sdk::dtype_of<BFloat16>(),
                f16 = sdk::dtype_of<Half>();
  const int32_t from = src.dtype, to = dst.dtype;
  if (!(from == f32 && (to == bf16 || to == f16)) &&
      !(to == f32 && (from == bf16 || from == f16))) {
    return false;
  }
  int64_t n = 1;
  for (int32_t d = 0; d < dst.ndim; ++d) n *= dst.sizes[d];
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    if (from == f32) {
      const float* s = static_cast<const float*>(src.data) + b;
      if (to == bf16) {
        float_to_bfloat16(s, static_cast<BFloat16*>(dst.data) + b, e - b);
      } else {
        float_to_half(s, static_cast<Half*>(dst.data) + b, e - b);
      }
    } else {
      float* d = static_cast<float*>(dst.data) + b;
      if (from == bf16) {
        bfloat16_to_float(static_cast<const BFloat16*>(src.data) + b, d, e - b);
      } else {
        half_to_float(static_cast<const Half*>(src.data) + b, d, e - b);
      }
    }
  });
  return true;
}

void copy_kernel(const Call& call) {
  const kiln_tensor& dst = call.output(0);
  const kiln_tensor& src = call.input(0);
  if (dst.dtype == src.dtype) {
    copy_same_dtype(dst, src);
    return;
  }
  if (copy_16bit_float(dst, src)) return;
  visit<Dtypes::all>(dst.dtype, [&](auto tag) { copy_to<typename decltype(tag)::type>(dst, src); });
}

}  // namespace

void register_copy_fill(KernelTable& table) {
  table.add("fill_", kernel<fill_kernel>);
  table.add("copy_", kernel<copy_kernel>);
}

}  // namespace kiln::cpu
