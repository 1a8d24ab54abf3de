// String helpers with libtorch's c10 names: kiln::str streams its arguments into one string
// (as c10::str, with the function KILN_CHECK builds its messages with), kiln::Join puts a
// delimiter between a container's elements.
#pragma once

#include <kiln/error.h>

#include <sstream>
#include <string>

namespace kiln {

// The arguments streamed into one string: str("x=", 2) is "x=2"; str() is "".
template <class... Args>
std::string str(const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return std::string();
  } else {
    return detail::str(args...);
  }
}

// The elements of `container`, streamed with `delimiter` between them: Join(", ", {1, 2}) is
// "1, 2".
template <class Container>
std::string Join(const std::string& delimiter, const Container& container) {
  std::ostringstream out;
  bool first = true;
  for (const auto& element : container) {
    if (!first) out << delimiter;
    out << element;
    first = false;
  }
  return out.str();
}

namespace guts {
// A value as its stream text (c10::guts::to_string): numbers, strings, pointers' addresses.
template <class T>
std::string to_string(const T& value) {
  return str(value);
}
}  // namespace guts

}  // namespace kiln
