// The optimizer base: param groups, zero_grad, step's frame, state_dict and load_state_dict.
#include <kiln/autograd.h>
#include <kiln/optim/optimizer.h>

#include <typeinfo>
#include <unordered_set>

namespace kiln::optim {

// --- OptimizerParamGroup ---------------------------------------------------------------------

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params,
                                         std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_),
      options_(other.options_ ? other.options_->clone() : nullptr),
      initial_lr_(other.initial_lr_) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
    initial_lr_ = other.initial_lr_;
  }
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  KILN_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options yet (it gets "
                                  "the optimizer's defaults when added to an optimizer)");
  return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  return const_cast<OptimizerParamGroup*>(this)->options();
}

void OptimizerParamGroup::set_options(std::unique_ptr<OptimizerOptions> options) {
  options_ = std::move(options);
}

// --- Optimizer -------------------------------------------------------------------------------

Optimizer::Optimizer(const char* name, std::vector<OptimizerParamGroup> param_groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : name_(name), defaults_(std::move(defaults)) {
  defaults_->validate();
  KILN_CHECK_VALUE(!param_groups.empty(), name_, ": optimizer got an empty parameter list");
  for (const OptimizerParamGroup& group : param_groups) add_param_group(group);
}

Optimizer::~Optimizer() = default;
Optimizer::Optimizer(Optimizer&&) noexcept = default;
Optimizer& Optimizer::operator=(Optimizer&&) noexcept = default;

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  KILN_CHECK_VALUE(!param_group.params().empty(), name_, ": optimizer got an empty parameter list");
  std::unordered_set<const TensorImpl*> seen;
  for (const OptimizerParamGroup& group : param_groups_) {
    for (const Tensor& p : group.params()) seen.insert(p.impl_ptr().get());
  }
  std::unordered_set<const TensorImpl*> in_group;
  const std::vector<Tensor>& params = param_group.params();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    KILN_CHECK_VALUE(p.defined(), name_, ": parameter ", i, " of the group is undefined");
    KILN_CHECK_VALUE(p.is_leaf(), name_, ": can't optimize a non-leaf Tensor (parameter ", i,
                     " of the group)");
    KILN_CHECK_VALUE(!seen.count(p.impl_ptr().get()), name_,
                     ": some parameters appear in more than one parameter group");
    KILN_CHECK_VALUE(in_group.insert(p.impl_ptr().get()).second, name_,
                     ": the parameter group contains parameter ", i, " twice");
  }
  if (param_group.has_options()) {
    const OptimizerOptions& options = param_group.options();
    const OptimizerOptions& defaults = *defaults_;
    KILN_CHECK_TYPE(typeid(options) == typeid(defaults), name_,
                    ": the parameter group's options are of another optimizer");
  }
  OptimizerParamGroup group(params, param_group.has_options() ? param_group.options().clone()
                                                              : defaults_->clone());
  group.options().validate();
  param_groups_.push_back(std::move(group));
}

Tensor Optimizer::step(const LossClosure& closure) {
  Tensor loss;
  if (closure) {
    AutoGradMode enable_grad(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) step_group(group);
  return loss;
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    for (Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor& grad = p.mutable_grad();
      if (set_to_none) {
        grad = Tensor();
        continue;
      }
      // As PyTorch: a gradient that is part of a graph (create_graph) leaves it first.
      if (grad.grad_fn()) {
        grad.detach_();
      } else {
        grad.requires_grad_(false);
      }
      grad.zero_();
    }
  }
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> all;
  for (const OptimizerParamGroup& group : param_groups_) {
    all.insert(all.end(), group.params().begin(), group.params().end());
  }
  return all;
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const OptimizerParamGroup& group : param_groups_) n += group.params().size();
  return n;
}

OptimizerStateDict Optimizer::state_dict() const {
  NoGradGuard no_grad;
  OptimizerStateDict dict;
  int64_t index = 0;
  for (const OptimizerParamGroup& group : param_groups_) {
    OptimizerStateDict::Group saved;
    saved.options = group.options().values();
    for (const Tensor& p : group.params()) {
      saved.params.push_back(index);
      auto it = state_.find(p.impl_ptr().get());
      if (it != state_.end()) {
        std::map<std::string, Tensor>& tensors = dict.state[index];
        for (const auto& [key, t] : it->second->tensors()) tensors[key] = t.clone();
      }
      ++index;
    }
    dict.param_groups.push_back(std::move(saved));
  }
  return dict;
}

}  // namespace kiln::optim
