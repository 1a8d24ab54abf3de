// The host table and the staging of a plugin's registrations: see Note [Staged registrations]
// in plugin_host.h.
#include "plugin_host.h"

#include "data/registry.h"
#include "distributed/registry.h"
#include "runtime.h"

#include <kiln/dispatch.h>
#include <kiln/error.h>

#include <cxxabi.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <utility>

namespace kiln::detail {
namespace {

struct StagedDevice {
  std::string name;
  DeviceType type;
  bool interned;  // this registration interned the name: a discard gives the id back
  const kiln_device_ops* ops;
  void* self;
  int32_t count;
};

struct StagedKernel {
  OperatorBase* op;
  DeviceType type;
  OperatorBase::PluginKernel kernel;
};

struct Host {
  int plugin = -1;
  std::string name, path;
  bool own_folder = false;
  bool open = false;  // init runs: registrations are accepted
  std::vector<StagedDevice> devices;
  std::vector<StagedKernel> kernels;
};

Host& host() {
  static Host* h = new Host();  // leaked: see Note [Plugins stay loaded] in plugin_loader.cpp
  return *h;
}

std::array<DeviceTypeRecord, kMaxDeviceTypes>& records() {
  static auto* r = new std::array<DeviceTypeRecord, kMaxDeviceTypes>();
  return *r;
}

thread_local PluginError t_plugin_error;

const StagedDevice* staged_device(DeviceType type) {
  for (const StagedDevice& d : host().devices) {
    if (d.type == type) return &d;
  }
  return nullptr;
}

// A host function's failure: the message for the plugin's next host->set_error reader.
void fail(const char* what) {
  try {
    throw;
  } catch (const std::exception& e) {
    t_plugin_error = {KILN_ERROR_OTHER, e.what()};
  } catch (...) {
    t_plugin_error = {KILN_ERROR_OTHER, str(what, ": ", describe_current_exception())};
  }
}

// --- the host table ---------------------------------------------------------------------------

void host_set_error_kind(int32_t kind, const char* message) {
  try {
    t_plugin_error = {kind, message ? message : "(null)"};
  } catch (...) {  // no memory for the message: the kind still reaches the caller
    t_plugin_error.kind = kind;
  }
}

void host_set_error(const char* message) { host_set_error_kind(KILN_ERROR_OTHER, message); }

// Communication backends (ABI 1.3): see Note [Staged registrations].
kiln_status host_register_comm_backend(const char* name, const kiln_comm_ops* ops, void* self) {
  try {
    KILN_CHECK(host().open, "register_comm_backend called outside kiln_plugin_init");
    distributed::detail::register_backend(host().plugin, name, ops, self);
    return 0;
  } catch (...) {
    fail("register_comm_backend");
    return 1;
  }
}

void host_log(int32_t level, const char* message) {
  try {
    const Host& h = host();
    std::string who = h.plugin >= 0 ? h.name : "plugin";
    const char* text = message ? message : "(null)";
    if (level >= KILN_LOG_WARN && level < KILN_LOG_ERROR) {
      warn("[" + who + "]: " + text);  // through the thread's kiln::WarningHandler
    } else if (level >= KILN_LOG_WARN || env_flag("KILN_VERBOSE", false)) {
      const char* tag = level >= KILN_LOG_ERROR ? "error" : "info";
      std::cerr << "kiln: " << tag << " [" << who << "]: " << text << "\n";
    }
  } catch (const std::exception& e) {
    // KILN_VERBOSE is malformed, or a warning handler threw: say so, never throw to C.
    std::cerr << "kiln: warning: " << e.what() << "\n";
  }
}

int32_t host_register_device(const char* name, const kiln_device_ops* ops, void* self) {
  Host& h = host();
  try {
    KILN_CHECK(h.open, "register_device called outside kiln_plugin_init");
    KILN_CHECK(name != nullptr && ops != nullptr, "register_device: name and ops are required");
    KILN_CHECK(ops->struct_size >= offsetof(kiln_device_ops, priority) + sizeof(int32_t),
               "register_device('", name, "'): kiln_device_ops.struct_size ", ops->struct_size,
               " is too small");
    KILN_CHECK(ops->count && ops->alloc && ops->free && ops->copy, "register_device('", name,
               "'): count, alloc, free and copy are required");
    int known = find_device_type(name);
    KILN_CHECK(!(known == kCPU || known == kCUDA) || h.own_folder, "register_device('", name,
               "'): the device type '", name, "' is kiln's own, registered only by the plugins ",
               "in kiln's plugin folder; refused from ", h.path, " (name the device type ",
               "differently)");
    if (known >= 0) {
      const DeviceTypeRecord& r = records()[known];
      KILN_CHECK(r.ops == nullptr, "device type '", name, "' is already registered by ",
                 plugin_path(r.plugin), "; refused from ", h.path);
      KILN_CHECK(staged_device(static_cast<DeviceType>(known)) == nullptr, "register_device('",
                 name, "'): registered twice by ", h.path);
    }
    int32_t count = ops->count(self);
    KILN_CHECK(count >= 0 && count <= INT16_MAX, "register_device('", name,
               "'): kiln_device_ops.count returned ", count, " (expected 0 to ", INT16_MAX, ")");
    DeviceType type = device_type_from_name(name);
    h.devices.push_back({name, type, known < 0, ops, self, count});
    return type;
  } catch (...) {
    fail("register_device");
    return -1;
  }
}

kiln_status host_register_kernel(const char* op_name, int32_t device_type, kiln_kernel_fn fn,
                                 void* user) {
  Host& h = host();
  try {
    KILN_CHECK(h.open, "register_kernel called outside kiln_plugin_init");
    KILN_CHECK(op_name != nullptr && fn != nullptr, "register_kernel: op and fn are required");
    KILN_CHECK(device_type >= 0 && device_type < kMaxDeviceTypes, "register_kernel('", op_name,
               "'): device type ", device_type, " is not registered");
    auto type = static_cast<DeviceType>(device_type);
    const DeviceTypeRecord& r = records()[type];
    KILN_CHECK(r.ops == nullptr, "register_kernel('", op_name, "'): device type '",
               device_type_name(type), "' belongs to ", plugin_path(r.plugin), "; a plugin ",
               "registers kernels only for the device types it registered (refused from ", h.path,
               ")");
    KILN_CHECK(staged_device(type) != nullptr, "register_kernel('", op_name, "'): device type ",
               device_type, " is not registered");
    OperatorBase* op = find_operator(op_name);
    KILN_CHECK(op != nullptr, "register_kernel: kiln has no operator '", op_name, "'");
    for (const StagedKernel& k : h.kernels) {
      KILN_CHECK(k.op != op || k.type != type, "register_kernel: operator '", op_name,
                 "' already has a kernel for device '", device_type_name(type), "' from ", h.path,
                 "; refused from ", h.path);
    }
    h.kernels.push_back({op, type, {reinterpret_cast<void*>(fn), user, h.plugin}});
    return 0;
  } catch (...) {
    fail("register_kernel");
    return 1;
  }
}

// Data sources and decoders (ABI 1.1): see Note [Staged registrations].
kiln_status host_register_source(const char* scheme, const kiln_source_ops* ops, void* self) {
  try {
    KILN_CHECK(host().open, "register_source called outside kiln_plugin_init");
    data::detail::register_source(host().plugin, scheme, ops, self);
    return 0;
  } catch (...) {
    fail("register_source");
    return 1;
  }
}

kiln_status host_register_decoder(const char* extension, kiln_decode_fn fn, void* user) {
  try {
    KILN_CHECK(host().open, "register_decoder called outside kiln_plugin_init");
    data::detail::register_decoder(host().plugin, extension, fn, user);
    return 0;
  } catch (...) {
    fail("register_decoder");
    return 1;
  }
}

}  // namespace

const kiln_host& host_table() {
  static const kiln_host table = {
      sizeof(kiln_host),
      KILN_ABI_MAJOR,
      KILN_ABI_MINOR,
      host_register_device,
      host_register_kernel,
      host_set_error,
      host_log,
      host_register_source,
      host_register_decoder,
      host_set_error_kind,
      host_register_comm_backend,
  };
  return table;
}

std::string describe_current_exception() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  std::string type_name = "unknown type";
  if (type != nullptr) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type->name(), nullptr,
                                                                         nullptr, &status),
                                                     std::free);
    type_name = status == 0 && demangled ? demangled.get() : type->name();
  }
  try {
    throw;
  } catch (const std::exception& e) {
    return str(type_name, ": ", e.what());
  } catch (...) {
    return str("an exception of type ", type_name, ", not a std::exception");
  }
}

