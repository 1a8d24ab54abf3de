// Errors that cross from a worker to the caller, with context in front. See internal.h.
#include "internal.h"

#include <kiln/error.h>

namespace kiln::data::detail {

void rethrow_with_context(std::exception_ptr error, const std::string& prefix) {
  try {
    std::rethrow_exception(error);
  } catch (const ValueError& e) {
    throw ValueError(prefix + e.what());
  } catch (const IndexError& e) {
    throw IndexError(prefix + e.what());
  } catch (const TypeError& e) {
    throw TypeError(prefix + e.what());
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(prefix + e.what());
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(prefix + e.what());
  } catch (const std::exception& e) {
    throw Error(prefix + e.what());
  } catch (...) {
    throw Error(prefix + "unknown exception (not derived from std::exception)");
  }
}

}  // namespace kiln::data::detail
