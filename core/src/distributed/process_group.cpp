// init_process_group and the groups: the rendezvous (Note [Rendezvous stores] in store.h), the
// join of every rank, the backend's group, and the diagnosis of failed operations.
#include "group.h"

#include "../runtime.h"

#include <kiln/error.h>
#include <kiln/plugin.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace kiln::distributed {
namespace {

using detail::Millis;
using kiln::detail::str;

struct World {
  std::mutex mutex;
  std::shared_ptr<ProcessGroup::Impl> default_group;
  std::vector<std::weak_ptr<ProcessGroup::Impl>> groups;
  std::shared_ptr<detail::Store> store;
  int rank = -1, size = 0;
  int64_t groups_made = 0;
};

World& world() {
  static auto* w = new World();  // leaked: groups may be alive at exit
  return *w;
}

// An integer environment variable of env://, validated.
int64_t env_int(const char* name, const char* meaning) {
  const char* text = std::getenv(name);
  KILN_CHECK_VALUE(text != nullptr && *text != '\0', "init_process_group: init_method 'env://' ",
                   "needs the environment variable ", name, " (", meaning, "), which is not ",
                   "set: set it, launch with kiln-launch, or pass it in the options");
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  KILN_CHECK_VALUE(errno == 0 && end != text && *end == '\0', "init_process_group: the ",
                   "environment variable ", name, "='", text, "' is not an integer (", meaning,
                   ")");
  return v;
}

struct Rendezvous {
  std::string kind;  // "tcp" or "file"
  std::string host, path;
  int port = 0;
  int64_t rank = -1, world_size = -1;
};

Rendezvous parse_init_method(const InitProcessGroupOptions& o) {
  Rendezvous r;
  r.rank = o.rank();
  r.world_size = o.world_size();
  const std::string& m = o.init_method();
  auto parse_port = [&](const std::string& text, const char* what) {
    char* end = nullptr;
    long v = std::strtol(text.c_str(), &end, 10);
    KILN_CHECK_VALUE(!text.empty() && *end == '\0' && v >= 1 && v <= 65535,
                     "init_process_group: ", what, "'", text,
                     "' is not a port number (1 to 65535)");
    return static_cast<int>(v);
  };
  if (m == "env://") {
    r.kind = "tcp";
    const char* addr = std::getenv("MASTER_ADDR");
    KILN_CHECK_VALUE(addr != nullptr && *addr != '\0', "init_process_group: init_method ",
                     "'env://' needs the environment variable MASTER_ADDR (the address of rank 0, ",
                     "e.g. 127.0.0.1), which is not set: set it, or launch with kiln-launch");
    r.host = addr;
    const char* port = std::getenv("MASTER_PORT");
    KILN_CHECK_VALUE(port != nullptr && *port != '\0', "init_process_group: init_method ",
                     "'env://' needs the environment variable MASTER_PORT (the port rank 0 ",
                     "serves the rendezvous on, e.g. 29500), which is not set");
    r.port = parse_port(port, "the environment variable MASTER_PORT=");
    // under OpenMPI's mpirun, RANK and WORLD_SIZE default to the MPI job's
    auto mpi_or = [](const char* name, const char* mpi_name) {
      const char* v = std::getenv(name);
      return (v == nullptr || *v == '\0') && std::getenv(mpi_name) != nullptr ? mpi_name : name;
    };
    if (r.rank < 0) {
      r.rank = env_int(mpi_or("RANK", "OMPI_COMM_WORLD_RANK"),
                       "this process's rank, 0 to WORLD_SIZE - 1");
    }
    if (r.world_size < 0) {
      r.world_size =
          env_int(mpi_or("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"), "the number of processes");
    }
  } else if (m.rfind("tcp://", 0) == 0) {
    r.kind = "tcp";
    std::string rest = m.substr(6);
    size_t colon = rest.rfind(':');
    KILN_CHECK_VALUE(colon != std::string::npos && colon > 0, "init_process_group: init_method '",
                     m, "' has no port: write tcp://host:port");
    r.host = rest.substr(0, colon);
    r.port = parse_port(rest.substr(colon + 1), "the port of init_method ");
  } else if (m.rfind("file://", 0) == 0) {
    r.kind = "file";
    r.path = m.substr(7);
    KILN_CHECK_VALUE(!r.path.empty() && r.path[0] == '/', "init_process_group: init_method '", m,
                     "' needs an absolute path: file:///path/to/file");
  } else {
    KILN_CHECK_VALUE(false, "init_process_group: init_method '", m, "' is not one of env://, ",
                     "tcp://host:port, file:///path");
  }
  KILN_CHECK_VALUE(r.world_size >= 1, "init_process_group: world_size ", r.world_size,
                   " is not positive (init_method ", m,
                   m == "env://" ? ": set WORLD_SIZE)" : ": pass world_size in the options)");
  KILN_CHECK_VALUE(r.rank >= 0 && r.rank < r.world_size, "init_process_group: rank ", r.rank,
                   " is not in [0, world_size ", r.world_size, ") (init_method ", m, ")");
  return r;
}

std::string backend_missing(const std::string& name) {
  std::string available;
  for (const CommBackendInfo& b : comm_backends()) {
    if (b.available) available += (available.empty() ? "" : ", ") + b.name;
    if (b.name == name && !b.available) return b.reason;
  }
  return str("the backends available are: ", available.empty() ? "none" : available,
             " (kiln-info lists them)");
}

// Every member announces itself, then waits for the others (all bounded by the timeout). A store
// lost on the way (rank 0 gave up and left) still names the ranks not seen.
void join(ProcessGroup::Impl& g, const char* op) {
  g.store->set("join/" + std::to_string(g.rank), "1");
  auto deadline = std::chrono::steady_clock::now() + g.timeout;
  std::vector<int> missing;
  std::string lost;
  for (int r = 0; r < static_cast<int>(g.ranks.size()); ++r) {
    auto left = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
    try {
      if (lost.empty() && g.store->get("join/" + std::to_string(r), std::max(left, Millis(0)))) {
        continue;
      }
    } catch (const Error& e) {
      lost = e.what();
    }
    missing.push_back(g.ranks[r]);
  }
  if (missing.empty()) return;
  std::string list;
  for (int r : missing) list += (list.empty() ? "" : ", ") + std::to_string(r);
  KILN_CHECK(false, op, ": rank", missing.size() == 1 ? " " : "s ", list,
             lost.empty() ? " never joined" : " had not joined", " the group '", g.name,
             "' within ", g.timeout.count(), " ms (world size ", g.ranks.size(),
             ", rendezvous through ", g.store->describe(), "): start every rank, and check ",
             "WORLD_SIZE and the addresses", lost.empty() ? "" : "; then " + lost);
}

void create_backend_group(ProcessGroup::Impl& g, const char* op) {
  g.c_store = detail::make_c_store(g.store);
  kiln_comm_group_options o{sizeof(kiln_comm_group_options),
                            g.rank,
                            static_cast<int32_t>(g.ranks.size()),
                            g.timeout.count(),
                            &g.c_store->table,
                            g.name.c_str()};
  kiln::detail::take_plugin_failure();
  g.handle = g.backend->ops->create_group(g.backend->self, &o);
  if (g.handle == nullptr) {
    kiln::detail::throw_plugin_error(str(op, ": the backend '", g.backend_name, "' could not ",
                                         "create the group '", g.name, "' (rank ", g.rank, " of ",
                                         g.ranks.size(), "): "),
                                     kiln::detail::take_plugin_failure());
  }
}

std::shared_ptr<ProcessGroup::Impl> require_default(const char* op) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  KILN_CHECK(w.default_group != nullptr, op, ": the default process group is not initialized: ",
             "call kiln::distributed::init_process_group() first");
  return w.default_group;
}

}  // namespace

