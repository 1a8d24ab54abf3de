// The collectives and point-to-point calls: checks, staging through host memory, the backend's
// launch, and Work (waits, the write-back of staged tensors, errors with a diagnosis).
#include "group.h"

#include "../kernel_call.h"
#include "../runtime.h"

#include <kiln/error.h>
#include <kiln/ops.h>

#include <algorithm>

namespace kiln::distributed {
namespace {

using detail::Millis;
using kiln::detail::str;

// A tensor as the backend receives it: contiguous, in memory it can read. `staged` is the
// tensor itself or a copy that is written back after success.
struct Staged {
  Tensor original, staged;
  bool copied = false;
};

bool backend_reads(const ProcessGroup::Impl& g, Device device) {
  const kiln::detail::DeviceTypeRecord& r = kiln::detail::device_record(device.type());
  if (r.ops != nullptr && r.ops->host_accessible) return true;
  const kiln_comm_ops* ops = g.backend->ops;
  return ops->struct_size >= offsetof(kiln_comm_ops, accepts_device) + sizeof(void*) &&
         ops->accepts_device != nullptr && ops->accepts_device(g.backend->self, device.type()) != 0;
}

Staged stage(const ProcessGroup::Impl& g, const Tensor& t) {
  Staged s{t, t, false};
  if (backend_reads(g, t.device())) {
    if (!t.is_contiguous()) {
      s.staged = t.contiguous();
      s.copied = true;
    }
  } else {
    s.staged = t.to(Device("cpu"), /*copy=*/true).contiguous();
    s.copied = true;
  }
  return s;
}

// An empty contiguous tensor the backend can read, of `sizes`, for the output of `like`.
Tensor host_output(const ProcessGroup::Impl& g, const Tensor& like, IntArrayRef sizes) {
  Device device = backend_reads(g, like.device()) ? like.device() : Device("cpu");
  return kiln::empty(sizes, TensorOptions().dtype(like.dtype()).device(device));
}

void check_tensor(const Tensor& t, const std::string& what) {
  KILN_CHECK_VALUE(t.defined(), what, ": the tensor is undefined");
}

int32_t reduce_code(ReduceOp op, const Tensor& t, const std::string& what) {
  KILN_CHECK_TYPE(op != ReduceOp::AVG || t.is_floating_point(), what, ": ReduceOp::AVG needs a ",
                  "floating-point tensor, got ", t.dtype(), " ", t.sizes(),
                  ": use ReduceOp::SUM and divide");
  switch (op) {
    case ReduceOp::SUM: return KILN_REDUCE_SUM;
    case ReduceOp::AVG: return KILN_REDUCE_AVG;
    case ReduceOp::MIN: return KILN_REDUCE_MIN;
    case ReduceOp::MAX: return KILN_REDUCE_MAX;
    case ReduceOp::PRODUCT: return KILN_REDUCE_PRODUCT;
  }
  return KILN_REDUCE_SUM;
}

// Runs `call` on the group's backend and wraps its work. `finish` runs after success, on the
// thread that waits.
WorkPtr launch(const std::shared_ptr<ProcessGroup::Impl>& g, const std::string& op,
               const std::function<void*(void*)>& call, std::function<void()> finish,
               bool async_op) {
  auto state = std::make_shared<Work::State>();
  state->group = g;
  state->op = op;
  state->finish = std::move(finish);
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    KILN_CHECK(g->handle != nullptr, detail::where(*g, op), ": the group was destroyed");
    state->seq = ++g->seq;
    kiln::detail::take_plugin_failure();
    state->work = call(g->handle);
  }
  if (state->work == nullptr) {
    kiln::detail::PluginError e = kiln::detail::take_plugin_failure();
    // a backend whose launch already waits for the others (mpi's header exchange) fails here:
    // name the rank that died or did not answer, as wait() does
    if (e.kind == KILN_ERROR_OTHER && !e.message.empty()) {
      e.message += detail::diagnose(*g, state->seq);
    }
    kiln::detail::throw_plugin_error(detail::where(*g, op) + ": ", e);
  }
  auto work = std::make_shared<Work>(state);
  if (!async_op) work->wait();
  return work;
}

int group_rank_of(const ProcessGroup::Impl& g, int global, const char* op, const char* role) {
  auto it = std::find(g.ranks.begin(), g.ranks.end(), global);
  KILN_CHECK_VALUE(it != g.ranks.end(), op, ": ", role, " rank ", global, " is not a member of ",
                   "the group '", g.name, "' (its global ranks: ",
                   IntArrayRef(std::vector<int64_t>(g.ranks.begin(), g.ranks.end())), ")");
  return static_cast<int>(it - g.ranks.begin());
}

}  // namespace

Work::State::~State() {
  if (work == nullptr) return;
  // the backend may still write into tensors this state keeps alive: let it finish (bounded)
  if (!done) {
    group->backend->ops->wait(work, group->timeout.count());
    kiln::detail::take_plugin_failure();
  }
  group->backend->ops->free_work(work);
}

