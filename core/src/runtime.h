// Core's run-time state shared by the device, storage, dispatch and plugin code: one record per
// device type (which plugin provides it, its device operations) and the per-thread error a
// plugin sets. Internal to libkiln_core.
#pragma once

#include <kiln/device.h>
#include <kiln/sdk/plugin.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>

namespace kiln::detail {

struct DeviceTypeRecord {
  const kiln_device_ops* ops = nullptr;  // null until a plugin registers the type
  void* self = nullptr;
  int plugin = -1;     // index in the loader's list
  int32_t count = 0;   // devices of this type on this machine
  std::atomic<int64_t> live_storages{0};
  std::mutex warned_mutex;
  std::set<std::string> warned_ops;  // CPU-fallback warnings already given
};

// The record of a device type (valid for every id below kMaxDeviceTypes).
DeviceTypeRecord& device_record(DeviceType type);

// Loads the plugins once, on first need.
void ensure_plugins_loaded();

// The record of `device`'s type after loading plugins; throws when no plugin provides the type
// or the index is out of range. `what` names the operation for the message.
DeviceTypeRecord& require_device(Device device, const char* what);

// The file of the plugin with this index ("" if none), for messages.
std::string plugin_path(int plugin);
// "cpu, cuda": the device types that have a plugin, for messages.
std::string registered_device_types();

// The message a plugin set on this thread with host->set_error; clears it.
std::string take_plugin_error();

// Prints a warning to stderr with the "kiln: warning:" prefix.
void warn(const std::string& message);

}  // namespace kiln::detail
