// Optimizer::load_state_dict: checks everything first, then replaces the options and the state,
// so a state dict that does not fit leaves the optimizer as it was.
#include <kiln/autograd.h>
#include <kiln/optim/optimizer.h>

namespace kiln::optim {
namespace {

std::string shape_str(IntArrayRef sizes) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << sizes[i];
  out << "]";
  return out.str();
}

// The saved tensor `t` as parameter p's state `key`: "step" stays a float32 CPU scalar (as in
// PyTorch), the others move to p's device and, for floating parameters, p's dtype; those that
// are not shaped like the parameter (L-BFGS's) keep their shape and dtype.
Tensor convert_state(const char* who, int64_t index, const std::string& key, const Tensor& t,
                     const Tensor& p, const OptimizerParamState& state) {
  KILN_CHECK_VALUE(t.defined(), who, ": state '", key, "' of parameter ", index,
                   " is an undefined tensor");
  if (key == "step") {
    KILN_CHECK_VALUE(t.numel() == 1, who, ": state 'step' of parameter ", index,
                     " must have one element, got shape ", shape_str(t.sizes()));
    return t.reshape({}).to(Device(kCPU), kFloat, /*copy=*/true);
  }
  if (!state.shaped_like_param(key)) return t.to(p.device(), t.dtype(), /*copy=*/true);
  KILN_CHECK_VALUE(t.sizes().equals(p.sizes()), who, ": state '", key, "' of parameter ", index,
                   " has shape ", shape_str(t.sizes()), " but the parameter has shape ",
                   shape_str(p.sizes()));
  ScalarType dtype = p.is_floating_point() ? p.dtype() : t.dtype();
  return t.to(p.device(), dtype, /*copy=*/true);
}

}  // namespace

void Optimizer::load_state_dict(const OptimizerStateDict& dict) {
  NoGradGuard no_grad;
  KILN_CHECK_VALUE(dict.param_groups.size() == param_groups_.size(), name_,
                   ": loaded state dict has a different number of parameter groups (",
                   dict.param_groups.size(), ") than the optimizer (", param_groups_.size(), ")");
  // Saved parameter index -> this optimizer's parameter, group by group as PyTorch matches them.
  std::map<int64_t, Tensor> params_by_index;
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const OptimizerStateDict::Group& saved = dict.param_groups[g];
    const std::vector<Tensor>& params = param_groups_[g].params();
    KILN_CHECK_VALUE(saved.params.size() == params.size(), name_,
                     ": loaded state dict contains a parameter group that doesn't match the size "
                     "of optimizer's group (group ",
                     g, " has ", saved.params.size(), " parameters in the state dict and ",
                     params.size(), " in the optimizer)");
    for (size_t i = 0; i < params.size(); ++i) {
      KILN_CHECK_VALUE(params_by_index.emplace(saved.params[i], params[i]).second, name_,
                       ": loaded state dict lists parameter ", saved.params[i], " twice");
    }
    std::unique_ptr<OptimizerOptions> group_options = param_groups_[g].options().clone();
    try {
      group_options->set_values(saved.options);
      group_options->validate();
    } catch (const Error& e) {
      throw ValueError(detail::str(name_, ": parameter group ", g,
                                   " of the loaded state dict: ", e.what()));
    }
    options.push_back(std::move(group_options));
  }

  std::unordered_map<const TensorImpl*, std::unique_ptr<OptimizerParamState>> state;
  for (const auto& [index, tensors] : dict.state) {
    auto it = params_by_index.find(index);
    KILN_CHECK_VALUE(it != params_by_index.end(), name_, ": loaded state dict has state for ",
                     "parameter ", index, ", which is in none of its parameter groups");
    const Tensor& p = it->second;
    std::unique_ptr<OptimizerParamState> param_state = make_state();
    for (const auto& [key, t] : tensors) {
      Tensor value = convert_state(name_, index, key, t, p, *param_state);
      try {
        param_state->set_tensor(key, value);
      } catch (const Error& e) {
        throw ValueError(detail::str(name_, ": state of parameter ", index, ": ", e.what()));
      }
    }
    try {
      param_state->validate();
    } catch (const Error& e) {
      throw ValueError(detail::str(name_, ": state of parameter ", index, ": ", e.what()));
    }
    state[p.impl_ptr().get()] = std::move(param_state);
  }

  for (size_t g = 0; g < param_groups_.size(); ++g) {
    param_groups_[g].set_options(std::move(options[g]));
  }
  state_ = std::move(state);
}

}  // namespace kiln::optim