bool Work::wait(std::chrono::milliseconds timeout) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.done) {
    Millis bound = timeout.count() > 0 ? timeout : s.group->timeout;
    kiln::detail::take_plugin_failure();
    kiln_status rc = s.group->backend->ops->wait(s.work, bound.count());
    s.done = true;
    if (rc == 0) {
      try {
        if (s.finish) s.finish();
      } catch (...) {
        s.error = std::current_exception();
      }
    } else {
      kiln::detail::PluginError e = kiln::detail::take_plugin_failure();
      if (e.message.empty()) e.message = str("no answer within ", bound.count(), " ms");
      // a mismatch between the ranks' calls (ValueError) needs no search for a lost rank
      if (e.kind != KILN_ERROR_VALUE) e.message += detail::diagnose(*s.group, s.seq);
      try {
        kiln::detail::throw_plugin_error(detail::where(*s.group, s.op) + ": ", e);
      } catch (...) {
        s.error = std::current_exception();
      }
    }
  }
  if (s.error) std::rethrow_exception(s.error);
  return true;
}

bool Work::is_completed() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.done || s.group->backend->ops->is_completed(s.work) != 0;
}

bool Work::is_success() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.done && !s.error;
}

std::exception_ptr Work::exception() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.error;
}

WorkPtr all_reduce(Tensor& tensor, ReduceOp op, const ProcessGroupPtr& group, bool async_op) {
  auto g = detail::resolve(group, "all_reduce");
  std::string what = detail::where(*g, "all_reduce");
  check_tensor(tensor, what);
  int32_t code = reduce_code(op, tensor, what);
  Staged s = stage(*g, tensor);
  auto call = [&](void* h) {
    kiln_tensor d = kiln::detail::describe(s.staged);
    return g->backend->ops->all_reduce(h, &d, code);
  };
  auto finish = [s] {
    if (s.copied) s.original.copy_(s.staged);
  };
  return launch(g, "all_reduce", call, finish, async_op);
}

WorkPtr broadcast(Tensor& tensor, int src, const ProcessGroupPtr& group, bool async_op) {
  auto g = detail::resolve(group, "broadcast");
  check_tensor(tensor, detail::where(*g, "broadcast"));
  int root = group_rank_of(*g, src, "broadcast", "the source");
  Staged s = stage(*g, tensor);
  auto call = [&](void* h) {
    kiln_tensor d = kiln::detail::describe(s.staged);
    return g->backend->ops->broadcast(h, &d, root);
  };
  auto finish = [s] {
    if (s.copied) s.original.copy_(s.staged);
  };
  return launch(g, "broadcast", call, finish, async_op);
}

WorkPtr all_gather_into_tensor(Tensor& output, const Tensor& input, const ProcessGroupPtr& group,
                               bool async_op) {
  auto g = detail::resolve(group, "all_gather");
  std::string what = detail::where(*g, "all_gather");
  check_tensor(input, what);
  check_tensor(output, what);
  int64_t size = static_cast<int64_t>(g->ranks.size());
  KILN_CHECK_VALUE(output.dtype() == input.dtype() && output.numel() == input.numel() * size, what,
                   ": the output ", output.dtype(), " ", output.sizes(), " must hold ", size,
                   " times the input ", input.dtype(), " ", input.sizes());
  Staged in = stage(*g, input);
  Staged out = stage(*g, output);
  auto call = [&](void* h) {
    kiln_tensor o = kiln::detail::describe(out.staged);
    kiln_tensor i = kiln::detail::describe(in.staged);
    return g->backend->ops->all_gather(h, &o, &i);
  };
  auto finish = [out, in] {
    if (out.copied) out.original.copy_(out.staged);
  };
  return launch(g, "all_gather", call, finish, async_op);
}

WorkPtr all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor,
                   const ProcessGroupPtr& group, bool async_op) {
  auto g = detail::resolve(group, "all_gather");
  std::string what = detail::where(*g, "all_gather");
  check_tensor(tensor, what);
  size_t size = g->ranks.size();
  KILN_CHECK_VALUE(tensor_list.empty() || tensor_list.size() == size, what, ": tensor_list has ",
                   tensor_list.size(), " tensors; the group has ", size, " ranks");
  for (const Tensor& t : tensor_list) {
    KILN_CHECK_VALUE(!t.defined() || (t.sizes() == tensor.sizes() && t.dtype() == tensor.dtype()),
                     what, ": an entry of tensor_list is ", t.dtype(), " ", t.sizes(),
                     "; expected the input's ", tensor.dtype(), " ", tensor.sizes());
  }
  std::vector<int64_t> sizes{static_cast<int64_t>(size)};
  for (int64_t d : tensor.sizes()) sizes.push_back(d);
  Tensor out = host_output(*g, tensor, sizes);
  Staged in = stage(*g, tensor);
  tensor_list.resize(size);
  std::vector<Tensor>* list = &tensor_list;
  auto call = [&](void* h) {
    kiln_tensor o = kiln::detail::describe(out);
    kiln_tensor i = kiln::detail::describe(in.staged);
    return g->backend->ops->all_gather(h, &o, &i);
  };
  // the list is written when the work is waited for: it must outlive the work, as in PyTorch
  auto finish = [out, in, list, device = tensor.device()] {
    for (size_t r = 0; r < list->size(); ++r) {
      Tensor part = out.select(0, static_cast<int64_t>(r));
      Tensor& slot = (*list)[r];
      if (slot.defined()) {
        slot.copy_(part);
      } else {
        slot = part.to(device, /*copy=*/part.device() != device);
      }
    }
  };
  return launch(g, "all_gather", call, finish, async_op);
}

