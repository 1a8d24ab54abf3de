// The example plugin of docs/writing-a-data-source.md: the "lines" data source. A shard is a
// text file; each line is a sample with key "<line number>" and one field, "txt". Built here so
// the document's code is compiled and tested (test_data's lines_source suite).
#include <kiln/sdk/plugin.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace {

const kiln_host* g_host = nullptr;

struct Reader {
  std::ifstream in;
  std::string line, key;
  long number = 0;
  kiln_field field{};
};

void* open_shard(void*, const char* shard) {
  auto* r = new Reader();
  r->in.open(shard);
  if (!r->in) {
    delete r;
    g_host->set_error(std::strerror(errno));  // the core adds the shard and "cannot open"
    return nullptr;
  }
  return r;
}

int32_t next(void* reader, kiln_sample* out) {
  auto* r = static_cast<Reader*>(reader);
  if (!std::getline(r->in, r->line)) return KILN_SAMPLE_END;
  r->key = std::to_string(++r->number);
  r->field = kiln_field{"txt", r->line.data(), r->line.size(), 0};
  out->key = r->key.c_str();
  out->fields = &r->field;
  out->n_fields = 1;
  out->offset = 0;
  return KILN_SAMPLE_OK;
}

void close_shard(void* reader) { delete static_cast<Reader*>(reader); }

}  // namespace

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {sizeof(kiln_plugin_info),
                                        KILN_ABI_MAJOR,
                                        KILN_ABI_MINOR,
                                        "lines",
                                        "0.1.0",
                                        "data source \"lines\": one sample per line of text"};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host*) { return 1; }

KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  g_host = host;
  static kiln_source_ops ops = {sizeof(kiln_source_ops), nullptr, open_shard, next, close_shard};
  return host->register_source("lines", &ops, nullptr);
}

}  // extern "C"
