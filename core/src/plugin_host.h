// The host table (kiln_host) that plugins register through, and what they registered. Used by
// the loader (plugin_loader.cpp) only. Internal to libkiln_core.
//
// Note [Staged registrations]: what a plugin registers in its kiln_plugin_init is staged, not
// applied: its device types and kernels wait in the stage, invisible to the rest of kiln, and are
// checked there against what is already registered and against each other. When init returns 0
// the loader commits the stage; on any failure (a non-zero status, an exception of any type, a
// conflict) it discards it, which also gives back the device type names that only this plugin
// interned (see Note [Device type ids] in device.cpp). Data sources and decoders go to the data
// registry (data/registry.cpp) under the plugin's index, where a discard removes them. So a
// failed plugin leaves nothing usable behind, whichever way it failed, and rollback is one call.
#pragma once

#include <kiln/sdk/plugin.h>

#include <string>
#include <vector>

namespace kiln::detail {

// The table given to every plugin's probe and init.
const kiln_host& host_table();

// The plugin whose probe or init runs now, for the host table's checks and log lines: its index
// in the loader's list, its name, its file, and whether that file is in kiln's own plugin folder
// (only those may register the device types "cpu" and "cuda"). index -1: none.
void set_current_plugin(int index, const std::string& name, const std::string& path,
                        bool own_folder);

// While open, the host table's register_* calls stage registrations for the current plugin.
void open_registrations();
void close_registrations();
// Applies the stage (Note [Staged registrations]); returns the device type names registered.
std::vector<std::string> commit_registrations();
// Drops the stage and removes the current plugin's data sources and decoders; returns the device
// type names it had staged, for messages.
std::vector<std::string> discard_registrations();

// Removes what loaded plugin `index` registered (unload_plugin).
void unregister_plugin(int index);

// Inside a catch block: the exception's type and, for a std::exception, its what() ("int" for
// `throw 42`), for messages about plugins that let one escape.
std::string describe_current_exception();

}  // namespace kiln::detail
