#include <kiln/jit/recorded_call.h>

namespace kiln::jit::detail {
RecordedCall::~RecordedCall() = default;
}  // namespace kiln::jit::detail
