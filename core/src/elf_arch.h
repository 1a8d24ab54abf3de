// The machine an ELF file's code is for, read from its header, so that the loader can say "built
// for another architecture" where dlopen says "wrong ELF class" or "cannot open shared object
// file". Depends on nothing of kiln (tests/loader/fuzz_elf.cpp compiles it alone). Internal to
// libkiln_core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kiln::detail {

struct ElfTarget {
  int elf_class = 0;  // ELFCLASS32 or ELFCLASS64
  int encoding = 0;   // ELFDATA2LSB or ELFDATA2MSB
  int machine = 0;    // e_machine: EM_X86_64, EM_AARCH64, ...
  bool operator==(const ElfTarget&) const = default;
};

// The target of the ELF header in the first `size` bytes, or nothing when they are not one (too
// short, no ELF magic, an unknown class or byte order).
std::optional<ElfTarget> read_elf_target(const unsigned char* bytes, size_t size);

// "x86-64 (64-bit, little-endian)", "AArch64 (64-bit, little-endian)", "machine 4242 (...)".
std::string elf_target_name(const ElfTarget& target);

// Why `library` cannot run with `own` (the core's own file): "built for another architecture:
// ..." naming both machines; "" when both headers agree or either cannot be read.
std::string architecture_mismatch(const std::string& library, const std::string& own);

}  // namespace kiln::detail
