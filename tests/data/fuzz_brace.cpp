// libFuzzer target for brace expansion of shard specs (built with clang when it is installed;
// see tests/data/CMakeLists.txt). Any outcome but names within the caps or a kiln::ValueError
// (a crash, a hang, a sanitizer report, another exception) is a failure.
#include <kiln/data/source.h>
#include <kiln/error.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string pattern(reinterpret_cast<const char*>(data), size);
  try {
    std::vector<std::string> names = kiln::data::expand_braces(pattern);
    if (names.size() > 1'000'000) __builtin_trap();
    // text without braces or "::" is its own only name
    if (!pattern.empty() && pattern.find_first_of("{}") == std::string::npos &&
        pattern.find("::") == std::string::npos && names != std::vector<std::string>{pattern}) {
      __builtin_trap();
    }
  } catch (const kiln::ValueError&) {
  }
  return 0;
}
