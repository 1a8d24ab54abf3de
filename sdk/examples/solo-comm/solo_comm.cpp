// The "solo" communication backend: the smallest one, and the template to copy for a new one.
// Its world is one process (world_size 1), so every collective leaves the data as it is, or
// copies it for all_gather and reduce_scatter, and completes at once; send and recv have no peer
// and fail. A real backend does the same through its fabric, asynchronously (its works finish
// on a thread of its own), bounded by the group's timeout. docs/writing-a-comm-backend.md walks
// through it.
#include <kiln/sdk/comm.hpp>
#include <kiln/sdk/host.hpp>
#include <kiln/sdk/plugin.h>

#include <cstring>
#include <string>

namespace {

struct Group {
  int32_t world_size;
  int64_t timeout_ms;
};

// A work: done at creation here; `failed` carries an error for wait() to report.
struct Work {
  std::string failed;
};

size_t bytes_of(const kiln_tensor* t) {
  static const size_t element[KILN_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  size_t n = element[t->dtype];
  for (int32_t d = 0; d < t->ndim; ++d) n *= static_cast<size_t>(t->sizes[d]);
  return n;
}

void* create_group(void* /*self*/, const kiln_comm_group_options* o) {
  if (o->world_size != 1) {
    kiln::sdk::set_error(KILN_ERROR_VALUE,
                         "the solo backend's world is one process; world_size is " +
                             std::to_string(o->world_size));
    return nullptr;
  }
  return new Group{o->world_size, o->timeout_ms};
}

void destroy_group(void* group) { delete static_cast<Group*>(group); }

// One rank: the reduction of one tensor is the tensor itself (AVG divides by 1).
void* all_reduce(void*, const kiln_tensor*, int32_t) { return new Work(); }
void* broadcast(void*, const kiln_tensor*, int32_t) { return new Work(); }
void* barrier(void*) { return new Work(); }

void* all_gather(void*, const kiln_tensor* output, const kiln_tensor* input) {
  std::memcpy(output->data, input->data, bytes_of(input));  // rank 0's part is the whole
  return new Work();
}

void* reduce_scatter(void*, const kiln_tensor* output, const kiln_tensor* input, int32_t) {
  std::memcpy(output->data, input->data, bytes_of(output));
  return new Work();
}

void* no_peer(void*, const kiln_tensor*, int32_t peer, int32_t) {
  return new Work{"the solo backend has no rank " + std::to_string(peer) + " to talk to"};
}

kiln_status wait(void* work, int64_t /*timeout_ms*/) {
  const Work* w = static_cast<Work*>(work);
  if (w->failed.empty()) return 0;
  kiln::sdk::set_error(w->failed);
  return 1;
}

int32_t is_completed(void*) { return 1; }
void free_work(void* work) { delete static_cast<Work*>(work); }

const kiln_comm_ops kOps = {
    sizeof(kiln_comm_ops),
    create_group,
    destroy_group,
    all_reduce,
    broadcast,
    all_gather,
    reduce_scatter,
    barrier,
    no_peer,
    no_peer,
    wait,
    is_completed,
    free_work,
    nullptr,  // accepts_device: host memory only; the core stages the rest
};

}  // namespace

KILN_COMM_PLUGIN("solo", "0.1.0", "communication backend \"solo\": a world of one process", &kOps)
