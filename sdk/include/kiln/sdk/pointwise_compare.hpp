// The scalar formulas of kiln's comparisons and logical operators (eq, ne, lt, le, gt, ge;
// logical_and, logical_or, logical_xor): any dtype in, bool out, in the form of
// kiln/sdk/pointwise.hpp, which includes this header: See Note [One scalar formula for every
// device] there.
#pragma once

#include <kiln/sdk/plugin.h>
#include <kiln/sdk/pointwise_support.hpp>

namespace kiln::sdk::pointwise {

// ---- comparisons and logical operators: any dtype in, bool out ---------------------------------

struct Eq {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return a == b;
  }
};

struct Ne {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return a != b;
  }
};

struct Lt {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return a < b;
  }
};

struct Le {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return a <= b;
  }
};

struct Gt {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return a > b;
  }
};

struct Ge {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return a >= b;
  }
};

// Nonzero is true (NaN included).
struct LogicalAnd {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return (a != C(0)) & (b != C(0));
  }
};

struct LogicalOr {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return (a != C(0)) | (b != C(0));
  }
};

struct LogicalXor {
  static constexpr Dtypes dtypes = Dtypes::all;
  static constexpr bool sign_blind = true, bool_as_uint8 = true;
  template <class C>
  KILN_HOST_DEVICE bool operator()(C a, C b) const {
    return (a != C(0)) != (b != C(0));
  }
};

}  // namespace kiln::sdk::pointwise
