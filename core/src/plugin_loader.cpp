// The plugin loader: finds plugin files, opens them, checks their ABI, probes and initialises
// them (the host table they register through is plugin_host.cpp), unloads them on request, and
// says which plugin provides a device type or why none does. When it runs first is
// runtime_start.cpp's business (Note [Runtime start-up]).
//
// Note [Plugins stay loaded]: a plugin stays loaded for the process's life unless a program asks
// for unload_plugin(), which refuses while anything of the plugin's devices lives (storages are
// counted per device type) and for data-source plugins (datasets keep their ops). Static objects
// and operator tables point into loaded plugins, and destruction order at exit is not ordered
// against them (ggml leaks its handles for the same reason): the loader's own objects are
// deliberately leaked, and nothing is unloaded at exit.
#include "block_cache.h"
#include "data/registry.h"
#include "distributed/registry.h"
#include "elf_arch.h"
#include "plugin_host.h"
#include "runtime.h"

#include <kiln/dispatch.h>
#include <kiln/error.h>
#include <kiln/plugin.h>

#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

namespace kiln {
namespace detail {
namespace {

namespace fs = std::filesystem;

struct LoadedPlugin {
  PluginInfo info;
  boost::dll::shared_library library;
  std::vector<std::string> refused_devices;  // the device types a refused plugin tried to add
};

struct Loader {
  std::recursive_mutex mutex;
  std::vector<LoadedPlugin*> plugins;  // leaked: see Note [Plugins stay loaded]
  std::vector<std::string> extra_paths;
};

Loader& loader() {
  static Loader* l = new Loader();
  return *l;
}

// Note [Exceptions from plugins]: a plugin must not throw across the C boundary, but one that
// does must not take the process down or leave anything registered, so query, probe and init
// run under catch (...) (load_plugin), and so do the host functions they call (plugin_host.cpp).
// A static constructor that throws while dlopen runs it is another matter: the exception may
// come out of dlopen, and is then caught like the others (the library stays mapped, unused),
// but the unwinder may also fail to pass the dynamic linker's frames and call std::terminate
// (measured on Debian 12 with a plain program calling dlopen; kiln's own tools have seen both).
// So while dlopen runs, a terminate handler names the file and the exception before the process
// stops, where it would otherwise stop without naming either.
struct Opening {
  std::mutex mutex;
  std::thread::id thread;
  std::string file;
  std::terminate_handler previous = nullptr;
};

Opening& opening() {
  static Opening* o = new Opening();  // leaked: read by a terminate handler
  return *o;
}

[[noreturn]] void on_terminate_while_opening() {
  Opening& o = opening();
  if (std::this_thread::get_id() == o.thread && std::current_exception()) {
    std::cerr << "kiln: fatal: a static constructor of the plugin file " << o.file
              << " threw while the library was being opened (" << describe_current_exception()
              << "); dlopen cannot pass an exception on, so "
              << "the process stops. Fix the plugin's static constructors, or remove the file "
              << "from the plugin folders (kiln-info lists them)" << std::endl;
  }
  if (o.previous != nullptr) o.previous();
  std::abort();
}

class OpeningGuard {
 public:
  explicit OpeningGuard(const std::string& file) {
    Opening& o = opening();
    std::lock_guard<std::mutex> lock(o.mutex);
    o.thread = std::this_thread::get_id();
    o.file = file;
    o.previous = std::set_terminate(on_terminate_while_opening);
  }
  ~OpeningGuard() {
    Opening& o = opening();
    std::lock_guard<std::mutex> lock(o.mutex);
    std::set_terminate(o.previous);
    o.thread = {};
  }
  OpeningGuard(const OpeningGuard&) = delete;
  OpeningGuard& operator=(const OpeningGuard&) = delete;
};

// Refuses a plugin whose init failed, rolling back what it registered (Note [Staged
// registrations] in plugin_host.h).
void refuse(LoadedPlugin& p, std::string reason) {
  close_registrations();
  p.refused_devices = discard_registrations();
  p.info.devices.clear();
  p.info.state = PluginState::Refused;
  p.info.reason = std::move(reason);
}

std::string abi_text(int major, int minor) { return str(major, ".", minor); }

// Checks the ABI, probes and initialises an opened library; fills info.state and info.reason.
// Exceptions from the plugin's functions reach load_plugin.
void start_plugin(LoadedPlugin& p, int index, bool own_folder) {
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
  set_current_plugin(index, info.name, info.path, own_folder);
  take_plugin_error();
  if (p.library.get<ProbeFn>("kiln_plugin_probe")(&host_table()) == 0) {
    info.state = PluginState::NotAvailable;
    std::string why = take_plugin_error();
    info.reason = why.empty() ? "its probe says it cannot run on this machine" : why;
    return;
  }
  take_plugin_error();
  open_registrations();
  kiln_status status = p.library.get<InitFn>("kiln_plugin_init")(&host_table());
  close_registrations();
  if (status != 0) {
    std::string why = take_plugin_error();
    refuse(p, str("registration failed: ", why.empty() ? "(no message)" : why));
    return;
  }
  info.devices = commit_registrations();
  info.state = PluginState::Loaded;
}

// The file of libkiln_core.so itself, and its folder.
std::string core_library() {
  Dl_info dl{};
  if (dladdr(reinterpret_cast<void*>(&core_library), &dl) == 0 || dl.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  return fs::weakly_canonical(fs::path(dl.dli_fname), ec).string();
}

fs::path core_library_dir() {
  std::string file = core_library();
  return file.empty() ? fs::path() : fs::path(file).parent_path();
}

// Whether `file` is in kiln's own plugin folder, whose plugins may register "cpu" and "cuda".
bool in_own_folder(const std::string& file) {
  fs::path own = core_library_dir();
  return !own.empty() && fs::path(file).parent_path() == own / "kiln" / "plugins";
}

// For "device type 'cuda' is not provided by any loaded plugin": the plugin that would provide
// `type` and why it did not (a device plugin is named after its device type, as "cuda" in
// kiln_cuda.so; a refused plugin may have tried to register it), or where to look.
std::string why_not_provided(const std::string& type) {
  for (const LoadedPlugin* p : loader().plugins) {
    const PluginInfo& info = p->info;
    if (info.state == PluginState::Loaded) continue;
    std::string stem = fs::path(info.path).stem().string();
    bool named = info.name == type || stem == type || stem == "kiln_" + type;
    bool tried = std::find(p->refused_devices.begin(), p->refused_devices.end(), type) !=
                 p->refused_devices.end();
    if (!named && !tried) continue;
    std::string who = info.name.empty() ? "" : "'" + info.name + "' ";
    if (info.state == PluginState::NotAvailable) {
      return str("the plugin ", who, "(", info.path, ") that provides it found no usable ",
                 "device here: ", info.reason);
    }
    return str("the plugin ", who, "(", info.path, ") that provides it is ",
               plugin_state_name(info.state), ": ", info.reason);
  }
  return "run kiln-info to see each plugin and why it did or did not load";
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

std::string plugin_path(int plugin) {
  Loader& l = loader();
  if (plugin < 0 || plugin >= static_cast<int>(l.plugins.size())) return "";
  return l.plugins[plugin]->info.path;
}

void load_search_path_plugins() {
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
}

DeviceTypeRecord& require_device(Device device, const char* what) {
  ensure_runtime_started();
  DeviceTypeRecord& r = device_record(device.type());
  const std::string& type = device_type_name(device.type());
  KILN_CHECK(r.ops != nullptr, what, ": device type '", type, "' is not provided by any loaded ",
             "plugin (device types available: ", registered_device_types(), "); ",
             why_not_provided(type));
  int index = device.has_index() ? device.index() : 0;
  KILN_CHECK(index < r.count, what, ": device ", device.str(), " does not exist: the ", type,
             " plugin (", plugin_path(r.plugin), ") found ", r.count, " device",
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
  try {
    detail::OpeningGuard opening(canonical);  // see Note [Exceptions from plugins]
    plugin->library.load(canonical, load_error,
                         boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (...) {
    plugin->info.state = PluginState::LoadFailed;
    plugin->info.reason = detail::str(
        "cannot load: a static constructor of the library threw while it was being opened (",
        detail::describe_current_exception(), "); the library stays mapped but unused: fix its ",
        "static constructors, or move the file out of the plugin folders");
    return plugin->info;
  }
  if (load_error) {
    plugin->info.state = PluginState::LoadFailed;
    const char* dl = dlerror();
    std::string why = dl ? dl : load_error.message();
    std::string other_arch = detail::architecture_mismatch(canonical, detail::core_library());
    if (!detail::fs::exists(canonical)) {
      why = "no such file";
    } else if (!other_arch.empty()) {
      why = other_arch + " (the loader said: " + why + ")";
    } else if (why.find("cannot open shared object file") != std::string::npos) {
      why += " (a library the plugin needs is missing: install it, or add its folder to "
             "LD_LIBRARY_PATH)";
    }
    plugin->info.reason = "cannot load: " + why;
    return plugin->info;
  }
  detail::set_current_plugin(index, "", canonical, detail::in_own_folder(canonical));
  try {
    detail::start_plugin(*plugin, index, detail::in_own_folder(canonical));
  } catch (...) {
    detail::refuse(*plugin, detail::str("it let a C++ exception cross the C boundary (",
                                        detail::describe_current_exception(),
                                        "); a plugin must return an error instead"));
  }
  detail::set_current_plugin(-1, "", "", false);
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
    detail::DeviceTypeRecord& r = detail::device_record(static_cast<DeviceType>(t));
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
  for (const distributed::detail::BackendEntry& e : distributed::detail::all_backends()) {
    KILN_CHECK(e.plugin != index, "unload_plugin: refused for ", canonical, ": it registered ",
               "the communication backend '", e.name, "'; backend plugins stay loaded");
  }
  // the block cache keeps large blocks of dead storages: they go back to the plugin first
  for (int t = 0; t < kMaxDeviceTypes; ++t) {
    if (detail::device_record(static_cast<DeviceType>(t)).plugin == index) {
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
