#include "registry.h"

#include "../runtime.h"

#include <kiln/error.h>

#include <algorithm>
#include <deque>
#include <mutex>

namespace kiln::distributed::detail {
namespace {

struct Registry {
  std::mutex mutex;
  std::deque<BackendEntry> entries;  // deque: entries never move
  std::vector<bool> removed;
};

Registry& registry() {
  static auto* r = new Registry();  // leaked: see Note [Plugins stay loaded]
  return *r;
}

}  // namespace

void register_backend(int plugin, const char* name, const kiln_comm_ops* ops, void* self) {
  KILN_CHECK(name != nullptr && *name != '\0' && ops != nullptr,
             "register_comm_backend: a name and ops are required");
  KILN_CHECK(ops->struct_size >= offsetof(kiln_comm_ops, accepts_device), "register_comm_backend('",
             name, "'): kiln_comm_ops.struct_size ", ops->struct_size, " is too small");
  KILN_CHECK(ops->create_group && ops->destroy_group && ops->all_reduce && ops->broadcast &&
                 ops->all_gather && ops->reduce_scatter && ops->barrier && ops->send && ops->recv &&
                 ops->wait && ops->is_completed && ops->free_work,
             "register_comm_backend('", name, "'): every entry of kiln_comm_ops but ",
             "accepts_device is required");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (size_t i = 0; i < r.entries.size(); ++i) {
    KILN_CHECK(r.removed[i] || r.entries[i].name != name, "register_comm_backend: the backend '",
               name, "' is already registered by ", kiln::detail::plugin_path(r.entries[i].plugin),
               " (name the backend differently)");
  }
  r.entries.push_back({name, ops, self, plugin});
  r.removed.push_back(false);
}

void unregister_plugin(int plugin) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (size_t i = 0; i < r.entries.size(); ++i) {
    if (r.entries[i].plugin == plugin) r.removed[i] = true;
  }
}

const BackendEntry* find_backend(std::string_view name) {
  kiln::detail::ensure_runtime_started();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (size_t i = 0; i < r.entries.size(); ++i) {
    if (!r.removed[i] && r.entries[i].name == name) return &r.entries[i];
  }
  return nullptr;
}

std::vector<BackendEntry> all_backends() {
  kiln::detail::ensure_runtime_started();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<BackendEntry> out;
  for (size_t i = 0; i < r.entries.size(); ++i) {
    if (!r.removed[i]) out.push_back(r.entries[i]);
  }
  std::sort(out.begin(), out.end(),
            [](const BackendEntry& a, const BackendEntry& b) { return a.name < b.name; });
  return out;
}

}  // namespace kiln::distributed::detail
