// Note [Gradient buckets]: DistributedDataParallel's reducer, after PyTorch's (Li et al.,
// "PyTorch Distributed: Experiences on Accelerating Data Parallel Training", VLDB 2020). The
// parameters that require grad are grouped into buckets in reverse order of registration (the
// order backward produces their gradients, roughly): the first bucket holds up to 1 MiB, the
// others bucket_cap_mb, and a bucket holds one dtype and one device. Each parameter has a hook
// that runs once its gradient has been accumulated into grad()
// (autograd::register_post_accumulate_grad_hook); it copies grad() into the parameter's slot of
// its bucket's flat buffer, and when a bucket's last gradient has arrived its all-reduce (AVG) is
// launched asynchronously, so communication overlaps the rest of backward. Buckets launch in
// their order on every rank (a full bucket waits for the ones before it), so every rank issues
// the same collectives in the same order. At the end of backward (autograd::queue_callback) the
// reducer launches what is left, waits for every bucket and writes each averaged slot into the
// parameter's grad(). With find_unused_parameters, parameters the forward's graph does not reach
// are ready at once, and a MAX all-reduce of the used flags leaves the gradient of a parameter
// no rank used untouched. Inside no_sync() the hooks do nothing: gradients accumulate locally.
// A communication hook (register_comm_hook) replaces a bucket's all-reduce: it gets the bucket
// and returns a future of the reduced buffer, waited for at the end of backward.
//
// Note [Bucket views]: with gradient_as_bucket_view, a parameter's grad() is a view of its slot,
// so accumulation writes into the bucket and the reduced values are the gradients: no copy
// either way. The reducer's hooks run after accumulation (autograd's
// register_post_accumulate_grad_hook, PyTorch's post hook on the AccumulateGrad node), so a
// parameter is ready the moment its accumulation is done, and a bucket launches as early as
// without views. If grad() is not yet its slot (the first backward, or after zero_grad() set it
// to none), it is copied there once and grad() becomes the view.
#include "reducer.h"

#include "../../tensor_internal.h"

#include <kiln/autograd.h>
#include <kiln/autograd/queue_callback.h>
#include <kiln/error.h>
#include <kiln/ops.h>

#include <unordered_set>

namespace kiln::nn::parallel {

using kiln::detail::str;
namespace dist = kiln::distributed;

Reducer::Reducer(std::vector<std::string> names, std::vector<Tensor> params,
                 dist::ProcessGroupPtr group, int64_t first_bucket_bytes, int64_t bucket_bytes,
                 bool find_unused, bool gradient_as_bucket_view)
    : names_(std::move(names)),
      params_(std::move(params)),
      group_(std::move(group)),
      find_unused_(find_unused),
      as_view_(gradient_as_bucket_view) {
  slots_.resize(params_.size());
  int64_t filled = 0;
  for (size_t k = params_.size(); k-- > 0;) {  // reverse registration order
    const Tensor& p = params_[k];
    int64_t bytes = p.numel() * static_cast<int64_t>(p.element_size());
    int64_t cap = buckets_.size() <= 1 ? first_bucket_bytes : bucket_bytes;
    bool fits = !buckets_.empty() && filled + bytes <= cap;
    if (fits) {
      const Tensor& first = params_[buckets_.back().params.front()];
      fits = first.dtype() == p.dtype() && first.device() == p.device();
    }
    if (!fits) {
      buckets_.emplace_back();
      filled = 0;
    }
    Bucket& b = buckets_.back();
    int64_t offset = 0;
    for (size_t j : b.params) offset += params_[j].numel();
    slots_[k] = {buckets_.size() - 1, offset, p.numel()};
    b.params.push_back(k);
    filled += bytes;
  }
  for (Bucket& b : buckets_) {
    int64_t n = 0;
    for (size_t j : b.params) n += params_[j].numel();
    const Tensor& first = params_[b.params.front()];
    b.buffer = kiln::zeros({n}, TensorOptions().dtype(first.dtype()).device(first.device()));
  }
  ready_.assign(params_.size(), 0);
  used_.assign(params_.size(), 0);
}

void Reducer::install_hooks() {
  std::weak_ptr<Reducer> weak = weak_from_this();
  for (size_t i = 0; i < params_.size(); ++i) {
    autograd::register_post_accumulate_grad_hook(params_[i], [weak, i](const Tensor&) {
      if (auto self = weak.lock()) self->on_accumulated(i);
    });
  }
}

std::vector<int64_t> Reducer::bucket_sizes() const {
  std::vector<int64_t> out;
  for (const Bucket& b : buckets_) out.push_back(b.buffer.numel());
  return out;
}

Tensor Reducer::slot_view(size_t index) const {
  const Slot& s = slots_[index];
  return buckets_[s.bucket].buffer.narrow(0, s.offset, s.numel).view(params_[index].sizes());
}

void Reducer::set_comm_hook(CommHook hook) {
  KILN_CHECK(hook != nullptr, "register_comm_hook: the hook is empty");
  KILN_CHECK(hook_ == nullptr, "register_comm_hook: a communication hook is registered already ",
             "(it can only be called once)");
  KILN_CHECK(!backward_seen_, "register_comm_hook: call it before the first backward pass");
  hook_ = std::move(hook);
}

void Reducer::prepare(const std::vector<Tensor>& outputs, bool sync) {
  expect_backward_ = sync;
  if (!sync) return;
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.work = nullptr;
  }
  std::fill(ready_.begin(), ready_.end(), 0);
  std::fill(used_.begin(), used_.end(), 0);
  next_launch_ = 0;
  if (!find_unused_) return;
  // the nodes the outputs' graph reaches; a parameter whose accumulator is not among them is
  // unused in this iteration
  std::unordered_set<const autograd::Node*> seen;
  std::vector<const autograd::Node*> stack;
  for (const Tensor& out : outputs) {
    if (out.defined() && out.grad_fn()) stack.push_back(out.grad_fn().get());
  }
  while (!stack.empty()) {
    const autograd::Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    for (const autograd::Edge& e : n->next_edges()) {
      if (e.is_valid()) stack.push_back(e.function.get());
    }
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& meta = params_[i].impl().autograd;
    std::shared_ptr<autograd::Node> acc = meta ? meta->grad_accumulator.lock() : nullptr;
    if (acc == nullptr || seen.count(acc.get()) == 0) {
      const Tensor& g = params_[i].grad();
      mark_ready(i, g.defined() ? g : kiln::zeros_like(params_[i]));
      used_[i] = 0;
    }
  }
}

