// The registry of communication backends that plugins register through the host table
// (kiln_host::register_comm_backend, ABI 1.3). Internal to libkiln_core. As the data registry:
// registration happens during a plugin's kiln_plugin_init under the loader's lock, entries are
// never freed (a refused plugin's are marked removed), so a found entry stays valid.
#pragma once

#include <kiln/sdk/plugin.h>

#include <string>
#include <string_view>
#include <vector>

namespace kiln::distributed::detail {

struct BackendEntry {
  std::string name;
  const kiln_comm_ops* ops = nullptr;
  void* self = nullptr;
  int plugin = -1;  // index in the loader's list
};

// Called by the host table; throws kiln::Error (a taken name, bad ops).
void register_backend(int plugin, const char* name, const kiln_comm_ops* ops, void* self);
// Removes what plugin `plugin` registered (its init failed, or it was unloaded).
void unregister_plugin(int plugin);
// The backend registered under `name`, or null; loads plugins first.
const BackendEntry* find_backend(std::string_view name);
// Every registered backend, sorted by name.
std::vector<BackendEntry> all_backends();

}  // namespace kiln::distributed::detail
