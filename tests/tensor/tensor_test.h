// Helpers of the tensor-semantics tests: reading values back and checking errors with their type
// and text.
#pragma once

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

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tensor_test

// Checks that `statement` throws `type` (a kiln::Error subclass) whose message contains `text`.
#define CHECK_ERROR(type, statement, text)                                                     \
  do {                                                                                        \
    try {                                                                                     \
      statement;                                                                              \
      BOOST_ERROR("expected " #type " containing \"" << (text) << "\" from: " #statement);    \
    } catch (const type& e_) {                                                                \
      BOOST_CHECK_MESSAGE(tensor_test::contains(e_.what(), text),                             \
                          #statement " threw \"" << e_.what() << "\", expected text \""       \
                                                 << (text) << "\"");                          \
    } catch (const std::exception& e_) {                                                      \
      BOOST_ERROR(#statement " threw another exception type than " #type ": " << e_.what()); \
    }                                                                                         \
  } while (0)

// Checks a tensor's values against a braced list of doubles (exact).
#define CHECK_VALUES(tensor, ...)                                                   \
  do {                                                                             \
    std::vector<double> got_ = tensor_test::vals(tensor);                          \
    std::vector<double> want_ = __VA_ARGS__;                                       \
    BOOST_CHECK_EQUAL_COLLECTIONS(got_.begin(), got_.end(), want_.begin(), want_.end()); \
  } while (0)

#define CHECK_SIZES(tensor, ...)                                                        \
  do {                                                                                 \
    std::vector<int64_t> got_ = tensor_test::sizes(tensor);                            \
    std::vector<int64_t> want_ = __VA_ARGS__;                                          \
    BOOST_CHECK_EQUAL_COLLECTIONS(got_.begin(), got_.end(), want_.begin(), want_.end()); \
  } while (0)
