// libFuzzer target for the tar source's readers (built with clang when it is installed; see
// tests/data/CMakeLists.txt): the input is a tar archive, read by the in-place reader and by
// libarchive, grouped into samples by WebDataset's rules. Any outcome but a crash, a hang or a
// sanitizer report is a pass.
#include "../../plugins/datasets/tar/grouper.hpp"
#include "../../plugins/datasets/tar/members.hpp"

#include <cstddef>
#include <cstdint>

namespace {

void drain(std::unique_ptr<kiln::tar::MemberReader> reader) {
  kiln::tar::Grouper g(std::move(reader));
  kiln_sample s{};
  s.struct_size = sizeof s;
  for (int i = 0; i < 100000; ++i) {
    int32_t r = g.next(&s);
    if (r == KILN_SAMPLE_END || r == KILN_SAMPLE_ERROR) break;
    if (r == KILN_SAMPLE_OK) {
      for (int32_t f = 0; f < s.n_fields; ++f) {
        volatile uint8_t sink = 0;
        const auto* p = static_cast<const uint8_t*>(s.fields[f].data);
        if (s.fields[f].size > 0) sink = p[0] ^ p[s.fields[f].size - 1];
        (void)sink;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    drain(kiln::tar::read_tar_memory(data, size));
  } catch (const kiln::tar::TarError&) {
  }
  try {
    drain(kiln::tar::read_archive_memory(data, size));
  } catch (const kiln::tar::TarError&) {
  }
  return 0;
}