ProcessGroup::Impl::~Impl() {
  if (handle != nullptr) backend->ops->destroy_group(handle);
}

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::size() const { return static_cast<int>(impl_->ranks.size()); }
const std::string& ProcessGroup::name() const { return impl_->name; }
const std::string& ProcessGroup::backend() const { return impl_->backend_name; }
const std::vector<int>& ProcessGroup::ranks() const { return impl_->ranks; }
std::chrono::milliseconds ProcessGroup::timeout() const { return impl_->timeout; }

void init_process_group(const InitProcessGroupOptions& options) {
  const char* op = "init_process_group";
  {
    std::lock_guard<std::mutex> lock(world().mutex);
    KILN_CHECK(world().default_group == nullptr, op, ": the default process group is already ",
               "initialized: call destroy_process_group() first");
  }
  KILN_CHECK_VALUE(options.timeout().count() > 0, op, ": timeout ", options.timeout().count(),
                   " ms is not positive");
  const detail::BackendEntry* backend = detail::find_backend(options.backend());
  KILN_CHECK(backend != nullptr, op, ": no communication backend '", options.backend(),
             "': ", backend_missing(options.backend()));
  Rendezvous r = parse_init_method(options);
  auto g = std::make_shared<ProcessGroup::Impl>();
  g->name = "default";
  g->backend_name = options.backend();
  g->backend = backend;
  g->rank = static_cast<int>(r.rank);
  g->global_rank = g->rank;
  for (int i = 0; i < r.world_size; ++i) g->ranks.push_back(i);
  g->timeout = options.timeout();
  if (r.kind == "tcp") {
    g->job_store = detail::make_tcp_store(r.host, r.port, g->rank, g->rank == 0, g->timeout);
  } else {
    g->job_store = detail::make_file_store(r.path, g->timeout);
  }
  g->store = detail::make_prefix_store(g->job_store, "default");
  join(*g, op);
  create_backend_group(*g, op);
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.default_group = g;
  w.store = g->job_store;
  w.rank = g->rank;
  w.size = static_cast<int>(r.world_size);
  w.groups_made = 0;
  w.groups.clear();
}

