// ZeroRedundancyOptimizer, as PyTorch's torch.distributed.optim.ZeroRedundancyOptimizer (ZeRO
// stage 1, Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
// Models", SC 2020): the optimizer's state is sharded across the ranks of a group. Each
// parameter has one owner rank, whose local optimizer alone keeps its state and updates it;
// after each step every parameter is broadcast from its owner, so the replicas stay equal. The
// trajectory is the unsharded optimizer's.
//
// It is a kiln::optim::Optimizer: its param_groups() are all the parameters with their options
// (several groups, each with its own; add_param_group), so LR schedulers drive it; step() copies
// each group's options to the local optimizer's part of that group first.
//
//   auto ddp = kiln::nn::parallel::DistributedDataParallel(model);
//   kiln::distributed::optim::ZeroRedundancyOptimizer<kiln::optim::Adam> opt(
//       ddp->parameters(), kiln::optim::AdamOptions(1e-3));
//   kiln::optim::StepLR sched(opt, 10);
//   ... loss.backward(); opt.step(); sched.step();
//   opt.consolidate_state_dict(0);              // every rank calls it
//   if (rank == 0) auto state = opt.state_dict();  // the unsharded optimizer's state_dict
//
// Parameters are assigned as PyTorch's: group by group, within a group by size, largest first,
// each to the rank holding the fewest elements so far (so a group added later leaves the
// earlier assignments as they are).
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
class KILN_API ZeroRedundancyOptimizerBase : public kiln::optim::Optimizer {
 public:
  // Makes the local optimizer over this rank's part of the groups (each with its options;
  // groups where this rank owns nothing are left out).
  using Factory = std::function<std::unique_ptr<kiln::optim::Optimizer>(
      std::vector<kiln::optim::OptimizerParamGroup> groups)>;

  ZeroRedundancyOptimizerBase(std::vector<kiln::optim::OptimizerParamGroup> param_groups,
                              std::unique_ptr<kiln::optim::OptimizerOptions> defaults,
                              Factory make_local, ProcessGroupPtr group = nullptr);
  ~ZeroRedundancyOptimizerBase() override;

  // Updates this rank's parameters with the local optimizer (after copying each group's options
  // to it), then broadcasts every parameter from its owner (every rank calls it). Returns the
  // closure's loss, as Optimizer::step.
  Tensor step(const LossClosure& closure = nullptr) override;
  // Adds a group (every rank calls it, with the same group): its parameters are assigned to
  // ranks, and this rank's part joins the local optimizer.
  void add_param_group(const kiln::optim::OptimizerParamGroup& param_group) override;

  // Gathers every rank's state on rank `to` (global rank; every rank of the group calls it).
  void consolidate_state_dict(int to = 0);
  // On the rank consolidate_state_dict() gathered to: the state_dict of the unsharded optimizer
  // over all the parameters (every group, with its options). Throws elsewhere.
  kiln::optim::OptimizerStateDict state_dict() const override;
  // Every rank loads its parameters' part of an unsharded state_dict (the format state_dict()
  // gives) and every group's options. Throws ValueError, before changing anything, for a state
  // of another number of groups or parameters, or whose tensors have other shapes than the
  // parameters.
  void load_state_dict(const kiln::optim::OptimizerStateDict& state) override;

  // The group rank owning parameter i (counted across the groups, as parameters() lists them).
  int owner(size_t i) const { return owner_.at(i); }
  // This rank's optimizer (null when it owns no parameter).
  kiln::optim::Optimizer* local_optimizer() const { return local_.get(); }

 protected:
  // Not called: step() is the local optimizer's.
  void step_group(kiln::optim::OptimizerParamGroup& group) override;
  std::unique_ptr<kiln::optim::OptimizerParamState> make_state() const override;

 private:
  int global_rank(int group_rank) const;
  // Assigns the parameters of param_groups()[g] and gives this rank's part to the local
  // optimizer.
  void partition_group(size_t g);
  // Copies each group's options to its part in the local optimizer.
  void sync_options();

  Factory make_local_;
  ProcessGroupPtr group_;
  int rank_ = 0, size_ = 1;
  std::vector<int64_t> filled_;    // elements assigned to each rank so far
  std::vector<int> owner_;         // group rank of each parameter
  std::vector<int64_t> local_of_;  // index in its owner's local optimizer
  std::vector<int> local_group_;   // each group's index in the local optimizer, or -1
  std::unique_ptr<kiln::optim::Optimizer> local_;
  std::optional<kiln::optim::OptimizerStateDict> consolidated_;
};

// ZeroRedundancyOptimizer<kiln::optim::Adam> opt(params, AdamOptions(1e-3), group), or over
// param groups with their own options: the local optimizer is OptimizerClass(own part of the
// groups, defaults).
template <class OptimizerClass>
class ZeroRedundancyOptimizer : public ZeroRedundancyOptimizerBase {
 public:
  template <class Options>
  ZeroRedundancyOptimizer(std::vector<kiln::optim::OptimizerParamGroup> param_groups,
                          const Options& defaults, ProcessGroupPtr group = nullptr)
      : ZeroRedundancyOptimizerBase(
            std::move(param_groups), std::make_unique<Options>(defaults),
            [defaults](std::vector<kiln::optim::OptimizerParamGroup> mine) {
              return std::make_unique<OptimizerClass>(std::move(mine), defaults);
            },
            std::move(group)) {}
  template <class Options>
  ZeroRedundancyOptimizer(std::vector<Tensor> params, const Options& defaults,
                          ProcessGroupPtr group = nullptr)
      : ZeroRedundancyOptimizer(
            std::vector<kiln::optim::OptimizerParamGroup>{
                kiln::optim::OptimizerParamGroup(std::move(params))},
            defaults, std::move(group)) {}
};

}  // namespace kiln::distributed::optim
