#include <kiln/dispatch.h>

#include <mutex>
#include <string_view>
#include <unordered_map>

namespace kiln {
namespace {

struct OperatorRegistry {
  std::mutex mutex;
  std::vector<OperatorBase*> list;
  std::unordered_map<std::string, OperatorBase*> by_name;
};

OperatorRegistry& registry() {
  static OperatorRegistry* r = new OperatorRegistry();  // outlives every static operator
  return *r;
}

}  // namespace

const char* dispatch_key_name(DispatchKey k) {
  switch (k) {
    case DispatchKey::Backend: return "Backend";
    case DispatchKey::Autograd: return "Autograd";
    case DispatchKey::Autocast: return "Autocast";
    case DispatchKey::Observe: return "Observe";
  }
  return "?";
}

namespace detail {
std::atomic<uint8_t> global_included_keys{0};

// Note [Dispatch state TLS]: initial-exec TLS avoids a __tls_get_addr call on every operator;
// libkiln_core is a dependency of the programs that use it, loaded at start-up, so its TLS is
// in the static block.
LocalDispatchState& local_dispatch_state() {
  static thread_local LocalDispatchState state __attribute__((tls_model("initial-exec")));
  return state;
}
}  // namespace detail

ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(DispatchKey key)
    : saved_(detail::local_dispatch_state().excluded) {
  detail::local_dispatch_state().excluded |= key_bit(key);
}
ExcludeDispatchKeyGuard::~ExcludeDispatchKeyGuard() {
  detail::local_dispatch_state().excluded = saved_;
}

IncludeDispatchKeyGuard::IncludeDispatchKeyGuard(DispatchKey key)
    : saved_(detail::local_dispatch_state().included) {
  detail::local_dispatch_state().included |= key_bit(key);
}
IncludeDispatchKeyGuard::~IncludeDispatchKeyGuard() {
  detail::local_dispatch_state().included = saved_;
}

OperatorBase::OperatorBase(const char* name, const char* schema, bool primitive)
    : name_(name),
      schema_(schema),
      primitive_(primitive),
      inplace_(std::string_view(schema).find("(a!)") != std::string_view::npos) {
  OperatorRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  KILN_INTERNAL_ASSERT(r.by_name.count(name) == 0, "operator declared twice: ", name);
  r.list.push_back(this);
  r.by_name.emplace(name, this);
}

OperatorBase::~OperatorBase() {
  OperatorRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.by_name.erase(name_);
  std::erase(r.list, this);
}

const std::vector<OperatorBase*>& all_operators() { return registry().list; }

OperatorBase* find_operator(const std::string& name) {
  OperatorRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

}  // namespace kiln
