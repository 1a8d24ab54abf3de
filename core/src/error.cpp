// kiln's diagnostics: internal errors and warnings.
#include "runtime.h"

#include <kiln/error.h>

#include <iostream>

namespace kiln::detail {

void internal_error(const char* file, int line, const std::string& message) {
  throw Error(str("internal error at ", file, ":", line, ": ", message,
                  " (this is a bug in kiln, please report it)"));
}

void warn(const std::string& message) { std::cerr << "kiln: warning: " << message << "\n"; }

}  // namespace kiln::detail
