#include <kiln/error.h>

namespace kiln::detail {

void internal_error(const char* file, int line, const std::string& message) {
  throw Error(str("internal error at ", file, ":", line, ": ", message,
                  " (this is a bug in kiln, please report it)"));
}

}  // namespace kiln::detail