void set_plugin_error(int32_t kind, const std::string& message) {
  host_set_error_kind(kind, message.c_str());
}

std::string take_plugin_error() { return take_plugin_failure().message; }

PluginError take_plugin_failure() {
  PluginError error = std::move(t_plugin_error);
  t_plugin_error = PluginError();
  return error;
}

void throw_plugin_error(const std::string& where, PluginError error) {
  std::string& message = error.message;
  // the convention of ABI 1.0 and 1.1, kept for the plugins built then: Note [Error kinds]
  const std::pair<const char*, int32_t> prefixes[] = {
      {"IndexError: ", KILN_ERROR_INDEX},
      {"ValueError: ", KILN_ERROR_VALUE},
      {"TypeError: ", KILN_ERROR_TYPE},
      {"NotImplementedError: ", KILN_ERROR_NOT_IMPLEMENTED},
  };
  for (const auto& [prefix, kind] : prefixes) {
    if (message.rfind(prefix, 0) == 0) {
      message.erase(0, std::strlen(prefix));
      error.kind = kind;
      break;
    }
  }
  if (message.empty()) message = "the plugin reported a failure without a message";
  std::string text = where + message;
  switch (error.kind) {
    case KILN_ERROR_OTHER: throw Error(text);
    case KILN_ERROR_VALUE: throw ValueError(text);
    case KILN_ERROR_INDEX: throw IndexError(text);
    case KILN_ERROR_TYPE: throw TypeError(text);
    case KILN_ERROR_NOT_IMPLEMENTED: throw NotImplementedError(text);
    case KILN_ERROR_OUT_OF_MEMORY: throw OutOfMemoryError(text);
    default:
      throw Error(str(text, " (the plugin reported error kind ", error.kind, ", which this kiln ",
                      "does not know: kiln_error_kind in kiln/sdk/plugin.h lists the kinds)"));
  }
}

