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

// An argument PyTorch declares as a number and whose defaults are ints (Softplus's beta=1,
// threshold=20): "1" for an integral value, as Python prints the int, py_float otherwise.
inline std::string py_number(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)) && v > -1e15 && v < 1e15) {
    return std::to_string(static_cast<long long>(v));
  }
  return py_float(v);
}

inline const char* py_bool(bool v) { return v ? "true" : "false"; }

}  // namespace kiln::nn::detail
