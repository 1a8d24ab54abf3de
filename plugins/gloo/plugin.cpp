// The "gloo" communication backend: kiln's collectives on Gloo (Debian's libgloo-dev) over its
// TCP transport. Each group is a kiln_gloo::Group (group.hpp); this file is the kiln_comm_ops
// table and the plugin's entry points. See docs/writing-a-comm-backend.md for the contract.
#include "group.hpp"
#include "reduce.hpp"

#include <kiln/sdk/comm.hpp>
#include <kiln/sdk/host.hpp>
#include <kiln/sdk/plugin.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/broadcast.h>

#include <cstring>
#include <memory>
#include <vector>

namespace kiln_gloo {
namespace {

using WorkHandle = std::shared_ptr<Work>;

int64_t numel_of(const kiln_tensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.sizes[d];
  return n;
}

// The core's errors are reported on the calling thread; a C++ exception never leaves.
template <class F>
void* guarded(F&& f) {
  try {
    return new WorkHandle(f());
  } catch (const std::exception& e) {
    kiln::sdk::set_error(e.what());
  } catch (...) {
    kiln::sdk::set_error("an unknown exception in the gloo backend");
  }
  return nullptr;
}

Group* as_group(void* g) { return static_cast<Group*>(g); }

void* create_group(void* /*self*/, const kiln_comm_group_options* options) {
  try {
    return new Group(*options);
  } catch (const std::exception& e) {
    kiln::sdk::set_error(std::string("gloo could not connect the ranks: ") + e.what());
  } catch (...) {
    kiln::sdk::set_error("gloo could not connect the ranks (an unknown exception)");
  }
  return nullptr;
}

void destroy_group(void* group) { delete as_group(group); }

// gloo's all-reduce of n elements at p, in place.
void allreduce(Group& g, void* p, int32_t dtype, size_t n, int32_t op) {
  if (n == 0) return;
  gloo::AllreduceOptions opts(g.context());
  size_t bytes = dtype_size(dtype);
  // gloo types the buffer only by its element size; the reduction knows the dtype
  switch (bytes) {
    case 1: opts.setOutput(static_cast<uint8_t*>(p), n); break;
    case 2: opts.setOutput(static_cast<uint16_t*>(p), n); break;
    case 4: opts.setOutput(static_cast<uint32_t*>(p), n); break;
    default: opts.setOutput(static_cast<uint64_t*>(p), n); break;
  }
  opts.setReduceFunction(reduction_for(dtype, op));
  opts.setTag(g.next_tag());
  opts.setTimeout(g.timeout());
  gloo::allreduce(opts);
  if (op == KILN_REDUCE_AVG) divide(p, dtype, n, g.size());
}

// Reduces the n elements each rank put in its slot into `out`, in rank order. See Note [Small
// collectives ride the header].
void reduce_slots(const Gathered& all, int ranks, size_t offset, void* out, int32_t dtype, size_t n,
                  int32_t op) {
  ReduceFn fn = reduction_for(dtype, op);
  if (ranks == 1) {
    std::memcpy(out, all.data(0) + offset, n * dtype_size(dtype));
  } else {
    fn(out, all.data(0) + offset, all.data(1) + offset, n);
    for (int r = 2; r < ranks; ++r) fn(out, out, all.data(r) + offset, n);
  }
  if (op == KILN_REDUCE_AVG) divide(out, dtype, n, ranks);
}

// Whether an all-reduce of `bytes` gathers every rank's buffer and reduces locally (one exchange,
// (size - 1) x bytes received) rather than running gloo's ring (2 (size - 1) steps, 2 (size - 1) /
// size x bytes): up to 2 MiB gathered (1 MiB buffers on 2 ranks), where the ring's steps cost more
// than its saved bytes (kiln-dist-bench, loopback).
bool gathers(const Group& g, size_t bytes) {
  return bytes * static_cast<size_t>(g.size()) <= (size_t{2} << 20);
}

// The sizes are the same on every rank (the header exchange checked them).
void allreduce_by_gathering(Group& g, void* p, int32_t dtype, size_t n, int32_t op) {
  size_t bytes = n * dtype_size(dtype);
  std::vector<char> all(bytes * static_cast<size_t>(g.size()));
  gloo::AllgatherOptions opts(g.context());
  opts.setInput(static_cast<char*>(p), bytes);
  opts.setOutput(all.data(), all.size());
  opts.setTag(g.next_tag());
  opts.setTimeout(g.timeout());
  gloo::allgather(opts);
  ReduceFn fn = reduction_for(dtype, op);
  fn(p, all.data(), all.data() + bytes, n);
  for (int r = 2; r < g.size(); ++r) fn(p, p, all.data() + static_cast<size_t>(r) * bytes, n);
  if (op == KILN_REDUCE_AVG) divide(p, dtype, n, g.size());
}

void* all_reduce(void* group, const kiln_tensor* t, int32_t op) {
  return guarded([&] {
    Group& g = *as_group(group);
    void* p = t->data;
    int32_t dtype = t->dtype;
    size_t n = static_cast<size_t>(numel_of(*t));
    if (!reduction_for(dtype, op)) throw std::runtime_error("all_reduce: unknown dtype");
    size_t bytes = n * dtype_size(dtype);
    bool small = bytes <= kInlineBytes;
    return g.launch({kAllReduce, dtype, static_cast<int64_t>(n), op}, p, small ? bytes : 0,
                    [&g, p, dtype, n, op, small, bytes](const Gathered& all) {
                      if (small) {
                        if (n > 0) reduce_slots(all, g.size(), 0, p, dtype, n, op);
                      } else if (gathers(g, bytes)) {
                        allreduce_by_gathering(g, p, dtype, n, op);
                      } else {
                        allreduce(g, p, dtype, n, op);
                      }
                    });
  });
}

void* broadcast(void* group, const kiln_tensor* t, int32_t root) {
  return guarded([&] {
    Group& g = *as_group(group);
    char* p = static_cast<char*>(t->data);
    size_t n = static_cast<size_t>(numel_of(*t));
    size_t bytes = n * dtype_size(t->dtype);
    bool small = bytes <= kInlineBytes;
    const void* mine = g.rank() == root ? p : nullptr;
    return g.launch({kBroadcast, t->dtype, static_cast<int64_t>(n), root}, mine,
                    small && mine != nullptr ? bytes : 0,
                    [&g, p, bytes, root, small](const Gathered& all) {
                      if (bytes == 0 || g.size() == 1) return;
                      if (small) {
                        if (g.rank() != root) std::memcpy(p, all.data(root), bytes);
                        return;
                      }
                      gloo::BroadcastOptions opts(g.context());
                      opts.setOutput(p, bytes);
                      opts.setRoot(root);
                      opts.setTag(g.next_tag());
                      opts.setTimeout(g.timeout());
                      gloo::broadcast(opts);
                    });
  });
}

void* all_gather(void* group, const kiln_tensor* output, const kiln_tensor* input) {
  return guarded([&] {
    Group& g = *as_group(group);
    char* out = static_cast<char*>(output->data);
    char* in = static_cast<char*>(input->data);
    size_t n = static_cast<size_t>(numel_of(*input));
    size_t bytes = n * dtype_size(input->dtype);
    bool small = bytes <= kInlineBytes;
    return g.launch({kAllGather, input->dtype, static_cast<int64_t>(n), 0}, in, small ? bytes : 0,
                    [&g, out, in, bytes, small](const Gathered& all) {
                      if (bytes == 0) return;
                      if (small) {
                        for (int r = 0; r < g.size(); ++r) {
                          std::memcpy(out + static_cast<size_t>(r) * bytes, all.data(r), bytes);
                        }
                        return;
                      }
                      gloo::AllgatherOptions opts(g.context());
                      opts.setInput(in, bytes);
                      opts.setOutput(out, bytes * static_cast<size_t>(g.size()));
                      opts.setTag(g.next_tag());
                      opts.setTimeout(g.timeout());
                      gloo::allgather(opts);
                    });
  });
}

// gloo has no reduce-scatter for unbound buffers: all-reduce a copy, keep this rank's part (or,
// small, reduce this rank's part of the slots).
void* reduce_scatter(void* group, const kiln_tensor* output, const kiln_tensor* input, int32_t op) {
  return guarded([&] {
    Group& g = *as_group(group);
    char* out = static_cast<char*>(output->data);
    const char* in = static_cast<const char*>(input->data);
    int32_t dtype = input->dtype;
    size_t n = static_cast<size_t>(numel_of(*output));
    size_t part = n * dtype_size(dtype);
    size_t whole = part * static_cast<size_t>(g.size());
    if (!reduction_for(dtype, op)) throw std::runtime_error("reduce_scatter: unknown dtype");
    bool small = whole <= kInlineBytes;
    return g.launch({kReduceScatter, dtype, static_cast<int64_t>(n), op}, in, small ? whole : 0,
                    [&g, out, in, dtype, n, part, op, small](const Gathered& all) {
                      if (n == 0) return;
                      size_t mine = part * static_cast<size_t>(g.rank());
                      if (small) {
                        reduce_slots(all, g.size(), mine, out, dtype, n, op);
                        return;
                      }
                      std::vector<char> copy(in, in + part * static_cast<size_t>(g.size()));
                      allreduce(g, copy.data(), dtype, n * static_cast<size_t>(g.size()), op);
                      std::memcpy(out, copy.data() + mine, part);
                    });
  });
}

// The header exchange is a barrier: it completes once every rank has contributed.
void* barrier(void* group) {
  return guarded([&] {
    return as_group(group)->launch({kBarrier, -1, 0, 0}, nullptr, 0, [](const Gathered&) {});
  });
}

void* send(void* group, const kiln_tensor* t, int32_t peer, int32_t tag) {
  return guarded([&] { return as_group(group)->send(*t, peer, tag); });
}

void* recv(void* group, const kiln_tensor* t, int32_t peer, int32_t tag) {
  return guarded([&] { return as_group(group)->recv(*t, peer, tag); });
}

kiln_status wait(void* work, int64_t timeout_ms) {
  std::string error;
  int32_t kind = KILN_ERROR_OTHER;
  if ((*static_cast<WorkHandle*>(work))->wait(Millis(timeout_ms), error, kind) == 0) return 0;
  kiln::sdk::set_error(static_cast<kiln_error_kind>(kind), error);
  return 1;
}

int32_t is_completed(void* work) { return (*static_cast<WorkHandle*>(work))->completed() ? 1 : 0; }

void free_work(void* work) { delete static_cast<WorkHandle*>(work); }

const kiln_comm_ops& ops() {
  static const kiln_comm_ops table = {
      sizeof(kiln_comm_ops),
      create_group,
      destroy_group,
      all_reduce,
      broadcast,
      all_gather,
      reduce_scatter,
      barrier,
      send,
      recv,
      wait,
      is_completed,
      free_work,
      nullptr,
  };
  return table;
}

}  // namespace
}  // namespace kiln_gloo

KILN_COMM_PLUGIN("gloo", "0.1.0", "communication backend \"gloo\": Gloo over TCP",
                 &kiln_gloo::ops())
