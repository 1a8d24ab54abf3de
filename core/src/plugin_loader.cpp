// The plugin loader: finds plugin files, checks their ABI, probes and initialises them, and
// serves the host table (kiln_host) through which they register devices and kernels.
//
// Note [Plugins stay loaded]: a plugin stays loaded for the process's life unless a program asks
// for unload_plugin(), which refuses while anything of the plugin's devices lives (storages are
// counted per device type) and for data-source plugins (datasets keep their ops). Static objects
// and operator tables point into loaded plugins, and destruction order at exit is not ordered
// against them (ggml leaks its handles for the same reason): the loader's own objects are
// deliberately leaked, and nothing is unloaded at exit.
#include "block_cache.h"
#include "runtime.h"
#include "amp/policy.h"
#include "data/registry.h"

#include <kiln/dispatch.h>
#include <kiln/error.h>
#include <kiln/plugin.h>

#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>

namespace kiln {
namespace detail {
namespace {

namespace fs = std::filesystem;

struct LoadedPlugin {
  PluginInfo info;
  boost::dll::shared_library library;
};

struct Loader {
  std::recursive_mutex mutex;
  std::vector<LoadedPlugin*> plugins;  // leaked: see Note [Plugins stay loaded]
  std::vector<std::string> extra_paths;
  int registering = -1;       // the plugin whose probe/init is running
  bool initialising = false;  // its kiln_plugin_init is running: only then may it register
  std::once_flag once;
};

Loader& loader() {
  static Loader* l = new Loader();
  return *l;
}

std::array<DeviceTypeRecord, kMaxDeviceTypes>& records() {
  static auto* r = new std::array<DeviceTypeRecord, kMaxDeviceTypes>();
  return *r;
}

thread_local std::string t_plugin_error;

// --- the host table ---------------------------------------------------------------------------

void host_set_error(const char* message) { t_plugin_error = message ? message : "(null)"; }

void host_log(int32_t level, const char* message) {
  Loader& l = loader();
  std::string who = l.registering >= 0 ? l.plugins[l.registering]->info.name : "plugin";
  if (level >= KILN_LOG_WARN || std::getenv("KILN_VERBOSE") != nullptr) {
    const char* tag = level >= KILN_LOG_ERROR ? "error" : (level >= KILN_LOG_WARN ? "warning" : "info");
    std::cerr << "kiln: " << tag << " [" << who << "]: " << message << "\n";
  }
}

int32_t host_register_device(const char* name, const kiln_device_ops* ops, void* self) {
  Loader& l = loader();
  try {
    KILN_CHECK(l.initialising, "register_device called outside kiln_plugin_init");
    KILN_CHECK(name != nullptr && ops != nullptr, "register_device: name and ops are required");
    KILN_CHECK(ops->struct_size >= offsetof(kiln_device_ops, priority) + sizeof(int32_t),
               "register_device('", name, "'): kiln_device_ops.struct_size ", ops->struct_size,
               " is too small");
    KILN_CHECK(ops->count && ops->alloc && ops->free && ops->copy, "register_device('", name,
               "'): count, alloc, free and copy are required");
    DeviceType type = device_type_from_name(name);
    DeviceTypeRecord& r = records()[type];
    KILN_CHECK(r.ops == nullptr, "device type '", name, "' is already registered by ",
               plugin_path(r.plugin), "; refused from ", l.plugins[l.registering]->info.path);
    int32_t count = ops->count(self);
    r.ops = ops;
    r.self = self;
    r.plugin = l.registering;
    r.count = count < 0 ? 0 : count;
    l.plugins[l.registering]->info.devices.push_back(name);
    return type;
  } catch (const std::exception& e) {
    t_plugin_error = e.what();
    return -1;
  }
}

kiln_status host_register_kernel(const char* op_name, int32_t device_type, kiln_kernel_fn fn,
                                 void* user) {
  Loader& l = loader();
  try {
    KILN_CHECK(l.initialising, "register_kernel called outside kiln_plugin_init");
    KILN_CHECK(op_name != nullptr && fn != nullptr, "register_kernel: op and fn are required");
    KILN_CHECK(device_type >= 0 && device_type < kMaxDeviceTypes &&
                   records()[device_type].ops != nullptr,
               "register_kernel('", op_name, "'): device type ", device_type,
               " is not registered");
    auto type = static_cast<DeviceType>(device_type);
    KILN_CHECK(records()[type].plugin == l.registering, "register_kernel('", op_name,
               "'): device type '", device_type_name(type), "' belongs to ",
               plugin_path(records()[type].plugin), "; a plugin registers kernels only for the ",
               "device types it registered (refused from ", l.plugins[l.registering]->info.path,
               ")");
    OperatorBase* op = find_operator(op_name);
    KILN_CHECK(op != nullptr, "register_kernel: kiln has no operator '", op_name, "'");
    KILN_CHECK(!op->has_plugin_kernel(type), "register_kernel: operator '", op_name,
               "' already has a kernel for device '", device_type_name(type), "' from ",
               plugin_path(op->plugin_kernel(type).plugin), "; refused from ",
               l.plugins[l.registering]->info.path);
    op->set_plugin_kernel(type, {reinterpret_cast<void*>(fn), user, l.registering});
    return 0;
  } catch (const std::exception& e) {
    t_plugin_error = e.what();
    return 1;
  }
}

// Data sources and decoders (ABI 1.1): the registry lives in data/registry.cpp.
kiln_status host_register_source(const char* scheme, const kiln_source_ops* ops, void* self) {
  try {
    KILN_CHECK(loader().initialising, "register_source called outside kiln_plugin_init");
    data::detail::register_source(loader().registering, scheme, ops, self);
    return 0;
  } catch (const std::exception& e) {
    t_plugin_error = e.what();
    return 1;
  }
}

kiln_status host_register_decoder(const char* extension, kiln_decode_fn fn, void* user) {
  try {
    KILN_CHECK(loader().initialising, "register_decoder called outside kiln_plugin_init");
    data::detail::register_decoder(loader().registering, extension, fn, user);
    return 0;
  } catch (const std::exception& e) {
    t_plugin_error = e.what();
    return 1;
  }
}

const kiln_host& host_table() {
  static const kiln_host table = {
      sizeof(kiln_host), KILN_ABI_MAJOR,       KILN_ABI_MINOR, host_register_device,
      host_register_kernel, host_set_error, host_log, host_register_source,
      host_register_decoder,
  };
  return table;
}

// Removes everything plugin `index` registered (its init failed).
void unregister_plugin(int index) {
  data::detail::unregister_plugin(index);
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
      std::lock_guard<std::mutex> lock(r.warned_mutex);
      r.warned_ops.clear();  // a plugin loaded again warns again
    }
  }
}

std::string abi_text(int major, int minor) { return str(major, ".", minor); }

// Checks the ABI, probes and initialises an opened library; fills info.state and info.reason.
void start_plugin(LoadedPlugin& p, int index) {
  PluginInfo& info = p.info;
  using QueryFn = const kiln_plugin_info*();
  using ProbeFn = int32_t(const kiln_host*);
  using InitFn = kiln_status(const kiln_host*);
  if (!p.library.has("kiln_plugin_query") || !p.library.has("kiln_plugin_probe") ||
      !p.library.has("kiln_plugin_init")) {
    info.state = PluginState::LoadFailed;
    info.reason = "not a kiln plugin: it does not export kiln_plugin_query, kiln_plugin_probe "
                  "and kiln_plugin_init (build it with the SDK's kiln_add_plugin)";
    return;
  }
  const kiln_plugin_info* q = p.library.get<QueryFn>("kiln_plugin_query")();
  // ABI 1.0's kiln_plugin_info ends with `summary`; later minors may append fields.
  if (q == nullptr || q->struct_size < offsetof(kiln_plugin_info, summary) + sizeof(q->summary)) {
    info.state = PluginState::Refused;
    info.reason = "kiln_plugin_query returned no valid kiln_plugin_info";
    return;
  }
  info.name = q->name ? q->name : "";
  info.version = q->version ? q->version : "";
  info.summary = q->summary ? q->summary : "";
  info.abi_major = q->abi_major;
  info.abi_minor = q->abi_minor;
  std::string core_abi = abi_text(KILN_ABI_MAJOR, KILN_ABI_MINOR);
  std::string plugin_abi = abi_text(q->abi_major, q->abi_minor);
  if (q->abi_major != KILN_ABI_MAJOR) {
    info.state = PluginState::Refused;
    info.reason = str("built for kiln plugin ABI ", plugin_abi, ", but this core has ABI ",
                      core_abi, " (major versions differ): rebuild the plugin against this ",
                      "kiln's SDK");
    return;
  }
  if (q->abi_minor > KILN_ABI_MINOR) {
    info.state = PluginState::Refused;
    info.reason = str("built for kiln plugin ABI ", plugin_abi, ", newer than this core's ABI ",
                      core_abi, ": upgrade kiln, or rebuild the plugin against this kiln's SDK");
    return;
  }
  for (int i = 0; i < index; ++i) {
    const PluginInfo& other = loader().plugins[i]->info;
    if (other.state == PluginState::Loaded && other.name == info.name) {
      info.state = PluginState::Refused;
      info.reason = str("a plugin named '", info.name, "' is already loaded from ", other.path);
      return;
    }
  }
  t_plugin_error.clear();
  if (p.library.get<ProbeFn>("kiln_plugin_probe")(&host_table()) == 0) {
    info.state = PluginState::NotAvailable;
    info.reason = t_plugin_error.empty() ? "its probe says it cannot run on this machine"
                                         : take_plugin_error();
    return;
  }
  t_plugin_error.clear();
  loader().initialising = true;
  kiln_status status = p.library.get<InitFn>("kiln_plugin_init")(&host_table());
  loader().initialising = false;
  if (status != 0) {
    unregister_plugin(index);
    info.devices.clear();
    info.state = PluginState::Refused;
    info.reason = str("registration failed: ", t_plugin_error.empty() ? "(no message)"
                                                                       : take_plugin_error());
    return;
  }
  info.state = PluginState::Loaded;
}

// The folder of libkiln_core.so itself.
fs::path core_library_dir() {
  Dl_info dl{};
  if (dladdr(reinterpret_cast<void*>(&core_library_dir), &dl) == 0 || dl.dli_fname == nullptr) {
    return {};
  }
  return fs::weakly_canonical(fs::path(dl.dli_fname)).parent_path();
}

std::vector<std::string> split_path_list(const char* text) {
  std::vector<std::string> out;
  if (text == nullptr) return out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

DeviceTypeRecord& device_record(DeviceType type) { return records()[type]; }

std::string plugin_path(int plugin) {
  Loader& l = loader();
  if (plugin < 0 || plugin >= static_cast<int>(l.plugins.size())) return "";
  return l.plugins[plugin]->info.path;
}

std::string registered_device_types() {
  std::string out;
  for (int t = 0; t < kMaxDeviceTypes; ++t) {
    if (records()[t].ops == nullptr) continue;
    if (!out.empty()) out += ", ";
    out += device_type_name(static_cast<DeviceType>(t));
  }
  return out.empty() ? "none" : out;
}

std::string take_plugin_error() {
  std::string message = std::move(t_plugin_error);
  t_plugin_error.clear();
  return message;
}

void warn(const std::string& message) { std::cerr << "kiln: warning: " << message << "\n"; }

void ensure_plugins_loaded() {
  Loader& l = loader();
  std::call_once(l.once, [] {
    // Note [OpenMP spin]: oneDNN (in the CPU plugin) runs on GNU OpenMP, whose idle threads
    // spin after every call and take the second core from TBB loops (2x slower on 2 cores,
    // measured in shared/reference/toolchain-notes.md). libgomp reads its settings when it is
    // loaded, which is when the first plugin that needs it loads, so the default is set here,
    // before any plugin: a short spin that keeps back-to-back matmuls fast. A value the user
    // set wins.
    if (std::getenv("OMP_WAIT_POLICY") == nullptr) setenv("GOMP_SPINCOUNT", "10000", 0);
#ifdef KILN_SANITIZE_THREAD
    // ThreadSanitizer sees no synchronization inside the uninstrumented libgomp: one thread.
    setenv("OMP_NUM_THREADS", "1", 0);
#endif
    // The Autocast layer's kernels go into the operator tables here, before any tensor exists:
    // every thread that dispatches has made or received a tensor, so it sees the tables
    // complete, and no thread reads a table while another writes it.
    amp::detail::install_autocast_layer();
    for (const std::string& dir : plugin_search_path()) {
      std::error_code ec;
      fs::path p(dir);
      if (fs::is_regular_file(p, ec)) {
        load_plugin(p.string());
        continue;
      }
      if (!fs::is_directory(p, ec)) continue;
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        if (entry.is_regular_file(ec) && entry.path().extension() == ".so") {
          files.push_back(entry.path());
        }
      }
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) load_plugin(f.string());
    }
  });
}

