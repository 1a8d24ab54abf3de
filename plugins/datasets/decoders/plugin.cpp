// The decoders plugin: registers each decoder of decoders.hpp for its extensions. A decoder whose
// library was missing at build time is left out (the summary lists what is there).
#include "decoders.hpp"

#include <cstddef>

namespace kiln::decoders {
namespace {

const kiln_host* g_host = nullptr;

struct Entry {
  const char* extension;
  kiln_decode_fn fn;
};

const Entry kEntries[] = {
    {"txt", decode_text},  {"text", decode_text},  {"transcript", decode_text},
    {"cls", decode_class}, {"cls2", decode_class}, {"index", decode_class},
    {"inx", decode_class}, {"id", decode_class},   {"npy", decode_npy},
#ifdef KILN_DECODERS_JSON
    {"json", decode_json}, {"jsn", decode_json},
#endif
#ifdef KILN_DECODERS_PNG
    {"png", decode_png},
#endif
#ifdef KILN_DECODERS_JPEG
    {"jpg", decode_jpeg},  {"jpeg", decode_jpeg},
#endif
};

}  // namespace

void set_error(const std::string& message) {
  if (g_host != nullptr) g_host->set_error(message.c_str());
}

}  // namespace kiln::decoders

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {sizeof(kiln_plugin_info),
                                        KILN_ABI_MAJOR,
                                        KILN_ABI_MINOR,
                                        "decoders",
                                        "0.1.0",
                                        "field decoders: txt, cls/id/index, npy"
#ifdef KILN_DECODERS_JSON
                                        ", json (nlohmann::json)"
#endif
#ifdef KILN_DECODERS_PNG
                                        ", png (libpng)"
#endif
#ifdef KILN_DECODERS_JPEG
                                        ", jpg (libjpeg-turbo)"
#endif
  };
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host) {
  if (host->struct_size < offsetof(kiln_host, register_decoder) + sizeof(host->register_decoder)) {
    host->set_error("this core has no decoder interface (kiln plugin ABI 1.1 or newer)");
    return 0;
  }
  return 1;
}

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  kiln::decoders::g_host = host;
  for (const auto& e : kiln::decoders::kEntries) {
    kiln_status s = host->register_decoder(e.extension, e.fn, nullptr);
    if (s != 0) return s;  // the host has set the error
  }
  return 0;
}

}  // extern "C"
