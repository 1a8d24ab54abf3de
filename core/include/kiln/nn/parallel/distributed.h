// DistributedDataParallel, as PyTorch's torch.nn.parallel.DistributedDataParallel: wraps a module
// so that each rank of a process group trains a replica on its own part of the batch and the
// gradients are averaged across ranks during backward.
//
//   kiln::distributed::init_process_group();   // env://, as kiln-launch sets it
//   auto ddp = kiln::nn::parallel::DistributedDataParallel(model);
//   auto loss = kiln::nn::functional::mse_loss(ddp(x), y);  // ddp->forward(x)
//   loss.backward();                                        // gradients averaged over ranks
//   optimizer.step();
//
// When built, it broadcasts the module's parameters and buffers from rank 0, and buffers again
// before each forward (broadcast_buffers). See Note [Gradient buckets] in
// core/src/nn/parallel/reducer.cpp for how gradients travel.
#pragma once

#include <kiln/distributed.h>
#include <kiln/nn/module.h>
#include <kiln/nn/modules/any.h>
#include <kiln/nn/modules/container.h>
#include <kiln/nn/options.h>
#include <kiln/nn/parallel/comm_hooks.h>

#include <memory>
#include <ostream>
#include <type_traits>
#include <utility>

namespace kiln::nn::parallel {

struct KILN_API DistributedDataParallelOptions {
  // The group whose ranks hold the replicas; null: the default group.
  KILN_ARG(distributed::ProcessGroupPtr, process_group) = nullptr;
  // The size of a gradient bucket in MiB (the first bucket is 1 MiB, as PyTorch's).
  KILN_ARG(double, bucket_cap_mb) = 25.0;
  // Parameters the forward did not use are marked ready at once (a traversal of the graph after
  // each forward); without it, such a parameter is an error at the end of backward.
  KILN_ARG(bool, find_unused_parameters) = false;
  // Buffers (running statistics) are broadcast from rank 0 before each forward.
  KILN_ARG(bool, broadcast_buffers) = true;
  // After the first synchronised backward, each parameter's grad() is a view of its bucket, so
  // the reduced gradients need no copy back (PyTorch's). Keep it with zero_grad(false): a
  // zero_grad() that sets gradients to none undoes the views until the next backward.
  KILN_ARG(bool, gradient_as_bucket_view) = false;
};

class Reducer;

namespace detail {
// The implementation type a module argument holds: Linear -> LinearImpl, shared_ptr<M> -> M.
template <class M>
struct wrapped_impl {
  using type = typename nn::detail::contained_of<M>::type;
};
template <class M>
struct wrapped_impl<std::shared_ptr<M>> {
  using type = M;
};
template <class M>
std::shared_ptr<M> shared_module(std::shared_ptr<M> module) {
  return module;
}
template <class M>
  requires requires { typename M::ContainedType; }
std::shared_ptr<typename M::ContainedType> shared_module(const M& holder) { return holder.ptr(); }
template <class M>
  requires(std::is_base_of_v<Module, M>)
std::shared_ptr<M> shared_module(M&& module) { return std::make_shared<M>(std::move(module)); }
}  // namespace detail

class KILN_API DistributedDataParallelImpl : public Module {
 public:
  // Wraps a module: a holder (Linear, Sequential, a KILN_MODULE), a shared pointer, or a module
  // value (moved). Its forward is called through AnyModule (one forward(), not overloaded or a
  // template), or, for a Sequential, through Sequential's own forward (any arguments).
  template <class M>
  explicit DistributedDataParallelImpl(M module,
                                       const DistributedDataParallelOptions& options = {}) {
    using Impl = typename detail::wrapped_impl<std::decay_t<M>>::type;
    static_assert(std::is_base_of_v<Module, Impl>,
                  "DistributedDataParallel wraps a module (a holder, a shared_ptr or a value)");
    std::shared_ptr<Impl> shared = detail::shared_module(std::move(module));
    if constexpr (std::is_base_of_v<SequentialImpl, Impl>) {
      sequential_ = shared;
    } else {
      static_assert(
          requires { &Impl::forward; },
          "DistributedDataParallel: the module's forward() must be one function (not "
          "overloaded or a template), as AnyModule binds it; or wrap a Sequential");
      any_ = AnyModule(shared);
    }
    init(shared, options);
  }

  // Calls the wrapped module's forward; gradients of its output are synchronised in backward
  // (unless inside no_sync()).
  template <class ReturnType = Tensor, class... Args>
  ReturnType forward(Args&&... args) {
    before_forward();
    ReturnType out = sequential_ != nullptr
                         ? sequential_->forward<ReturnType>(std::forward<Args>(args)...)
                         : any_.forward<ReturnType>(std::forward<Args>(args)...);
    if constexpr (std::is_same_v<ReturnType, Tensor>) {
      after_forward({out});
    } else {
      after_forward({});
    }
    return out;
  }

  // While the guard lives, backward passes accumulate gradients locally without communicating
  // (gradient accumulation); the first backward after it averages the accumulated gradients.
  class KILN_API NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallelImpl& ddp);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallelImpl& ddp_;
    bool previous_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  // Replaces the buckets' all-reduce by `hook` (see kiln/nn/parallel/comm_hooks.h); once, before
  // the first backward (PyTorch's register_comm_hook). The second form passes `state` first:
  // register_comm_hook(group, default_hooks::fp16_compress_hook).
  void register_comm_hook(CommHook hook);
  template <class State, class Hook>
  void register_comm_hook(State state, Hook hook) {
    register_comm_hook(CommHook([state = std::move(state), hook = std::move(hook)](
                                    GradBucket& bucket) { return hook(state, bucket); }));
  }

  // The wrapped module (registered as "module": parameters are named "module.weight", ...).
  std::shared_ptr<Module> module() const { return module_; }
  const DistributedDataParallelOptions& options() const { return options_; }
  // The buckets' sizes in elements, in the order they are reduced (for tests and tuning).
  std::vector<int64_t> bucket_sizes() const;

  void pretty_print(std::ostream& stream) const override;

 private:
  void init(std::shared_ptr<Module> module, const DistributedDataParallelOptions& options);
  void before_forward();
  void after_forward(const std::vector<Tensor>& outputs);

  std::shared_ptr<Module> module_;
  AnyModule any_;                               // the module's forward, or
  std::shared_ptr<SequentialImpl> sequential_;  // a Sequential's
  DistributedDataParallelOptions options_;
  std::shared_ptr<Reducer> reducer_;
  bool require_sync_ = true;
};
KILN_MODULE(DistributedDataParallel);

}  // namespace kiln::nn::parallel
