// Errors. User errors throw kiln::Error or a subclass; the message starts with the operator and
// names the shapes, dtypes and devices involved. Internal invariants use KILN_INTERNAL_ASSERT,
// whose message asks for a report. kiln never aborts the process.
#pragma once

#include <kiln/export.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace kiln {

class KILN_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A value out of its domain: bad shapes, sizes, arguments.
class KILN_API ValueError : public Error {
 public:
  using Error::Error;
};
// An index or dimension out of range.
class KILN_API IndexError : public Error {
 public:
  using Error::Error;
};
// A dtype the operator does not accept.
class KILN_API TypeError : public Error {
 public:
  using Error::Error;
};
// No kernel for this operator on this device, or a feature not provided.
class KILN_API NotImplementedError : public Error {
 public:
  using Error::Error;
};
// A device's memory is exhausted (PyTorch's torch.OutOfMemoryError).
class KILN_API OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
[[noreturn]] KILN_API void internal_error(const char* file, int line, const std::string& message);
}  // namespace detail

}  // namespace kiln

// Throws kiln::Error (or the given subclass) with the concatenated message when cond is false.
#define KILN_CHECK(cond, ...)                                           \
  do {                                                                  \
    if (!(cond)) throw ::kiln::Error(::kiln::detail::str(__VA_ARGS__)); \
  } while (0)
#define KILN_CHECK_VALUE(cond, ...)                                          \
  do {                                                                       \
    if (!(cond)) throw ::kiln::ValueError(::kiln::detail::str(__VA_ARGS__)); \
  } while (0)
#define KILN_CHECK_INDEX(cond, ...)                                          \
  do {                                                                       \
    if (!(cond)) throw ::kiln::IndexError(::kiln::detail::str(__VA_ARGS__)); \
  } while (0)
#define KILN_CHECK_TYPE(cond, ...)                                          \
  do {                                                                      \
    if (!(cond)) throw ::kiln::TypeError(::kiln::detail::str(__VA_ARGS__)); \
  } while (0)
#define KILN_INTERNAL_ASSERT(cond, ...)                                               \
  do {                                                                                \
    if (!(cond))                                                                      \
      ::kiln::detail::internal_error(__FILE__, __LINE__,                              \
                                     ::kiln::detail::str(#cond, " ", ##__VA_ARGS__)); \
  } while (0)
