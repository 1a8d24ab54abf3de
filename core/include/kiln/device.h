// Devices. A device is {type, index}; device types are registered by plugins at run time by name
// ("cpu", "cuda", "mydev"), so core knows none of them. `Device("cuda:1")` parses any name; using a
// type that no loaded plugin registered raises an error that says which plugins were found.
#pragma once

#include <kiln/export.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// Interned device type names. "cpu" is always 0 and "cuda" 1 so that kCPU/kCUDA are constants;
// only the plugins of kiln's own plugin folder may register these two names. At most
// kMaxDeviceTypes names are interned at once (autocast keeps one bit per type in 32 bits); the
// name a refused plugin interned is given back.
using DeviceType = int8_t;
constexpr int kMaxDeviceTypes = 32;
constexpr DeviceType kCPU = 0;
constexpr DeviceType kCUDA = 1;

// The id of a device type name, interning it when new. Throws when the table is full.
KILN_API DeviceType device_type_from_name(std::string_view name);
KILN_API const std::string& device_type_name(DeviceType type);

class KILN_API Device {
 public:
  // kiln::Device(kiln::kCPU) or Device(kCUDA, 1).
  constexpr Device(DeviceType type, int16_t index = -1) : type_(type), index_(index) {}  // NOLINT
  // Parses "cpu", "cuda:1", "mydev:0". Throws ValueError on a malformed string.
  Device(const std::string& text);  // NOLINT: implicit like libtorch's Device("cuda:1")
  Device(const char* text) : Device(std::string(text)) {}  // NOLINT

  constexpr DeviceType type() const { return type_; }
  // -1 means "the current device of this type" (index 0 for now).
  constexpr int16_t index() const { return index_; }
  constexpr bool has_index() const { return index_ >= 0; }
  constexpr bool is_cpu() const { return type_ == kCPU; }
  constexpr bool is_cuda() const { return type_ == kCUDA; }
  std::string str() const;

  // Equality compares types and indices after resolving -1 to 0.
  constexpr bool operator==(const Device& other) const {
    return type_ == other.type_ &&
           (index_ < 0 ? 0 : index_) == (other.index_ < 0 ? 0 : other.index_);
  }

 private:
  DeviceType type_;
  int16_t index_;
};

KILN_API std::ostream& operator<<(std::ostream& out, const Device& device);

// Every device of every loaded device plugin, in registration order ("cpu" first when present).
KILN_API std::vector<Device> devices();
// Whether a plugin registered this type and it has at least one device.
KILN_API bool is_available(DeviceType type);
// KILN_DEVICE when set (and valid); otherwise the available device type with the highest
// plugin priority (a GPU when a GPU plugin found one), index 0.
KILN_API Device default_device();
// One line about a device from its plugin (kiln_device_ops::describe: model, memory, ...), or
// its name when the plugin gives none. Throws when no loaded plugin provides the device.
KILN_API std::string device_description(Device device);

}  // namespace kiln
