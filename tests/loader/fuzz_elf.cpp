// libFuzzer target for the loader's ELF header reader (core/src/elf_arch.cpp, compiled in alone;
// built with clang when it is installed, see tests/loader/CMakeLists.txt): the input is the
// first bytes of a would-be plugin file. Any outcome but a crash, a hang or a sanitizer report
// is a pass; a header that reads must name its machine.
#include "../../core/src/elf_arch.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<kiln::detail::ElfTarget> target = kiln::detail::read_elf_target(data, size);
  if (target && kiln::detail::elf_target_name(*target).empty()) std::abort();
  return 0;
}
