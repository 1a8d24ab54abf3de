// How modules print values in pretty_print, as libtorch's: numbers as a C++ stream prints them
// (1e-05, 0.1, 1), booleans as true/false, shapes as [2, 2]. See the printing paragraph of
// kiln/nn/module.h.
#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

namespace kiln::nn::detail {

// "true" or "false", without changing the stream's flags (std::boolalpha would).
inline const char* bool_str(bool v) { return v ? "true" : "false"; }

// Writes [a, b, ...].
template <class T>
void print_list(std::ostream& stream, const std::vector<T>& values) {
  stream << '[';
  for (size_t i = 0; i < values.size(); ++i) stream << (i ? ", " : "") << values[i];
  stream << ']';
}

}  // namespace kiln::nn::detail
