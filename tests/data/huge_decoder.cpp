// A test plugin with a decoder that asks the core for a tensor whose size overflows, as a
// decoder reading a damaged size field would: the core must refuse it (decode.cpp) instead of
// handing out memory for the wrapped-around size. Registers the extension "huge", and "oom", whose
// decoder reports running out of memory with its kind (host->set_error_kind, ABI 1.2).
#include <kiln/sdk/plugin.h>

namespace {

const kiln_host* g_host = nullptr;

kiln_status decode_huge(const void*, uint64_t, const char*, const kiln_decode_out* out, void*) {
  const int64_t sizes[2] = {int64_t{1} << 40, int64_t{1} << 40};      // 2^80 bytes
  if (out->tensor(out->ctx, KILN_U8, 2, sizes) == nullptr) return 1;  // the core set the error
  return 0;  // (never writes: a wrapped-around size would be 0 bytes)
}

kiln_status decode_oom(const void*, uint64_t, const char*, const kiln_decode_out*, void*) {
  g_host->set_error_kind(KILN_ERROR_OUT_OF_MEMORY, "oom decoder: 3 GiB asked, 1 GiB free");
  return 1;
}

}  // namespace

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR,
      "huge_decoder",           "0.1.0",        "test: an overflowing decoder"};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host*) { return 1; }

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  g_host = host;
  if (host->register_decoder("huge", decode_huge, nullptr) != 0) return 1;
  return host->register_decoder("oom", decode_oom, nullptr);
}

}  // extern "C"
