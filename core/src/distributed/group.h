// What kiln::distributed's process groups and works hold. Internal to libkiln_core.
#pragma once

#include "registry.h"
#include "store.h"

#include <kiln/distributed.h>

#include <functional>
#include <mutex>

namespace kiln::distributed {

struct ProcessGroup::Impl {
  std::string name;  // "default", "group 1"
  std::string backend_name;
  const detail::BackendEntry* backend = nullptr;
  void* handle = nullptr;  // the backend's group; null for a non-member
  int rank = -1;           // in the group; -1: not a member
  std::vector<int> ranks;  // global ranks of the members
  int global_rank = -1;
  detail::Millis timeout{0};
  std::shared_ptr<detail::Store> store;      // the group's keys
  std::shared_ptr<detail::Store> job_store;  // the job's keys (dead ranks)
  std::unique_ptr<detail::CStore> c_store;
  std::mutex mutex;  // one launch into the backend at a time
  int64_t seq = 0;   // operations launched so far
  ~Impl();
};

struct Work::State {
  std::shared_ptr<ProcessGroup::Impl> group;
  std::string op;                // "all_reduce"
  int64_t seq = 0;               // the group's operation number, for diagnosis
  void* work = nullptr;          // the backend's
  std::function<void()> finish;  // after success: write staged tensors back
  std::mutex mutex;
  bool done = false;
  std::exception_ptr error;
  ~State();
};

namespace detail {

// "all_reduce on group 'default' (rank 0 of 2, backend gloo)": the start of every message.
std::string where(const ProcessGroup::Impl& g, const std::string& op);
// After a failed operation: which ranks died (the TCP store saw them leave) or never reached
// operation `seq`; "" when nothing more is known. Bounded by about a second.
std::string diagnose(ProcessGroup::Impl& g, int64_t seq);
// The group of `group`, or the default one; throws naming `op` when there is none or this
// process is not a member.
std::shared_ptr<ProcessGroup::Impl> resolve(const ProcessGroupPtr& group, const char* op);

}  // namespace detail
}  // namespace kiln::distributed