DeviceTypeRecord& device_record(DeviceType type) { return records()[type]; }

std::string registered_device_types() {
  std::string out;
  for (int t = 0; t < kMaxDeviceTypes; ++t) {
    if (records()[t].ops == nullptr) continue;
    if (!out.empty()) out += ", ";
    out += device_type_name(static_cast<DeviceType>(t));
  }
  return out.empty() ? "none" : out;
}

void set_current_plugin(int index, const std::string& name, const std::string& path,
                        bool own_folder) {
  Host& h = host();
  h.plugin = index;
  h.name = name;
  h.path = path;
  h.own_folder = own_folder;
}

void open_registrations() { host().open = true; }
void close_registrations() { host().open = false; }

std::vector<std::string> commit_registrations() {
  Host& h = host();
  std::vector<std::string> names;
  for (const StagedDevice& d : h.devices) {
    DeviceTypeRecord& r = records()[d.type];
    r.ops = d.ops;
    r.self = d.self;
    r.plugin = h.plugin;
    r.count = d.count;
    names.push_back(d.name);
  }
  for (const StagedKernel& k : h.kernels) k.op->set_plugin_kernel(k.type, k.kernel);
  h.devices.clear();
  h.kernels.clear();
  return names;
}

std::vector<std::string> discard_registrations() {
  Host& h = host();
  std::vector<std::string> names;
  for (const StagedDevice& d : h.devices) {
    names.push_back(d.name);
    if (d.interned) release_device_type(d.type);
  }
  h.devices.clear();
  h.kernels.clear();
  if (h.plugin >= 0) data::detail::unregister_plugin(h.plugin);
  if (h.plugin >= 0) distributed::detail::unregister_plugin(h.plugin);
  return names;
}

void unregister_plugin(int index) {
  data::detail::unregister_plugin(index);
  distributed::detail::unregister_plugin(index);
  for (OperatorBase* op : all_operators()) {
    for (int t = 0; t < kMaxDeviceTypes; ++t) {
      auto type = static_cast<DeviceType>(t);
      if (op->plugin_kernel(type).plugin == index) op->set_plugin_kernel(type, {});
    }
  }
  for (DeviceTypeRecord& r : records()) {
    if (r.plugin == index) {
      r.ops = nullptr;
      r.self = nullptr;
      r.plugin = -1;
      r.count = 0;
    }
  }
}

}  // namespace kiln::detail
