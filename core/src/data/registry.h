// The registry of data sources and decoders that plugins register through the host table
// (kiln_host::register_source, register_decoder). Internal to libkiln_core.
//
// Registration happens while the loader holds its lock, during a plugin's kiln_plugin_init;
// lookups come from any thread (DataLoader workers) after loading. Entries are never freed: a
// plugin stays loaded (see Note [Plugins stay loaded] in plugin_loader.cpp), and a refused
// plugin's entries are marked removed, so a pointer returned by find_* stays valid.
#pragma once

#include <kiln/sdk/plugin.h>

#include <string>
#include <string_view>
#include <vector>

namespace kiln::data::detail {

struct SourceEntry {
  std::string scheme;
  const kiln_source_ops* ops = nullptr;
  void* self = nullptr;
  int plugin = -1;  // index in the loader's list
};

struct DecoderEntry {
  std::string extension;
  kiln_decode_fn fn = nullptr;
  void* user = nullptr;
  int plugin = -1;
};

// Called by the host table while plugin `plugin` initialises. Throw kiln::Error (a taken scheme
// or extension, bad arguments); the loader turns that into the plugin's error.
void register_source(int plugin, const char* scheme, const kiln_source_ops* ops, void* self);
void register_decoder(int plugin, const char* extension, kiln_decode_fn fn, void* user);
// Removes what plugin `plugin` registered (its init failed).
void unregister_plugin(int plugin);

// The source for a scheme or the decoder for an extension, or null; loads plugins first.
const SourceEntry* find_source(std::string_view scheme);
const DecoderEntry* find_decoder(std::string_view extension);
// Every registered scheme / extension, sorted (for messages and listings).
std::vector<SourceEntry> all_sources();
std::vector<DecoderEntry> all_decoders();

}  // namespace kiln::data::detail
