// kiln::optim::Optimizer — the base of SGD, Adam and AdamW, as libtorch's torch::optim.
//
// An optimizer holds param groups: each a list of parameters with its own options (lr, ...).
// A group given without options gets a copy of the optimizer's defaults. step() updates every
// parameter whose grad() is defined from its gradient and its per-parameter state (momentum
// buffers, moment estimates), under NoGradGuard and with kiln tensor operations only, so it runs
// on any device. Parameters whose grad is undefined are skipped and get no state.
//
//   auto opt = kiln::optim::Adam({w}, kiln::optim::AdamOptions(0.1));
//   opt.zero_grad();
//   loss.backward();
//   opt.step();
//
// state_dict() snapshots the state as PyTorch's optimizer.state_dict() does: per-parameter
// tensors keyed by the parameter's index across all groups, and each group's options and
// parameter indices. load_state_dict() restores it into an optimizer built over parameters of
// the same shapes, in the same groups.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::optim {

// A group's options as name -> number, as in PyTorch's param_groups dicts (bools are 0 or 1,
// the betas pair is beta1 and beta2).
using OptionValues = std::map<std::string, double>;

// The options of one param group. Each optimizer's options class derives from it.
class KILN_API OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  // A copy of these options.
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // The learning rate (what LR schedulers read and set).
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // Every option by name, for state_dict().
  virtual OptionValues values() const = 0;
  // Sets every option from `values` (as values() names them); throws naming a missing or
  // unknown option.
  virtual void set_values(const OptionValues& values) = 0;
  // Throws ValueError (PyTorch's message) when an option is out of its range.
  virtual void validate() const = 0;
};

// CRTP helper: clone() for an options class.
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// The state an optimizer keeps for one parameter. Each optimizer's state class derives from it.
class KILN_API OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  // A deep copy (tensors cloned).
  virtual std::unique_ptr<OptimizerParamState> clone() const = 0;
  // The defined state tensors by name ("momentum_buffer", "step", "exp_avg", ...), not copied.
  virtual std::map<std::string, Tensor> tensors() const = 0;
  // Sets the state tensor `name`; throws for a name this state does not have.
  virtual void set_tensor(const std::string& name, const Tensor& value) = 0;
  // Throws naming the first tensor that step() needs and this state lacks.
  virtual void validate() const {}
  // Whether the state tensor `name` has its parameter's shape (checked, and converted to the
  // parameter's dtype, by load_state_dict); true for all but "step" unless overridden (L-BFGS
  // keeps flat tensors).
  virtual bool shaped_like_param(const std::string& name) const { return name != "step"; }
};

// Parameters sharing one set of options.
class KILN_API OptimizerParamGroup {
 public:
  // A group that takes the optimizer's defaults.
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: as libtorch
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
  // Copies clone the options.
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) noexcept = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) noexcept = default;

  // Whether the group has its own options (a group in an optimizer always has).
  bool has_options() const { return options_ != nullptr; }
  // The group's options; throws when it has none yet (before joining an optimizer).
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  // Replaces the group's options.
  void set_options(std::unique_ptr<OptimizerOptions> options);
  // The group's parameters (handles: the tensors the optimizer updates in place).
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  // PyTorch's group["initial_lr"]: the lr when the first LR scheduler over the group was made
  // (the base lr of every scheduler made after it); unset before.
  const std::optional<double>& initial_lr() const { return initial_lr_; }
  void set_initial_lr(double lr) { initial_lr_ = lr; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> initial_lr_;
};

// A snapshot of an optimizer's state, shaped like PyTorch's optimizer.state_dict().
struct OptimizerStateDict {
  struct Group {
    OptionValues options;
    std::vector<int64_t> params;  // indices across all groups, in order
  };
  // Per-parameter state by parameter index; parameters never stepped are absent.
  std::map<int64_t, std::map<std::string, Tensor>> state;
  std::vector<Group> param_groups;
};

class KILN_API Optimizer {
 public:
  // A function that recomputes the loss (forward and backward), as libtorch's LossClosure.
  using LossClosure = std::function<Tensor()>;

  // `name` ("SGD", "Adam", ...) starts the messages of errors. Throws ValueError for invalid
  // defaults or groups (see add_param_group).
  Optimizer(const char* name, std::vector<OptimizerParamGroup> param_groups,
            std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  Optimizer(Optimizer&&) noexcept;
  Optimizer& operator=(Optimizer&&) noexcept;

  // One update of every parameter with a gradient. With a closure, calls it first (grad mode
  // on) and returns its loss; otherwise returns an undefined tensor. (L-BFGS overrides it.)
  virtual Tensor step(const LossClosure& closure = nullptr);
  // Adds a group (it takes the defaults when it has no options). Throws for an empty group, an
  // undefined or non-leaf tensor, or a parameter already in a group.
  // (Virtual: ZeroRedundancyOptimizer re-partitions.)
  virtual void add_param_group(const OptimizerParamGroup& param_group);
  // Clears every parameter's gradient: undefined when set_to_none, else zeroed in place.
  void zero_grad(bool set_to_none = true);

  // The groups, in the order they were given or added; their options may be changed in place.
  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  // Every parameter of every group, in order.
  std::vector<Tensor> parameters() const;
  // The number of parameters across all groups.
  size_t size() const;
  // The options that groups added without their own get a copy of.
  OptimizerOptions& defaults() { return *defaults_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  // "SGD", "Adam", "AdamW": starts error messages and tags saved state.
  const char* name() const { return name_; }

  // A snapshot (tensors cloned) of the per-parameter state and the groups' options.
  // (Virtual, as load_state_dict: ZeroRedundancyOptimizer's state lives on several ranks.)
  virtual OptimizerStateDict state_dict() const;
  // Restores a state_dict(): group count and sizes, state names and shapes must match; state
  // tensors are copied to each parameter's device (and floating dtype, except "step").
  virtual void load_state_dict(const OptimizerStateDict& state_dict);

 protected:
  // Updates the parameters of one group (called under NoGradGuard for each group in order).
  virtual void step_group(OptimizerParamGroup& group) = 0;
  // A new, empty state for a parameter of this optimizer (for load_state_dict).
  virtual std::unique_ptr<OptimizerParamState> make_state() const = 0;
  // The state of parameter p, created empty (State's default) on first use.
  template <class State>
  State& state_of(const Tensor& p) {
    auto& slot = state_[p.impl_ptr().get()];
    if (!slot) slot = std::make_unique<State>();
    return static_cast<State&>(*slot);
  }

 private:
  const char* name_;
  std::vector<OptimizerParamGroup> param_groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>> state_;
};

}  // namespace kiln::optim
