// ZeroRedundancyOptimizer, as PyTorch's torch.distributed.optim.ZeroRedundancyOptimizer (ZeRO
// stage 1, Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
// Models", SC 2020): the optimizer's state is sharded across the ranks of a group. Each
// parameter has one owner rank, which alone keeps its state and updates it; after each step
// every parameter is broadcast from its owner, so the replicas stay equal. The trajectory is the
// unsharded optimizer's.
//
//   auto ddp = kiln::nn::parallel::DistributedDataParallel(model);
//   kiln::distributed::optim::ZeroRedundancyOptimizer<kiln::optim::Adam> opt(
//       ddp->parameters(), kiln::optim::AdamOptions(1e-3));
//   ... loss.backward(); opt.step();
//   opt.consolidate_state_dict(0);              // every rank calls it
//   if (rank == 0) auto state = opt.state_dict();  // the unsharded optimizer's state_dict
//
// Parameters are assigned as PyTorch's: by size, largest first, each to the rank holding the
// fewest elements so far.
#pragma once

#include <kiln/distributed.h>
#include <kiln/export.h>
#include <kiln/optim/optimizer.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace kiln::distributed::optim {

// The sharding, for any optimizer class (ZeroRedundancyOptimizer<Adam> below builds it).
class KILN_API ZeroRedundancyOptimizerBase {
 public:
  // Makes the local optimizer over this rank's parameters.
  using Factory =
      std::function<std::unique_ptr<kiln::optim::Optimizer>(std::vector<Tensor> params)>;

  ZeroRedundancyOptimizerBase(std::vector<Tensor> params, Factory make_local,
                              ProcessGroupPtr group = nullptr);
  virtual ~ZeroRedundancyOptimizerBase();

  // Updates this rank's parameters with the local optimizer, then broadcasts every parameter
  // from its owner (every rank calls it). Returns the closure's loss, as Optimizer::step.
  Tensor step(const kiln::optim::Optimizer::LossClosure& closure = nullptr);
  // Clears the gradients of every parameter (not only this rank's).
  void zero_grad(bool set_to_none = true);

  // Gathers every rank's state on rank `to` (global rank; every rank of the group calls it).
  void consolidate_state_dict(int to = 0);
  // On the rank consolidate_state_dict() gathered to: the state_dict of the unsharded optimizer
  // over all the parameters (one group, the local optimizer's options). Throws elsewhere.
  kiln::optim::OptimizerStateDict state_dict() const;
  // Every rank loads its parameters' part of an unsharded state_dict (the format state_dict()
  // gives).
  void load_state_dict(const kiln::optim::OptimizerStateDict& state);

  // All parameters, in the order given.
  const std::vector<Tensor>& parameters() const { return params_; }
  // The group rank owning parameter i.
  int owner(size_t i) const { return owner_[i]; }
  // This rank's optimizer (null when it owns no parameter).
  kiln::optim::Optimizer* local_optimizer() const { return local_.get(); }

 private:
  int global_rank(int group_rank) const;

  std::vector<Tensor> params_;
  ProcessGroupPtr group_;
  int rank_ = 0, size_ = 1;
  std::vector<int> owner_;         // group rank of each parameter
  std::vector<int64_t> local_of_;  // index in its owner's local optimizer
  std::unique_ptr<kiln::optim::Optimizer> local_;
  std::optional<kiln::optim::OptimizerStateDict> consolidated_;
  kiln::optim::OptionValues options_;  // the local optimizer's group options (any rank's)
};

// ZeroRedundancyOptimizer<kiln::optim::Adam> opt(params, AdamOptions(1e-3), group): the local
// optimizer is OptimizerClass(own params, defaults).
template <class OptimizerClass>
class ZeroRedundancyOptimizer : public ZeroRedundancyOptimizerBase {
 public:
  template <class Options>
  ZeroRedundancyOptimizer(std::vector<Tensor> params, const Options& defaults,
                          ProcessGroupPtr group = nullptr)
      : ZeroRedundancyOptimizerBase(
            std::move(params),
            [defaults](std::vector<Tensor> mine) {
              return std::make_unique<OptimizerClass>(std::move(mine), defaults);
            },
            std::move(group)) {}
};

}  // namespace kiln::distributed::optim