DeviceTypeRecord& require_device(Device device, const char* what) {
  ensure_plugins_loaded();
  DeviceTypeRecord& r = records()[device.type()];
  KILN_CHECK(r.ops != nullptr, what, ": device type '", device_type_name(device.type()),
             "' is not provided by any loaded plugin (device types available: ",
             registered_device_types(), "); run kiln-info to see each plugin and why it did or ",
             "did not load");
  int index = device.has_index() ? device.index() : 0;
  KILN_CHECK(index < r.count, what, ": device ", device.str(), " does not exist: the ",
             device_type_name(device.type()), " plugin found ", r.count, " device",
             r.count == 1 ? "" : "s");
  return r;
}

}  // namespace detail

const char* plugin_state_name(PluginState state) {
  switch (state) {
    case PluginState::Loaded: return "loaded";
    case PluginState::NotAvailable: return "not available";
    case PluginState::Refused: return "refused";
    case PluginState::LoadFailed: return "load failed";
    case PluginState::Unloaded: return "unloaded";
  }
  return "unknown";
}

void add_plugin_path(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(detail::loader().mutex);
  detail::loader().extra_paths.push_back(path);
}

void load_plugins() { detail::ensure_plugins_loaded(); }

std::vector<std::string> plugin_search_path() {
  std::vector<std::string> out = detail::loader().extra_paths;
  for (const std::string& p : detail::split_path_list(std::getenv("KILN_PLUGIN_PATH"))) {
    out.push_back(p);
  }
  detail::fs::path core_dir = detail::core_library_dir();
  if (!core_dir.empty()) out.push_back((core_dir / "kiln" / "plugins").string());
  return out;
}

