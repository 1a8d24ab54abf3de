// libFuzzer target for the npy decoder (plugins/datasets/decoders/npy.cpp; built with clang when
// it is installed, see tests/serialize/CMakeLists.txt): the input is an .npy file. Decoding may
// fail with an error, but never crash, hang, read or write out of bounds, or let a bool byte
// other than 0 or 1 through.
#include "../../plugins/datasets/decoders/decoders.hpp"

#include <kiln/sdk/kernel.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::decoders {
void set_error(const std::string&) {}
}  // namespace kiln::decoders

namespace {

struct Out {
  int32_t dtype = -1;
  std::vector<uint8_t> bytes;
};

void* tensor_of(void* ctx, int32_t dtype, int32_t ndim, const int64_t* sizes) {
  auto* out = static_cast<Out*>(ctx);
  // the decoder must refuse shapes whose strides (each 0 counted as 1) exceed its 2^48 cap
  uint64_t n = kiln::sdk::dtype_size(dtype), extent = 1;
  for (int32_t d = 0; d < ndim; ++d) {
    if (sizes[d] < 0) __builtin_trap();
    auto s = static_cast<uint64_t>(sizes[d]);
    if (__builtin_mul_overflow(extent, s > 1 ? s : 1, &extent) || extent > (uint64_t{1} << 48)) {
      __builtin_trap();
    }
    n *= s;  // at most extent * 8
  }
  if (n > (uint64_t{1} << 32)) return nullptr;  // bigger than any input: refuse, as OOM would
  out->dtype = dtype;
  out->bytes.assign(n, 0xAA);
  return out->bytes.data();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Out out;
  kiln_decode_out o{};
  o.struct_size = sizeof o;
  o.ctx = &out;
  o.tensor = tensor_of;
  if (kiln::decoders::decode_npy(data, size, "fuzz.npy", &o, nullptr) == 0 &&
      out.dtype == KILN_BOOL) {
    for (uint8_t b : out.bytes) {
      if (b > 1) __builtin_trap();
    }
  }
  return 0;
}
