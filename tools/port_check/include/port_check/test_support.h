// The helpers PyTorch's C++ frontend tests take from their own support headers
// (test/cpp/api/support.h, test/cpp/common/support.h), written for kiln: port_check replaces
// those two includes with this file. They are test infrastructure, not the API under test, so
// each is written with the plainest kiln API that does the job.
//
// Helpers whose only purpose is a libtorch feature are declared only when kiln has that feature
// (run.sh probes it and passes -DPORT_CHECK_HAS_...): a case that uses one while kiln lacks the
// feature then fails with "'WarningCapture' was not declared", and the report counts it as a
// missing name like any other. assert_tensor_creation_meta (autograd view internals) is never
// declared. Function helpers are templates, so what they need from kiln is checked only in the
// cases that call them.
#pragma once

#include <port_check/torch_alias.h>

#include <gtest/gtest.h>
#if __has_include(<gmock/gmock.h>)
#include <gmock/gmock.h>  // some cases use gmock's matchers (ASSERT_THAT, HasSubstr)
#endif

#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

// Passes when `statement` throws an exception whose message contains `substring`.
#define ASSERT_THROWS_WITH(statement, substring)                                             \
  {                                                                                          \
    std::string port_check_message_;                                                         \
    try {                                                                                    \
      (void)statement;                                                                       \
      FAIL() << "Expected statement `" #statement "` to throw an exception, but it did not"; \
    } catch (const std::exception& e) {                                                      \
      port_check_message_ = e.what();                                                        \
    }                                                                                        \
    if (port_check_message_.find(substring) == std::string::npos) {                          \
      FAIL() << "Error message \"" << port_check_message_                                    \
             << "\" did not contain expected substring \"" << substring << "\"";             \
    }                                                                                        \
  }

namespace kiln::test {

// A module to register children on without writing a class.
class SimpleContainer : public nn::Module {
 public:
  template <typename ModuleHolder>
  ModuleHolder add(ModuleHolder module_holder, std::string name = std::string()) {
    return register_module(std::move(name), module_holder);
  }
};

// Seeds the default generator before each test of a fixture derived from it.
struct SeedingFixture : public ::testing::Test {
  SeedingFixture() { manual_seed(0); }
};

// Whether two tensors share their first element's address.
template <class T>
bool pointer_equal(const T& first, const T& second) {
  return first.data_ptr() == second.data_ptr();
}

// Asserts equal shapes and elements within 1e-5 (NaNs at the same places; with allow_inf,
// infinities of the same sign at the same places).
template <class T>
void assert_tensor_equal(T a, T b, bool allow_inf = false) {
  ASSERT_TRUE(a.sizes() == b.sizes());
  if (a.numel() == 0) return;
  a = a.to(kFloat64);
  b = b.to(kFloat64);
  auto a_nan = isnan(a), b_nan = isnan(b);
  ASSERT_TRUE(equal(a_nan, b_nan));
  // Infinities compared by place and sign (|x| == inf), as isinf would.
  const double inf = std::numeric_limits<double>::infinity();
  auto a_inf = a.abs() == inf, b_inf = b.abs() == inf;
  if (allow_inf) {
    ASSERT_TRUE(equal(a_inf, b_inf));
    ASSERT_TRUE(equal(a.masked_fill(logical_not(a_inf), 0), b.masked_fill(logical_not(b_inf), 0)));
  }
  auto skip = allow_inf ? logical_or(a_nan, a_inf) : a_nan;
  auto diff = (a - b).abs().masked_fill(skip, 0);
  ASSERT_LE(diff.max().template item<double>(), 1e-5);
}

// Asserts that two tensors of the same shape differ somewhere by at least 1e-5.
template <class T>
void assert_tensor_not_equal(T x, T y) {
  if (x.sizes() != y.sizes()) return;
  ASSERT_GT(x.numel(), 0);
  auto diff = (x.to(kFloat64) - y.to(kFloat64)).abs();
  diff = diff.masked_fill(isnan(diff), 0);
  ASSERT_GE(diff.max().template item<double>(), 1e-5);
}

// How often `substr` occurs in `str`, without overlaps.
inline int count_substr_occurrences(const std::string& str, const std::string& substr) {
  int count = 0;
  for (size_t pos = str.find(substr); pos != std::string::npos;
       pos = str.find(substr, pos + substr.size())) {
    ++count;
  }
  return count;
}

#ifdef PORT_CHECK_HAS_WARNING_HANDLER
// Collects the warnings raised while it lives (libtorch's c10::WarningHandler interface).
struct WarningCapture : public c10::WarningHandler {
  WarningCapture() : prev_(c10::Warning::get_warning_handler()) {
    c10::Warning::set_warning_handler(this);
  }
  ~WarningCapture() { c10::Warning::set_warning_handler(prev_); }
  const std::vector<std::string>& messages() { return messages_; }
  std::string str() { return c10::Join("\n", messages_); }
  void process(const c10::SourceLocation&, const std::string& msg, bool) override {
    messages_.push_back(msg);
  }

 private:
  c10::WarningHandler* prev_;
  std::vector<std::string> messages_;
};
#endif

#ifdef PORT_CHECK_HAS_DEFAULT_DTYPE
// Sets the default dtype while it lives; one at a time across threads.
struct AutoDefaultDtypeMode {
  static inline std::mutex default_dtype_mutex;
  explicit AutoDefaultDtypeMode(c10::ScalarType dtype)
      : previous(typeMetaToScalarType(get_default_dtype())) {
    default_dtype_mutex.lock();
    set_default_dtype(scalarTypeToTypeMeta(dtype));
  }
  ~AutoDefaultDtypeMode() {
    set_default_dtype(scalarTypeToTypeMeta(previous));
    default_dtype_mutex.unlock();
  }
  c10::ScalarType previous;
};
#endif

}  // namespace kiln::test
