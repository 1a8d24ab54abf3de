// libFuzzer target for brace expansion of shard specs (built with clang when it is installed;
// see tests/data/CMakeLists.txt). Any outcome but names within the caps or a kiln::ValueError
// (a crash, a hang, a sanitizer report, another exception) is a failure. The caps are small
// (1000 names, 64 KiB) so that the fuzzer explores patterns rather than building a million
// names per input (test_brace.cpp checks the real caps); within them, the real caps must give
// the same names.
#include "../../core/src/data/brace.h"

#include <kiln/data/source.h>
#include <kiln/error.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string pattern(reinterpret_cast<const char*>(data), size);
  kiln::data::detail::BraceLimits small{1000, 64 << 10};
  try {
    std::vector<std::string> names = kiln::data::detail::expand_braces(pattern, small);
    uint64_t bytes = 0;
    for (const std::string& n : names) bytes += n.size();
    if (names.size() > small.names || bytes > small.bytes) __builtin_trap();
    // text without braces or "::" is its own only name
    if (!pattern.empty() && pattern.find_first_of("{}") == std::string::npos &&
        pattern.find("::") == std::string::npos && names != std::vector<std::string>{pattern}) {
      __builtin_trap();
    }
    // under the small caps, the real ones give the same names
    if (kiln::data::expand_braces(pattern) != names) __builtin_trap();
  } catch (const kiln::ValueError&) {
  }
  return 0;
}
