#include "elf_arch.h"

#include <elf.h>

#include <array>
#include <fstream>
#include <utility>

namespace kiln::detail {
namespace {

const char* machine_name(int machine) {
  switch (machine) {
    case EM_386: return "x86 (i386)";
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_RISCV: return "RISC-V";
    case EM_PPC: return "PowerPC";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "IBM Z (s390)";
    case EM_MIPS: return "MIPS";
    case EM_SPARCV9: return "SPARC V9";
    case 258: return "LoongArch";  // EM_LOONGARCH, missing from older <elf.h>
    default: return nullptr;
  }
}

std::optional<ElfTarget> read_file_target(const std::string& path) {
  std::array<unsigned char, EI_NIDENT + 4> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(header.data()), header.size())) return std::nullopt;
  return read_elf_target(header.data(), header.size());
}

}  // namespace

std::optional<ElfTarget> read_elf_target(const unsigned char* bytes, size_t size) {
  // e_ident (16 bytes), e_type (2), e_machine (2): the same offsets in both classes
  constexpr size_t kMachineOffset = EI_NIDENT + 2;
  if (bytes == nullptr || size < kMachineOffset + 2) return std::nullopt;
  if (bytes[EI_MAG0] != ELFMAG0 || bytes[EI_MAG1] != ELFMAG1 || bytes[EI_MAG2] != ELFMAG2 ||
      bytes[EI_MAG3] != ELFMAG3) {
    return std::nullopt;
  }
  ElfTarget t;
  t.elf_class = bytes[EI_CLASS];
  t.encoding = bytes[EI_DATA];
  if (t.elf_class != ELFCLASS32 && t.elf_class != ELFCLASS64) return std::nullopt;
  if (t.encoding != ELFDATA2LSB && t.encoding != ELFDATA2MSB) return std::nullopt;
  unsigned lo = bytes[kMachineOffset], hi = bytes[kMachineOffset + 1];
  if (t.encoding == ELFDATA2MSB) std::swap(lo, hi);
  t.machine = static_cast<int>(lo | (hi << 8));
  return t;
}

std::string elf_target_name(const ElfTarget& target) {
  const char* machine = machine_name(target.machine);
  std::string out = machine ? machine : "ELF machine " + std::to_string(target.machine);
  out += target.elf_class == ELFCLASS64 ? " (64-bit, " : " (32-bit, ";
  out += target.encoding == ELFDATA2LSB ? "little-endian)" : "big-endian)";
  return out;
}

std::string architecture_mismatch(const std::string& library, const std::string& own) {
  std::optional<ElfTarget> theirs = read_file_target(library);
  std::optional<ElfTarget> ours = read_file_target(own);
  if (!theirs || !ours || *theirs == *ours) return "";
  return "built for another architecture: it is " + elf_target_name(*theirs) +
         " code, and this kiln runs as " + elf_target_name(*ours) +
         " (use a build of the plugin for this machine)";
}

}  // namespace kiln::detail
