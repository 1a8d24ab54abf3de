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
// KILN_SOURCE_PLUGIN also ships the source's checks, for kiln-plugin-check (the optional exports
// kiln_source_sample_shard and kiln_source_fuzz of plugin.h; KILN_SOURCE_CHECKS(Source) writes
// them in a plugin with its own entry points):
//   - a sample corpus, when the source declares one: small valid shards, as bytes
//       static std::vector<std::string> sample_shards();
//   - its fuzz harness: bytes read as one shard, every sample; by default the bytes are put in
//     an anonymous file (memfd) and opened through Reader by its /proc/self/fd path, so a source
//     of files needs nothing more; another source defines
//       static void fuzz(const void* data, uint64_t size);
// A C++ exception never crosses the boundary: a throwing constructor, next() or list_shards()
// becomes host->set_error(what()) and the error code of the entry point. The core adds the
// source, the shard, the worker and the sample to the message.
#pragma once

#include <kiln/sdk/host.hpp>
#include <kiln/sdk/plugin.h>

#include <sys/mman.h>
#include <unistd.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace kiln::sdk {

// Hands one shard name to the core (list_shards).
using EmitShard = std::function<void(const std::string& shard)>;

namespace detail {

template <class Source>
kiln_status list_shards(void* /*self*/, const char* item, void (*emit)(void*, const char*),
                        void* ctx) noexcept {
  try {
    Source::list_shards(std::string(item),
                        [&](const std::string& shard) { emit(ctx, shard.c_str()); });
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

// Reads `size` bytes as one shard through Source::Reader, every sample (kiln_source_fuzz).
template <class Source>
void fuzz_reader(const void* data, uint64_t size) {
  int fd = memfd_create("kiln-fuzz-shard", MFD_CLOEXEC);
  if (fd < 0) return;
  const auto* p = static_cast<const char*>(data);
  for (uint64_t done = 0; done < size;) {
    ssize_t n = ::write(fd, p + done, size - done);
    if (n <= 0) break;
    done += static_cast<uint64_t>(n);
  }
  try {
    typename Source::Reader reader("/proc/self/fd/" + std::to_string(fd));
    kiln_sample sample{};
    for (int i = 0; i < 1000000; ++i) {  // a bound, should next() never end
      sample.struct_size = sizeof sample;
      int32_t r = reader.next(sample);
      if (r != KILN_SAMPLE_OK && r != KILN_SAMPLE_SKIP) break;
    }
  } catch (const std::exception&) {
  }
  ::close(fd);
}

template <class Source>
int32_t sample_shard([[maybe_unused]] const char* scheme, [[maybe_unused]] int32_t index,
                     [[maybe_unused]] void (*emit)(void* ctx, const void* data, uint64_t size),
                     [[maybe_unused]] void* ctx) noexcept {
  if constexpr (requires { Source::sample_shards(); }) {
    try {
      if (scheme == nullptr || std::string(scheme) != Source::scheme || index < 0) return 0;
      std::vector<std::string> shards = Source::sample_shards();
      if (static_cast<size_t>(index) >= shards.size()) return 0;
      const std::string& s = shards[static_cast<size_t>(index)];
      emit(ctx, s.data(), s.size());
      return 1;
    } catch (const std::exception& e) {
      set_error(e.what());
      return 0;
    }
  } else {
    return 0;  // the source declares no sample corpus
  }
}

template <class Source>
int32_t fuzz(const char* scheme, const void* data, uint64_t size) noexcept {
  if (scheme == nullptr || std::string(scheme) != Source::scheme) return 1;
  try {
    if constexpr (requires { Source::fuzz(data, size); }) {
      Source::fuzz(data, size);
    } else {
      fuzz_reader<Source>(data, size);
    }
  } catch (const std::exception&) {
  }
  return 0;
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

// The optional exports kiln_source_sample_shard and kiln_source_fuzz (plugin.h) of SOURCE.
#define KILN_SOURCE_CHECKS(SOURCE)                                                                \
  extern "C" KILN_PLUGIN_EXPORT int32_t kiln_source_sample_shard(                                 \
      const char* scheme, int32_t index, void (*emit)(void*, const void*, uint64_t), void* ctx) { \
    return kiln::sdk::detail::sample_shard<SOURCE>(scheme, index, emit, ctx);                     \
  }                                                                                               \
  extern "C" KILN_PLUGIN_EXPORT int32_t kiln_source_fuzz(const char* scheme, const void* data,    \
                                                         uint64_t size) {                         \
    return kiln::sdk::detail::fuzz<SOURCE>(scheme, data, size);                                   \
  }

// The three entry points of a plugin that provides one data source, and its checks
// (KILN_SOURCE_CHECKS): NAME, VERSION and SUMMARY are string literals for kiln-info.
#define KILN_SOURCE_PLUGIN(SOURCE, NAME, VERSION, SUMMARY)                                 \
  KILN_SOURCE_CHECKS(SOURCE)                                                               \
  extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {          \
    static const kiln_plugin_info info = {                                                 \
        sizeof(kiln_plugin_info), KILN_ABI_MAJOR, KILN_ABI_MINOR, NAME, VERSION, SUMMARY}; \
    return &info;                                                                          \
  }                                                                                        \
  extern "C" KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host) {         \
    return kiln::sdk::probe_source_interface(host);                                        \
  }                                                                                        \
  extern "C" KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {      \
    return kiln::sdk::register_source<SOURCE>(host);                                       \
  }