PluginInfo load_plugin(const std::string& path) {
  detail::Loader& l = detail::loader();
  std::lock_guard<std::recursive_mutex> lock(l.mutex);
  std::error_code ec;
  std::string canonical = detail::fs::weakly_canonical(path, ec).string();
  if (ec) canonical = path;
  detail::LoadedPlugin* plugin = nullptr;
  int index = -1;
  for (size_t i = 0; i < l.plugins.size(); ++i) {
    if (l.plugins[i]->info.path != canonical) continue;
    if (l.plugins[i]->info.state != PluginState::Unloaded) return l.plugins[i]->info;
    plugin = l.plugins[i];  // unloaded: load it again under the same index
    index = static_cast<int>(i);
    plugin->info = PluginInfo();
    plugin->info.path = canonical;
  }
  if (plugin == nullptr) {
    plugin = new detail::LoadedPlugin();  // leaked: see Note [Plugins stay loaded]
    plugin->info.path = canonical;
    index = static_cast<int>(l.plugins.size());
    l.plugins.push_back(plugin);
  }
  std::error_code load_error;
  plugin->library.load(canonical, load_error,
                       boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (load_error) {
    plugin->info.state = PluginState::LoadFailed;
    const char* dl = dlerror();
    std::string why = dl ? dl : load_error.message();
    if (!detail::fs::exists(canonical)) {
      why = "no such file";
    } else if (why.find("cannot open shared object file") != std::string::npos) {
      why += " (a library the plugin needs is missing: install it, or add its folder to "
             "LD_LIBRARY_PATH)";
    }
    plugin->info.reason = "cannot load: " + why;
    return plugin->info;
  }
  l.registering = index;
  try {
    detail::start_plugin(*plugin, index);
  } catch (const std::exception& e) {
    l.initialising = false;
    detail::unregister_plugin(index);
    plugin->info.devices.clear();
    plugin->info.state = PluginState::Refused;
    plugin->info.reason = detail::str("it let a C++ exception cross the C boundary (a plugin ",
                                      "must return an error instead): ", e.what());
  }
  l.registering = -1;
  return plugin->info;
}

void unload_plugin(const std::string& path) {
  detail::Loader& l = detail::loader();
  std::lock_guard<std::recursive_mutex> lock(l.mutex);
  std::error_code ec;
  std::string canonical = detail::fs::weakly_canonical(path, ec).string();
  if (ec) canonical = path;
  int index = -1;
  for (size_t i = 0; i < l.plugins.size(); ++i) {
    if (l.plugins[i]->info.path == canonical) index = static_cast<int>(i);
  }
  KILN_CHECK(index >= 0, "unload_plugin: '", path, "' was never loaded");
  detail::LoadedPlugin& p = *l.plugins[index];
  KILN_CHECK(p.info.state == PluginState::Loaded, "unload_plugin: '", canonical,
             "' is not loaded (its state: ", plugin_state_name(p.info.state), ")");
  for (int t = 0; t < kMaxDeviceTypes; ++t) {
    detail::DeviceTypeRecord& r = detail::records()[t];
    if (r.plugin != index) continue;
    int64_t live = r.live_storages.load();
    KILN_CHECK(live == 0, "unload_plugin: refused for ", canonical, ": ", live, " storage",
               live == 1 ? " is" : "s are", " still alive on its device '",
               device_type_name(static_cast<DeviceType>(t)), "' (tensors, their views, ",
               "gradients, optimizer state or saved autograd graphs); free them first");
  }
  for (const data::detail::SourceEntry& e : data::detail::all_sources()) {
    KILN_CHECK(e.plugin != index, "unload_plugin: refused for ", canonical, ": it registered ",
               "the data source '", e.scheme, "'; data-source plugins stay loaded");
  }
  for (const data::detail::DecoderEntry& e : data::detail::all_decoders()) {
    KILN_CHECK(e.plugin != index, "unload_plugin: refused for ", canonical, ": it registered ",
               "the decoder of '.", e.extension, "'; decoder plugins stay loaded");
  }
  // the block cache keeps large blocks of dead storages: they go back to the plugin first
  for (int t = 0; t < kMaxDeviceTypes; ++t) {
    if (detail::records()[t].plugin == index) {
      detail::release_cached_blocks(static_cast<DeviceType>(t));
    }
  }
  detail::unregister_plugin(index);
  p.library.unload();
  p.info.state = PluginState::Unloaded;
  p.info.reason = "unloaded by unload_plugin()";
  p.info.devices.clear();
}

std::vector<PluginInfo> plugins() {
  std::lock_guard<std::recursive_mutex> lock(detail::loader().mutex);
  std::vector<PluginInfo> out;
  for (const detail::LoadedPlugin* p : detail::loader().plugins) out.push_back(p->info);
  return out;
}

int core_abi_major() { return KILN_ABI_MAJOR; }
int core_abi_minor() { return KILN_ABI_MINOR; }

}  // namespace kiln
