// Sources and decoders registered by plugins. See registry.h.
#include "registry.h"

#include "../runtime.h"

#include <kiln/error.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <shared_mutex>

namespace kiln::data::detail {
namespace {

struct Registry {
  std::shared_mutex mutex;
  // unique_ptr: entries never move, so find_* may hand out pointers (see registry.h)
  std::vector<std::unique_ptr<SourceEntry>> sources;
  std::vector<std::unique_ptr<DecoderEntry>> decoders;
};

Registry& registry() {
  static auto* r = new Registry();  // leaked, like the loader: plugins outlive static teardown
  return *r;
}

// Lower case letters, digits, '+', '-', '.', starting with a letter (RFC 3986 schemes).
bool valid_scheme(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return std::islower(u) || std::isdigit(u) || c == '+' || c == '-' || c == '.';
  });
}

bool valid_extension(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c != '.' && c != '/' && !std::isupper(static_cast<unsigned char>(c)) &&
           std::isprint(static_cast<unsigned char>(c));
  });
}

}  // namespace

void register_source(int plugin, const char* scheme, const kiln_source_ops* ops, void* self) {
  KILN_CHECK(scheme != nullptr && ops != nullptr, "register_source: scheme and ops are required");
  KILN_CHECK(valid_scheme(scheme), "register_source('", scheme, "'): a scheme is lower-case ",
             "letters, digits, '+', '-' or '.', starting with a letter");
  KILN_CHECK(ops->struct_size >= offsetof(kiln_source_ops, close) + sizeof(ops->close),
             "register_source('", scheme, "'): kiln_source_ops.struct_size ", ops->struct_size,
             " is too small");
  KILN_CHECK(ops->open_shard && ops->next && ops->close, "register_source('", scheme,
             "'): open_shard, next and close are required");
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  for (const auto& e : r.sources) {
    KILN_CHECK(e->plugin < 0 || e->scheme != scheme, "data source '", scheme,
               "' is already registered by ", kiln::detail::plugin_path(e->plugin),
               "; refused from ", kiln::detail::plugin_path(plugin));
  }
  r.sources.push_back(std::make_unique<SourceEntry>(SourceEntry{scheme, ops, self, plugin}));
}

void register_decoder(int plugin, const char* extension, kiln_decode_fn fn, void* user) {
  KILN_CHECK(extension != nullptr && fn != nullptr, "register_decoder: extension and fn are ",
             "required");
  KILN_CHECK(valid_extension(extension), "register_decoder('", extension, "'): an extension is ",
             "one lower-case component without dots or slashes (\"png\")");
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  for (const auto& e : r.decoders) {
    KILN_CHECK(e->plugin < 0 || e->extension != extension, "decoder for '.", extension,
               "' is already registered by ", kiln::detail::plugin_path(e->plugin),
               "; refused from ", kiln::detail::plugin_path(plugin));
  }
  r.decoders.push_back(std::make_unique<DecoderEntry>(DecoderEntry{extension, fn, user, plugin}));
}

void unregister_plugin(int plugin) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  // Marked, not erased: a pointer from find_* stays valid (registry.h).
  for (auto& e : r.sources) {
    if (e->plugin == plugin) e->plugin = -1;
  }
  for (auto& e : r.decoders) {
    if (e->plugin == plugin) e->plugin = -1;
  }
}

const SourceEntry* find_source(std::string_view scheme) {
  kiln::detail::ensure_runtime_started();
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  for (const auto& e : r.sources) {
    if (e->plugin >= 0 && e->scheme == scheme) return e.get();
  }
  return nullptr;
}

const DecoderEntry* find_decoder(std::string_view extension) {
  kiln::detail::ensure_runtime_started();
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  for (const auto& e : r.decoders) {
    if (e->plugin >= 0 && e->extension == extension) return e.get();
  }
  return nullptr;
}

std::vector<SourceEntry> all_sources() {
  kiln::detail::ensure_runtime_started();
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  std::vector<SourceEntry> out;
  for (const auto& e : r.sources) {
    if (e->plugin >= 0) out.push_back(*e);
  }
  std::sort(out.begin(), out.end(),
            [](const SourceEntry& a, const SourceEntry& b) { return a.scheme < b.scheme; });
  return out;
}

std::vector<DecoderEntry> all_decoders() {
  kiln::detail::ensure_runtime_started();
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  std::vector<DecoderEntry> out;
  for (const auto& e : r.decoders) {
    if (e->plugin >= 0) out.push_back(*e);
  }
  std::sort(out.begin(), out.end(),
            [](const DecoderEntry& a, const DecoderEntry& b) { return a.extension < b.extension; });
  return out;
}

}  // namespace kiln::data::detail
