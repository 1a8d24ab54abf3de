// Plugins: shared libraries that provide devices and kernels (kiln/sdk/plugin.h is the contract).
//
// Plugins load on first need (the first tensor, devices(), default_device()) from, in order:
// paths given to add_plugin_path(), the folders in KILN_PLUGIN_PATH (colon-separated), and the
// plugin folder installed next to libkiln_core (../lib/kiln/plugins relative to it). Never the
// current directory. A plugin that cannot load or run here is listed with the reason; the process
// goes on with the others, and nothing a failed plugin registered stays usable. (A static
// constructor that throws inside dlopen may stop the process: kiln then names the file first.)
// The device types "cpu" and "cuda" are registered only by the plugins of kiln's own folder.
#pragma once

#include <kiln/export.h>

#include <string>
#include <vector>

namespace kiln {

enum class PluginState {
  Loaded,        // registered its devices and kernels
  NotAvailable,  // loaded, but its probe said it cannot run on this machine (reason given)
  Refused,       // ABI mismatch, registration failed or threw, a conflict with another plugin
  LoadFailed,    // not a plugin, built for another machine, a library it needs is missing, or
                 // a static constructor threw while it was opened
  Unloaded,      // was loaded; unload_plugin() removed it (load_plugin() loads it again)
};

struct PluginInfo {
  std::string path;
  std::string name;     // empty when the file could not be queried
  std::string version;  // the plugin's own version
  std::string summary;
  int abi_major = 0, abi_minor = 0;
  PluginState state = PluginState::LoadFailed;
  std::string reason;                // why it is not Loaded ("" when loaded)
  std::vector<std::string> devices;  // device types it registered
};

KILN_API const char* plugin_state_name(PluginState state);

// Adds a folder or a plugin file to search, before KILN_PLUGIN_PATH. Call before first use.
KILN_API void add_plugin_path(const std::string& path);
// Searches and loads all plugins now, once; later calls do nothing.
KILN_API void load_plugins();
// Loads one plugin file now (tests, tools); the result is also in plugins().
KILN_API PluginInfo load_plugin(const std::string& path);
// Unloads a loaded plugin: removes its device types, kernels, sources and decoders, and closes
// the library. Throws kiln::Error, changing nothing, when the file is not a loaded plugin, while
// tensors (storages) of one of its devices are alive, or when it registered data sources or
// decoders (datasets keep pointers into them: such plugins stay loaded). Call it when no other
// thread uses the plugin's devices.
KILN_API void unload_plugin(const std::string& path);
// Every plugin file seen so far, in load order.
KILN_API std::vector<PluginInfo> plugins();
// The folders searched, in order (for kiln-info).
KILN_API std::vector<std::string> plugin_search_path();
// The ABI version of this core.
KILN_API int core_abi_major();
KILN_API int core_abi_minor();

// Note [CPU fallback warnings]: on a device whose plugin opted in to CPU fallback
// (kiln_device_ops::cpu_fallback), an operator without a kernel there runs on the CPU, and kiln
// prints one warning line per operator per process. set_fallback_warnings(false) turns them off,
// as KILN_FALLBACK_WARNINGS=0 in the environment does (1, the default, turns them on); a call
// wins over the variable. fallback_warnings() says whether they are on (it throws ValueError
// naming the variable when KILN_FALLBACK_WARNINGS is neither 0 nor 1).
KILN_API void set_fallback_warnings(bool enabled);
KILN_API bool fallback_warnings();
// The operators that have run on the CPU for want of a kernel so far in this process, sorted,
// whether or not they were warned about.
KILN_API std::vector<std::string> fallback_operators();

}  // namespace kiln