bool is_initialized() {
  std::lock_guard<std::mutex> lock(world().mutex);
  return world().default_group != nullptr;
}

bool is_available() { return !detail::all_backends().empty(); }

void destroy_process_group(const ProcessGroupPtr& group) {
  World& w = world();
  if (group != nullptr) {
    ProcessGroup::Impl& g = group->impl();
    std::lock_guard<std::mutex> lock(g.mutex);
    if (g.handle != nullptr) g.backend->ops->destroy_group(g.handle);
    g.handle = nullptr;
    g.rank = -1;
    return;
  }
  std::shared_ptr<ProcessGroup::Impl> g;
  std::vector<std::shared_ptr<ProcessGroup::Impl>> others;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    KILN_CHECK(w.default_group != nullptr, "destroy_process_group: the default process group ",
               "is not initialized");
    g = std::move(w.default_group);
    for (auto& weak : w.groups) {
      if (auto other = weak.lock()) others.push_back(other);
    }
    w.groups.clear();
  }
  for (auto& other : others) destroy_process_group(std::make_shared<ProcessGroup>(other));
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    if (g->handle != nullptr) g->backend->ops->destroy_group(g->handle);
    g->handle = nullptr;
  }
  // Rank 0 serves the store: it waits (bounded) until the others have left or died.
  try {
    int64_t left = g->job_store->add("kiln/leave", 1);
    auto deadline = std::chrono::steady_clock::now() + std::min(g->timeout, Millis(30000));
    int size = static_cast<int>(g->ranks.size());
    while (g->rank == 0 && left < size && std::chrono::steady_clock::now() < deadline) {
      int dead = 0;
      for (int r = 1; r < size; ++r) {
        if (g->job_store->get(detail::kDeadKeyPrefix + std::to_string(r), Millis(0))) ++dead;
      }
      if (left + dead >= size) break;
      std::this_thread::sleep_for(Millis(5));
      left = g->job_store->add("kiln/leave", 0);
    }
  } catch (const Error&) {  // the store is gone already (rank 0 left): nothing to wait for
  }
  std::lock_guard<std::mutex> lock(w.mutex);
  w.store.reset();
}

int get_rank(const ProcessGroupPtr& group) {
  if (group != nullptr) return group->rank();
  return require_default("get_rank")->rank;
}

int get_world_size(const ProcessGroupPtr& group) {
  if (group != nullptr) return group->size();
  return static_cast<int>(require_default("get_world_size")->ranks.size());
}

std::string get_backend(const ProcessGroupPtr& group) {
  if (group != nullptr) return group->backend();
  return require_default("get_backend")->backend_name;
}

ProcessGroupPtr new_group(const std::vector<int>& ranks) {
  const char* op = "new_group";
  std::shared_ptr<ProcessGroup::Impl> d = require_default(op);
  int size = static_cast<int>(d->ranks.size());
  std::vector<int> members = ranks;
  if (members.empty()) members = d->ranks;
  std::sort(members.begin(), members.end());
  for (size_t i = 0; i < members.size(); ++i) {
    KILN_CHECK_VALUE(members[i] >= 0 && members[i] < size, op, ": rank ", members[i],
                     " is not in [0, world size ", size, ")");
    KILN_CHECK_VALUE(i == 0 || members[i] != members[i - 1], op, ": rank ", members[i],
                     " is listed twice");
  }
  auto g = std::make_shared<ProcessGroup::Impl>();
  {
    std::lock_guard<std::mutex> lock(world().mutex);
    g->name = str("group ", ++world().groups_made);
    world().groups.push_back(g);
  }
  g->backend_name = d->backend_name;
  g->backend = d->backend;
  g->ranks = members;
  g->global_rank = d->global_rank;
  g->timeout = d->timeout;
  g->job_store = d->job_store;
  auto me = std::find(members.begin(), members.end(), d->global_rank);
  if (me != members.end()) {
    g->rank = static_cast<int>(me - members.begin());
    g->store = detail::make_prefix_store(d->job_store, g->name);
    join(*g, op);
    create_backend_group(*g, op);
  }
  return std::make_shared<ProcessGroup>(g);
}

