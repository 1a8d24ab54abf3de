// libFuzzer target for the safetensors reader (core/src/serialize: the header's JSON, its
// entries and layout, and the data checks that kiln::load runs on each tensor; built with clang
// when it is installed, see tests/serialize/CMakeLists.txt). The input is a safetensors file.
// Reading may fail with kiln::Error, but never crash or hang, and what it accepts must be a
// tensor kiln can make (Note [Checked sizes]) lying inside the data.
#include "serialize/safetensors_format.h"

#include <kiln/error.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | data[i];
  // as kiln::load: the length is checked against the format's cap and the file size
  if (length > kiln::safetensors::kMaxHeaderBytes || length > size - 8) return 0;
  const uint8_t* buffer = data + 8 + length;
  uint64_t data_size = size - 8 - length;
  try {
    kiln::safetensors::Header header = kiln::safetensors::parse_header(
        std::string_view(reinterpret_cast<const char*>(data + 8), length), data_size);
    for (const kiln::safetensors::Entry& e : header.entries) {
      int64_t extent = static_cast<int64_t>(kiln::element_size(e.dtype));
      for (int64_t s : e.shape) {
        if (s < 0 || __builtin_mul_overflow(extent, s > 1 ? s : 1, &extent)) __builtin_trap();
      }
      if (e.begin > e.end || e.end > data_size) __builtin_trap();
      kiln::safetensors::check_data(e, buffer + e.begin, e.end - e.begin);
    }
  } catch (const kiln::Error&) {
  }
  return 0;
}
