// Core's run-time state shared by the device, storage, dispatch and plugin code: one record per
// device type (which plugin provides it, its device operations) and the per-thread error a
// plugin sets. Internal to libkiln_core.
#pragma once

#include <kiln/device.h>
#include <kiln/sdk/plugin.h>

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>

namespace kiln::detail {

struct DeviceTypeRecord {
  const kiln_device_ops* ops = nullptr;  // null until a plugin registers the type
  void* self = nullptr;
  int plugin = -1;    // index in the loader's list
  int32_t count = 0;  // devices of this type on this machine
  std::atomic<int64_t> live_storages{0};
};

// The record of a device type (valid for every id below kMaxDeviceTypes).
DeviceTypeRecord& device_record(DeviceType type);

// The id of an interned device type name, or -1; interns nothing.
int find_device_type(std::string_view name);
// Frees the id of a name that only a refused plugin interned (see Note [Device type ids]); the
// ids of "cpu" and "cuda" are never freed.
void release_device_type(DeviceType type);

// Starts kiln's runtime (loads the plugins, ...) once, on first need: Note [Runtime start-up]
// in runtime_start.cpp. Every function that needs a plugin calls it first.
void ensure_runtime_started();
// Loads every plugin of plugin_search_path() (the runtime's start calls it; plugin_loader.cpp).
void load_search_path_plugins();

// The record of `device`'s type after loading plugins; throws when no plugin provides the type
// or the index is out of range. `what` names the operation for the message.
DeviceTypeRecord& require_device(Device device, const char* what);

// The file of the plugin with this index ("" if none), for messages.
std::string plugin_path(int plugin);
// "cpu, cuda": the device types that have a plugin, for messages.
std::string registered_device_types();

// The message a plugin set on this thread with host->set_error or set_error_kind; clears it.
std::string take_plugin_error();

// What a plugin set on this thread: the message and its kiln_error_kind.
struct PluginError {
  int32_t kind = KILN_ERROR_OTHER;
  std::string message;
};
// Sets this thread's plugin error, as host->set_error_kind does (for host functions that fail).
void set_plugin_error(int32_t kind, const std::string& message);
// The error a plugin set on this thread, with its kind; clears it.
PluginError take_plugin_failure();
// Throws the kiln::Error subclass of the error's kind with `where` + its message (see Note [Error
// kinds] in kiln/sdk/plugin.h: a message with an ABI 1.0 prefix keeps that prefix's subclass).
[[noreturn]] void throw_plugin_error(const std::string& where, PluginError error);

// Hands a warning to the calling thread's kiln::WarningHandler (kiln/warning.h); the default
// handler prints it to stderr with the "kiln: warning:" prefix.
void warn(const std::string& message);

// A 0/1 environment variable: `unset` when it is unset or empty; throws ValueError naming the
// variable for any other value.
bool env_flag(const char* name, bool unset);

}  // namespace kiln::detail
