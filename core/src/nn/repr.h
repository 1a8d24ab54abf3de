// How module reprs spell values, so that they read as PyTorch's with C++ booleans:
// py_float(1e-5) is "1e-05", py_float(0.1) is "0.1", py_float(1.0) is "1.0".
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln::nn::detail {

// Python's repr of a float: the shortest digits that read back as the same double.
inline std::string py_float(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";  // 1 -> 1.0, not inf/nan
  return s;
}

inline const char* py_bool(bool v) { return v ? "true" : "false"; }

}  // namespace kiln::nn::detail
