// Command-line numbers for the examples, checked: an error names the program and the option.
#pragma once

#include <kiln/error.h>

#include <charconv>
#include <cstdint>
#include <string>

namespace example_options {

// `text` (all of it) as an integer from lo to hi; throws kiln::ValueError
// "<program>: <option>: expected <what> from <lo> to <hi>, got '<text>'".
inline int64_t parse_int(const std::string& program, const std::string& option,
                         const std::string& text, int64_t lo, int64_t hi,
                         const char* what = "an integer") {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    throw kiln::ValueError(kiln::detail::str(program, ": ", option, ": expected ", what, " from ",
                                             lo, " to ", hi, ", got '", text, "'"));
  }
  return value;
}

}  // namespace example_options