void Reducer::on_accumulated(size_t index) {
  if (!expect_backward_) return;  // no_sync(), or a forward outside DistributedDataParallel
  if (!queued_) {
    queued_ = true;
    std::weak_ptr<Reducer> weak = weak_from_this();
    autograd::queue_callback([weak] {
      if (auto self = weak.lock()) self->finalize();
    });
  }
  backward_seen_ = true;
  KILN_CHECK(!ready_[index], "DistributedDataParallel: the parameter ", names_[index],
             " received its gradient twice in one backward pass (rank ",
             distributed::get_rank(group_), "); a parameter may take part in one backward per ",
             "forward: use no_sync() around extra backward passes");
  NoGradGuard no_grad;
  Tensor& grad = params_[index].mutable_grad();
  if (as_view_) {  // See Note [Bucket views]
    Tensor slot = slot_view(index);
    if (grad.data_ptr() != slot.data_ptr()) {
      slot.copy_(grad);
      grad = slot;
    }
  }
  mark_ready(index, grad);
}

void Reducer::mark_ready(size_t index, const Tensor& value) {
  Tensor slot = slot_view(index);
  if (value.data_ptr() != slot.data_ptr()) slot.copy_(value);
  ready_[index] = 1;
  used_[index] = 1;
  --buckets_[slots_[index].bucket].pending;
  launch_ready();
}

void Reducer::launch_ready() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    launch(next_launch_++);
  }
}

void Reducer::launch(size_t index) {
  Bucket& b = buckets_[index];
  if (hook_ == nullptr) {
    b.work = dist::all_reduce(b.buffer, dist::ReduceOp::AVG, group_, /*async_op=*/true);
    return;
  }
  std::vector<Tensor> grads, params;
  for (size_t j : b.params) {
    grads.push_back(slot_view(j));
    params.push_back(params_[j]);
  }
  GradBucket bucket(index, buckets_.size(), b.buffer, std::move(grads), std::move(params));
  b.future = hook_(bucket);
  KILN_CHECK(b.future != nullptr, "DistributedDataParallel: the communication hook returned no ",
             "future for bucket ", index);
}

void Reducer::finalize() {
  queued_ = false;
  expect_backward_ = false;
  NoGradGuard no_grad;
  // parameters without a gradient: their slots still take part, so every rank reduces alike
  std::string missing;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (ready_[i]) continue;
    missing += (missing.empty() ? "" : ", ") + names_[i];
    const Tensor& g = params_[i].grad();
    slot_view(i).copy_(g.defined() ? g : kiln::zeros_like(params_[i]));
    ready_[i] = 1;
    --buckets_[slots_[i].bucket].pending;
  }
  launch_ready();
  for (Bucket& b : buckets_) {
    if (b.future == nullptr) {
      b.work->wait();
      continue;
    }
    Tensor reduced = b.future->wait();
    b.future = nullptr;
    KILN_CHECK(reduced.defined() && reduced.numel() == b.buffer.numel(),
               "DistributedDataParallel: the communication hook's future gave ",
               reduced.defined() ? str(reduced.numel(), " elements") : str("no tensor"),
               " for a bucket of ", b.buffer.numel(), " (return the reduced bucket buffer)");
    if (reduced.data_ptr() != b.buffer.data_ptr()) b.buffer.copy_(reduced.reshape({-1}));
  }
  std::vector<uint8_t> used_anywhere(params_.size(), 1);
  if (find_unused_) {
    Tensor flags = kiln::empty({static_cast<int64_t>(used_.size())}, TensorOptions().dtype(kUInt8));
    std::copy(used_.begin(), used_.end(), flags.data_ptr<uint8_t>());
    dist::all_reduce(flags, dist::ReduceOp::MAX, group_);
    std::copy(flags.data_ptr<uint8_t>(), flags.data_ptr<uint8_t>() + flags.numel(),
              used_anywhere.begin());
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!used_anywhere[i]) continue;
    Tensor value = slot_view(i);
    Tensor& grad = params_[i].mutable_grad();
    if (as_view_) {
      grad = value;  // See Note [Bucket views]
    } else if (grad.defined()) {
      grad.copy_(value);
    } else {
      grad = value.clone();
    }
  }
  KILN_CHECK(missing.empty(), "DistributedDataParallel: the parameters ", missing,
             " received no gradient in this backward pass (rank ", dist::get_rank(group_),
             "): their gradients were averaged as they stood, but the forward does not use them; ",
             "construct DistributedDataParallel with ",
             "DistributedDataParallelOptions().find_unused_parameters(true) for a model whose ",
             "forward skips parameters");
}

}  // namespace kiln::nn::parallel