std::vector<CommBackendInfo> comm_backends() {
  std::vector<CommBackendInfo> out;
  for (const detail::BackendEntry& e : detail::all_backends()) {
    out.push_back({e.name, kiln::detail::plugin_path(e.plugin), true, ""});
  }
  for (const char* known : {"gloo", "mpi"}) {
    bool listed = std::any_of(out.begin(), out.end(),
                              [&](const CommBackendInfo& b) { return b.name == known; });
    if (listed) continue;
    CommBackendInfo info{known, "", false, ""};
    for (const PluginInfo& p : plugins()) {
      std::string stem = std::filesystem::path(p.path).stem().string();
      if (p.name != known && stem != std::string("kiln_") + known) continue;
      info.plugin = p.path;
      info.reason = str("its plugin ", p.path, " is ", plugin_state_name(p.state),
                        p.reason.empty() ? "" : ": ", p.reason);
    }
    if (info.reason.empty()) {
      info.reason = str("no plugin provides it: kiln_", known, ".so is built when ",
                        std::string(known) == "gloo" ? "libgloo-dev" : "libopenmpi-dev",
                        " is installed (scripts/setup.sh installs it; then rebuild)");
    }
    out.push_back(info);
  }
  return out;
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return "SUM";
    case ReduceOp::AVG: return "AVG";
    case ReduceOp::MIN: return "MIN";
    case ReduceOp::MAX: return "MAX";
    case ReduceOp::PRODUCT: return "PRODUCT";
  }
  return "unknown";
}

namespace detail {

std::string where(const ProcessGroup::Impl& g, const std::string& op) {
  return str(op, " on group '", g.name, "' (rank ", g.rank, " of ", g.ranks.size(), ", backend ",
             g.backend_name, ")");
}

std::shared_ptr<ProcessGroup::Impl> resolve(const ProcessGroupPtr& group, const char* op) {
  std::shared_ptr<ProcessGroup::Impl> g =
      group != nullptr ? std::shared_ptr<ProcessGroup::Impl>(group, &group->impl()) : nullptr;
  if (g == nullptr) g = require_default(op);
  KILN_CHECK(g->handle != nullptr, op, ": this process (rank ", g->global_rank, ") is not a ",
             "member of the group '", g->name, "' or the group was destroyed");
  return g;
}

std::string diagnose(ProcessGroup::Impl& g, int64_t seq) {
  std::string key = str("failed/", seq, "/");
  int size = static_cast<int>(g.ranks.size());
  // Note [Naming the rank that died]: a rank that failed in this operation too (its failed/seq
  // key is set) and then died is a follower, not the cause: the message names the ranks that
  // died without failing first, and the followers only when no such rank is found.
  std::vector<int> dead, followers, silent;
  try {
    g.store->set(key + std::to_string(g.rank), "1");
    auto deadline = std::chrono::steady_clock::now() + std::min(g.timeout, Millis(1000));
    while (true) {
      dead.clear();
      followers.clear();
      silent.clear();
      for (int r = 0; r < size; ++r) {
        if (r == g.rank) continue;
        if (g.job_store->get(kDeadKeyPrefix + std::to_string(g.ranks[r]), Millis(0))) {
          bool failed_first = g.store->get(key + std::to_string(r), Millis(0)).has_value();
          (failed_first ? followers : dead).push_back(g.ranks[r]);
        } else if (!g.store->get(key + std::to_string(r), Millis(0))) {
          silent.push_back(g.ranks[r]);
        }
      }
      if (silent.empty() || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(Millis(20));
    }
  } catch (const Error& e) {
    if (g.ranks[0] == 0 && g.global_rank != 0) {
      return str("; rank 0 is gone: ", e.what());
    }
    return str("; ", e.what());
  }
  auto list = [](const std::vector<int>& ranks) {
    std::string out;
    for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
    return out;
  };
  if (dead.empty()) dead = followers;
  std::string out;
  if (!dead.empty()) {
    out += str("; rank", dead.size() == 1 ? " " : "s ", list(dead),
               dead.size() == 1 ? " has" : " have", " died (",
               dead.size() == 1 ? "its connection" : "their connections",
               " to the rendezvous store closed without leaving)");
  }
  if (!silent.empty() && dead.empty()) {
    out += str("; rank", silent.size() == 1 ? " " : "s ", list(silent), " did not answer in ",
               "operation #", seq, " (stopped, stuck in other work, or called another ",
               "operation)");
  }
  return out;
}

}  // namespace detail
}  // namespace kiln::distributed
