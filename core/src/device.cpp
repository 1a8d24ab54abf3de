#include "runtime.h"

#include <kiln/device.h>
#include <kiln/error.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <mutex>

namespace kiln {
namespace {

struct TypeNames {
  std::mutex mutex;
  std::array<std::string, kMaxDeviceTypes> names;
  std::atomic<int> count{0};
  TypeNames() {
    names[kCPU] = "cpu";
    names[kCUDA] = "cuda";
    count = 2;
  }
};

TypeNames& type_names() {
  static TypeNames* names = new TypeNames();  // never destroyed: used until process exit
  return *names;
}

bool valid_type_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '_')) {
      return false;
    }
  }
  return std::islower(static_cast<unsigned char>(name[0]));
}

}  // namespace

DeviceType device_type_from_name(std::string_view name) {
  TypeNames& t = type_names();
  int n = t.count.load();
  for (int i = 0; i < n; ++i) {
    if (t.names[i] == name) return static_cast<DeviceType>(i);
  }
  KILN_CHECK_VALUE(valid_type_name(name), "Device: invalid device type '", name,
                   "' (expected lower-case letters, digits and '_', as 'cuda' or 'mydev')");
  std::lock_guard<std::mutex> lock(t.mutex);
  n = t.count.load();
  for (int i = 0; i < n; ++i) {
    if (t.names[i] == name) return static_cast<DeviceType>(i);
  }
  KILN_CHECK(n < kMaxDeviceTypes, "Device: too many device types (", kMaxDeviceTypes,
             " at most); cannot add '", name, "'");
  t.names[n] = std::string(name);
  t.count.store(n + 1);
  return static_cast<DeviceType>(n);
}

const std::string& device_type_name(DeviceType type) {
  KILN_CHECK_VALUE(type >= 0 && type < type_names().count.load(), "Device: unknown device type id ",
                   static_cast<int>(type));
  return type_names().names[type];
}

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
  detail::ensure_plugins_loaded();
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
  detail::ensure_plugins_loaded();
  const detail::DeviceTypeRecord& r = detail::device_record(type);
  return r.ops != nullptr && r.count > 0;
}

Device default_device() {
  detail::ensure_plugins_loaded();
  if (const char* env = std::getenv("KILN_DEVICE"); env != nullptr && *env != '\0') {
    Device d(env);
    detail::require_device(d, "KILN_DEVICE");
    return Device(d.type(), d.has_index() ? d.index() : 0);
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
  r.ops->describe(r.self, device.has_index() ? device.index() : 0, line.data(), line.size());
  line.back() = '\0';  // a plugin that fills the whole buffer may omit the terminator
  return line.data();
}

}  // namespace kiln