WorkPtr reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                              const ProcessGroupPtr& group, bool async_op) {
  auto g = detail::resolve(group, "reduce_scatter");
  std::string what = detail::where(*g, "reduce_scatter");
  check_tensor(input, what);
  check_tensor(output, what);
  int64_t size = static_cast<int64_t>(g->ranks.size());
  KILN_CHECK_VALUE(output.dtype() == input.dtype() && input.numel() == output.numel() * size, what,
                   ": the input ", input.dtype(), " ", input.sizes(), " must hold ", size,
                   " times the output ", output.dtype(), " ", output.sizes());
  int32_t code = reduce_code(op, input, what);
  Staged in = stage(*g, input);
  Staged out = stage(*g, output);
  auto call = [&](void* h) {
    kiln_tensor o = kiln::detail::describe(out.staged);
    kiln_tensor i = kiln::detail::describe(in.staged);
    return g->backend->ops->reduce_scatter(h, &o, &i, code);
  };
  auto finish = [out, in] {
    if (out.copied) out.original.copy_(out.staged);
  };
  return launch(g, "reduce_scatter", call, finish, async_op);
}

WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op,
                       const ProcessGroupPtr& group, bool async_op) {
  auto g = detail::resolve(group, "reduce_scatter");
  std::string what = detail::where(*g, "reduce_scatter");
  check_tensor(output, what);
  KILN_CHECK_VALUE(input_list.size() == g->ranks.size(), what, ": input_list has ",
                   input_list.size(), " tensors; the group has ", g->ranks.size(), " ranks");
  for (const Tensor& t : input_list) {
    KILN_CHECK_VALUE(t.defined() && t.sizes() == output.sizes() && t.dtype() == output.dtype(),
                     what, ": every entry of input_list must be the output's ", output.dtype(), " ",
                     output.sizes(), "; one is ",
                     t.defined() ? str(t.dtype(), " ", t.sizes()) : std::string("undefined"));
  }
  Tensor input = kiln::stack(input_list, 0);
  return reduce_scatter_tensor(output, input, op, group, async_op);
}

WorkPtr barrier(const ProcessGroupPtr& group, bool async_op) {
  auto g = detail::resolve(group, "barrier");
  auto call = [&](void* h) { return g->backend->ops->barrier(h); };
  return launch(g, "barrier", call, nullptr, async_op);
}

WorkPtr isend(const Tensor& tensor, int dst, const ProcessGroupPtr& group, int tag) {
  auto g = detail::resolve(group, "send");
  check_tensor(tensor, detail::where(*g, "send"));
  int peer = group_rank_of(*g, dst, "send", "the destination");
  KILN_CHECK_VALUE(peer != g->rank, detail::where(*g, "send"), ": cannot send to itself");
  KILN_CHECK_VALUE(tag >= 0, detail::where(*g, "send"), ": tag ", tag, " is negative");
  Staged s = stage(*g, tensor);
  auto call = [&](void* h) {
    kiln_tensor d = kiln::detail::describe(s.staged);
    return g->backend->ops->send(h, &d, peer, tag);
  };
  return launch(
      g, "send", call, [s] {}, true);
}

WorkPtr irecv(Tensor& tensor, int src, const ProcessGroupPtr& group, int tag) {
  auto g = detail::resolve(group, "recv");
  check_tensor(tensor, detail::where(*g, "recv"));
  int peer = group_rank_of(*g, src, "recv", "the source");
  KILN_CHECK_VALUE(peer != g->rank, detail::where(*g, "recv"), ": cannot receive from itself");
  KILN_CHECK_VALUE(tag >= 0, detail::where(*g, "recv"), ": tag ", tag, " is negative");
  Staged s = stage(*g, tensor);
  auto call = [&](void* h) {
    kiln_tensor d = kiln::detail::describe(s.staged);
    return g->backend->ops->recv(h, &d, peer, tag);
  };
  auto finish = [s] {
    if (s.copied) s.original.copy_(s.staged);
  };
  return launch(g, "recv", call, finish, true);
}

void send(const Tensor& tensor, int dst, const ProcessGroupPtr& group, int tag) {
  isend(tensor, dst, group, tag)->wait();
}

int recv(Tensor& tensor, int src, const ProcessGroupPtr& group, int tag) {
  irecv(tensor, src, group, tag)->wait();
  return src;
}

}  // namespace kiln::distributed
