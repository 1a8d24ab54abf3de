// kiln's diagnostics: internal errors and warnings.
#include "runtime.h"

#include <kiln/error.h>
#include <kiln/warning.h>

namespace kiln::detail {

void internal_error(const char* file, int line, const std::string& message) {
  throw Error(str("internal error at ", file, ":", line, ": ", message,
                  " (this is a bug in kiln, please report it)"));
}

void warn(const std::string& message) {
  // kiln's own warnings name no source location: the message says which operator or setting.
  ::kiln::warn(Warning(UserWarning{}, SourceLocation{}, message, false));
}

}  // namespace kiln::detail
