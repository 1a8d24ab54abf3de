// Helpers of the tensor-semantics tests: reading values back and checking errors with their type
// and text.
#pragma once

#include "check_error.h"

#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

namespace tensor_test {

// t's values in row-major order, as float64 (any device, any layout).
inline std::vector<double> vals(const kiln::Tensor& t) {
  kiln::Tensor h = t.to(kiln::Device(kiln::kCPU)).to(kiln::kDouble, /*copy=*/true).contiguous();
  const double* p = h.data_ptr<double>();
  return std::vector<double>(p, p + h.numel());
}

inline std::vector<int64_t> sizes(const kiln::Tensor& t) { return t.sizes().vec(); }
inline std::vector<int64_t> strides(const kiln::Tensor& t) { return t.strides().vec(); }

using kiln_test::contains;

}  // namespace tensor_test

// Checks a tensor's values against a braced list of doubles (exact).
#define CHECK_VALUES(tensor, ...)                                                        \
  do {                                                                                   \
    std::vector<double> got_ = tensor_test::vals(tensor);                                \
    std::vector<double> want_ = __VA_ARGS__;                                             \
    BOOST_CHECK_EQUAL_COLLECTIONS(got_.begin(), got_.end(), want_.begin(), want_.end()); \
  } while (0)

#define CHECK_SIZES(tensor, ...)                                                         \
  do {                                                                                   \
    std::vector<int64_t> got_ = tensor_test::sizes(tensor);                              \
    std::vector<int64_t> want_ = __VA_ARGS__;                                            \
    BOOST_CHECK_EQUAL_COLLECTIONS(got_.begin(), got_.end(), want_.begin(), want_.end()); \
  } while (0)
