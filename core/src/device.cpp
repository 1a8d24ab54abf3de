#include "plugin_host.h"
#include "runtime.h"

#include <kiln/device.h>
#include <kiln/dispatch.h>
#include <kiln/error.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>

namespace kiln {

// autocast keeps one bit per device type
static_assert(kMaxDeviceTypes <= 8 * sizeof(detail::LocalDispatchState::autocast_device_types));

namespace {

// Note [Device type ids]: names are interned into a fixed table so that a DeviceType is a small
// index (kernel slots, records, autocast bits). "cpu" and "cuda" are fixed; any other slot is
// free when its name is empty. The loader gives back the slot of a name that only a refused
// plugin interned, so refused plugins do not use the table up.
struct TypeNames {
  std::mutex mutex;
  std::array<std::string, kMaxDeviceTypes> names;
  TypeNames() {
    names[kCPU] = "cpu";
    names[kCUDA] = "cuda";
  }
  int find(std::string_view name) const {
    for (int i = 0; i < kMaxDeviceTypes; ++i) {
      if (names[i] == name) return i;
    }
    return -1;
  }
};

TypeNames& type_names() {
  static TypeNames* names = new TypeNames();  // never destroyed: used until process exit
  return *names;
}

bool valid_type_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return std::islower(static_cast<unsigned char>(name[0]));
}

}  // namespace

DeviceType device_type_from_name(std::string_view name) {
  KILN_CHECK_VALUE(valid_type_name(name), "Device: invalid device type '", name,
                   "' (expected lower-case letters, digits and '_', as 'cuda' or 'mydev')");
  TypeNames& t = type_names();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (int found = t.find(name); found >= 0) return static_cast<DeviceType>(found);
  int free_slot = t.find("");
  KILN_CHECK(free_slot >= 0, "Device: too many device types (", kMaxDeviceTypes,
             " at most, interned: ", detail::registered_device_types(), " registered by ",
             "plugins, the rest named by Device() or refused plugins); cannot add '", name, "'");
  t.names[free_slot] = std::string(name);
  return static_cast<DeviceType>(free_slot);
}

const std::string& device_type_name(DeviceType type) {
  TypeNames& t = type_names();
  KILN_CHECK_VALUE(type >= 0 && type < kMaxDeviceTypes && !t.names[type].empty(),
                   "Device: unknown device type id ", static_cast<int>(type));
  return t.names[type];
}

namespace detail {

int find_device_type(std::string_view name) {
  TypeNames& t = type_names();
  std::lock_guard<std::mutex> lock(t.mutex);
  return name.empty() ? -1 : t.find(name);
}

void release_device_type(DeviceType type) {
  TypeNames& t = type_names();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (type != kCPU && type != kCUDA && type >= 0 && type < kMaxDeviceTypes) t.names[type].clear();
}

}  // namespace detail

Device::Device(const std::string& text) : type_(kCPU), index_(-1) {
  auto colon = text.find(':');
  std::string type_name = text.substr(0, colon);
  if (colon != std::string::npos) {
    std::string index = text.substr(colon + 1);
    bool digits = !index.empty() && index.size() <= 4;
    for (char c : index) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    KILN_CHECK_VALUE(digits, "Device: invalid device string '", text,
                     "' (expected 'type' or 'type:index', as 'cuda:1')");
    index_ = static_cast<int16_t>(std::stoi(index));
  }
  KILN_CHECK_VALUE(!type_name.empty(), "Device: invalid device string '", text,
                   "' (expected 'type' or 'type:index', as 'cuda:1')");
  type_ = device_type_from_name(type_name);
}

std::string Device::str() const {
  std::string s = device_type_name(type_);
  if (index_ >= 0) s += ":" + std::to_string(index_);
  return s;
}

std::ostream& operator<<(std::ostream& out, const Device& device) { return out << device.str(); }

std::vector<Device> devices() {
  detail::ensure_runtime_started();
  std::vector<Device> out;
  for (int t = 0; t < kMaxDeviceTypes; ++t) {
    const detail::DeviceTypeRecord& r = detail::device_record(static_cast<DeviceType>(t));
    if (r.ops == nullptr) continue;
    for (int32_t i = 0; i < r.count; ++i) {
      out.emplace_back(static_cast<DeviceType>(t), static_cast<int16_t>(i));
    }
  }
  return out;
}

bool is_available(DeviceType type) {
  detail::ensure_runtime_started();
  const detail::DeviceTypeRecord& r = detail::device_record(type);
  return r.ops != nullptr && r.count > 0;
}

Device default_device() {
  detail::ensure_runtime_started();
  if (const char* env = std::getenv("KILN_DEVICE"); env != nullptr && *env != '\0') {
    std::string what = detail::str("KILN_DEVICE=", env);
    std::optional<Device> d;
    try {
      d.emplace(env);
    } catch (const Error& e) {  // a malformed string, or the table of type names is full
      throw ValueError(detail::str(what, ": ", e.what(), "; set KILN_DEVICE to a device type ",
                                   "and an optional index, or unset it (device types ",
                                   "available: ", detail::registered_device_types(), ")"));
    }
    detail::require_device(*d, what.c_str());
    return Device(d->type(), d->has_index() ? d->index() : 0);
  }
  int best = -1;
  int32_t best_priority = 0;
  for (int t = 0; t < kMaxDeviceTypes; ++t) {
    const detail::DeviceTypeRecord& r = detail::device_record(static_cast<DeviceType>(t));
    if (r.ops == nullptr || r.count <= 0) continue;
    if (best < 0 || r.ops->priority > best_priority) {
      best = t;
      best_priority = r.ops->priority;
    }
  }
  KILN_CHECK(best >= 0, "default_device: no device is available: no device plugin loaded (",
             "searched: run kiln-info to see the plugin folders and why each plugin failed)");
  return Device(static_cast<DeviceType>(best), 0);
}

std::string device_description(Device device) {
  const detail::DeviceTypeRecord& r = detail::require_device(device, "device_description");
  if (r.ops->describe == nullptr) return device.str();
  std::array<char, 256> line{};
  try {
    r.ops->describe(r.self, device.has_index() ? device.index() : 0, line.data(), line.size());
  } catch (...) {  // see Note [Exceptions from plugins] in plugin_loader.cpp
    throw Error(detail::str("device_description(", device.str(), "): the plugin ",
                            detail::plugin_path(r.plugin), " let an exception out of ",
                            "kiln_device_ops::describe (", detail::describe_current_exception(),
                            "); a plugin must not throw across the C boundary"));
  }
  line.back() = '\0';  // a plugin that fills the whole buffer may omit the terminator
  return line.data();
}

}  // namespace kiln
