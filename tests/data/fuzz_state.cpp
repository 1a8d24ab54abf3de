// libFuzzer target for the text a DataLoader state is loaded from (built with clang when it is
// installed; see tests/data/CMakeLists.txt): parse_state, then load_state_dict's checks of every
// field (SavedState::check), its writer (SavedState::to_sample) and the delivered-set
// arithmetic on what they accept. Any outcome but a kiln::ValueError, a crash, a hang or a
// sanitizer report is a failure; so is a parsed state that does not dump and parse back to the
// same text, or a checked state that its writer does not write back to the same state.
#include "../../core/src/data/loader_state.h"

#include <kiln/data/dataloader.h>
#include <kiln/error.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln::data;
  Sample state;
  try {
    state = parse_state(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const kiln::ValueError&) {
    return 0;
  }
  std::string text = dump_state(state);
  if (dump_state(parse_state(text)) != text) __builtin_trap();
  try {
    detail::SavedState saved = detail::SavedState::check(state, "fuzz");
    // what the typed state writes, it reads back to the same state
    std::string written = dump_state(saved.to_sample());
    if (dump_state(detail::SavedState::check(saved.to_sample(), "fuzz").to_sample()) != written) {
      __builtin_trap();
    }
    detail::DeliveredSet all = saved.delivered;
    all.add_all(detail::DeliveredSet::from_sample(saved.resumed_from, "fuzz"));
    all.add_runs(all.to_sample());  // [shard, begin, end] read as [shard, first, count]
    if (all.empty() != all.to_sample().is_none()) __builtin_trap();
  } catch (const kiln::ValueError&) {
  }
  return 0;
}
