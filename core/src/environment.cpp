// Reading kiln's environment variables (which ones, and when: Note [Runtime start-up]).
#include "runtime.h"

#include <kiln/error.h>

#include <cstdlib>
#include <string_view>

namespace kiln::detail {

bool env_flag(const char* name, bool unset) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return unset;
  std::string_view v(value);
  KILN_CHECK_VALUE(v == "0" || v == "1", "the environment variable ", name, "='", v,
                   "' is not 0 or 1; set it to 0 (off) or 1 (on), or unset it");
  return v == "1";
}

}  // namespace kiln::detail
