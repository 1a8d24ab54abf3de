// A data-source plugin in C++: the entry points and the kiln_source_ops of a source written as
// two small classes, so that a source's file holds only what reads its format. See
// docs/writing-a-data-source.md for the whole walk-through.
//
//   struct LinesReader {                              // one open shard, used by one thread
//     explicit LinesReader(const std::string& shard); // opens it; throws std::exception on failure
//     int32_t next(kiln_sample& out);                 // KILN_SAMPLE_OK or _END; _SKIP or _ERROR
//   };                                                //   after kiln::sdk::set_error (or throw)
//
//   struct LinesSource {
//     static constexpr const char* scheme = "lines";  // kiln::data::open("lines:...")
//     using Reader = LinesReader;
//     // optional: one item of the user's spec -> its shards, in order (default: the item is one)
//     static void list_shards(const std::string& item, const kiln::sdk::EmitShard& emit);
//   };
//
//   KILN_SOURCE_PLUGIN(LinesSource, "lines", "0.1.0", "data source \"lines\": a sample per line")
//
// A C++ exception never crosses the boundary: a throwing constructor, next() or list_shards()
// becomes host->set_error(what()) and the error code of the entry point. The core adds the
// source, the shard, the worker and the sample to the message.
#pragma once

#include <kiln/sdk/host.hpp>
#include <kiln/sdk/plugin.h>

#include <exception>
#include <functional>
#include <string>

namespace kiln::sdk {

// Hands one shard name to the core (list_shards).
using EmitShard = std::function<void(const std::string& shard)>;

namespace detail {

template <class Source>
kiln_status list_shards(void* /*self*/, const char* item, void (*emit)(void*, const char*),
                        void* ctx) noexcept {
  try {
    Source::list_shards(std::string(item), [&](const std::string& shard) {
      emit(ctx, shard.c_str());
    });
    return 0;
  } catch (const std::exception& e) {
    set_error(e.what());
    return 1;
  }
}

template <class Source>
void* open_shard(void* /*self*/, const char* shard) noexcept {
  try {
    return new typename Source::Reader(std::string(shard));
  } catch (const std::exception& e) {
    set_error(e.what());
    return nullptr;
  }
}

template <class Source>
int32_t next(void* reader, kiln_sample* out) noexcept {
  // the entries up to `offset` are ABI 1.1's; a later core's larger struct is fine
  if (out == nullptr || out->struct_size < offsetof(kiln_sample, offset) + sizeof(out->offset)) {
    set_error(std::string(Source::scheme) + " source: the core's kiln_sample is too small");
    return KILN_SAMPLE_ERROR;
  }
  try {
    return static_cast<typename Source::Reader*>(reader)->next(*out);
  } catch (const std::exception& e) {
    set_error(e.what());
    return KILN_SAMPLE_ERROR;
  }
}

template <class Source>
void close_shard(void* reader) noexcept {
  delete static_cast<typename Source::Reader*>(reader);
}

}  // namespace detail

// The kiln_source_ops of Source (static: valid while the plugin is loaded).
template <class Source>
const kiln_source_ops* source_ops() {
  static const kiln_source_ops ops = [] {
    kiln_source_ops o{};
    o.struct_size = sizeof(kiln_source_ops);
    if constexpr (requires { &Source::list_shards; }) {
      o.list_shards = detail::list_shards<Source>;
    }
    o.open_shard = detail::open_shard<Source>;
    o.next = detail::next<Source>;
    o.close = detail::close_shard<Source>;
    return o;
  }();
  return &ops;
}

// For kiln_plugin_probe: 1 when the core has the data-source interface (ABI 1.1), else 0 with
// the reason set, so that an older core lists the plugin as "not available" instead of failing.
inline int32_t probe_source_interface(const kiln_host* host) {
  if (!KILN_HOST_HAS(host, register_source)) {
    host->set_error("this core has no data-source interface (kiln plugin ABI 1.1 or newer)");
    return 0;
  }
  return 1;
}

// For kiln_plugin_init: keeps the host table (kiln::sdk::host()) and registers Source's scheme.
template <class Source>
kiln_status register_source(const kiln_host* host) {
  kiln::sdk::host() = host;
  return host->register_source(Source::scheme, source_ops<Source>(), nullptr);
}

}  // namespace kiln::sdk

// The three entry points of a plugin that provides one data source: NAME, VERSION and SUMMARY
// are string literals for kiln-info.
#define KILN_SOURCE_PLUGIN(SOURCE, NAME, VERSION, SUMMARY)                                  \
  extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {           \
    static const kiln_plugin_info info = {sizeof(kiln_plugin_info), KILN_ABI_MAJOR,         \
                                          KILN_ABI_MINOR, NAME, VERSION, SUMMARY};          \
    return &info;                                                                           \
  }                                                                                         \
  extern "C" KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host) {          \
    return kiln::sdk::probe_source_interface(host);                                         \
  }                                                                                         \
  extern "C" KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {       \
    return kiln::sdk::register_source<SOURCE>(host);                                        \
  }
