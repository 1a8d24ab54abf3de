// Order-preserving integer keys of every dtype, for sort, topk and their kind (host and CUDA
// device code alike): a < b as PyTorch orders values exactly when key(a) < key(b), so kernels
// sort, select and radix-sort plain unsigned integers. NaN is above +inf and all NaNs are one key;
// -0.0 and 0.0 are one key, as they compare equal (See Note [Sort order] in core/src/ops/sort.cpp).
// T is a compute type (kiln/sdk/kernel.hpp's compute_t: 16-bit floats as float); 64-bit types
// have 64-bit keys, the others 32-bit ones.
#pragma once

#include <kiln/sdk/pointwise_support.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kiln::sdk {

template <class T>
using sort_key_t = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <class T>
KILN_HOST_DEVICE inline sort_key_t<T> sort_key(T v) {
  if constexpr (std::is_same_v<T, double>) {
    if (v != v) return ~uint64_t{0};
    if (v == 0) v = 0;  // -0.0 -> 0.0
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
  } else if constexpr (std::is_same_v<T, float>) {
    float f = v;
    if (f != f) return ~uint32_t{0};
    if (f == 0) f = 0;
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return (bits >> 31) != 0 ? ~bits : bits | (uint32_t{1} << 31);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<uint32_t>(static_cast<int32_t>(v)) ^ (uint32_t{1} << 31);
  } else {
    return static_cast<uint32_t>(v);  // bool, uint8
  }
}

}  // namespace kiln::sdk
