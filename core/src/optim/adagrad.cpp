// Adagrad: PyTorch 1.13's _single_tensor_adagrad (dense gradients), operation for operation
// (see kiln/optim/adagrad.h and Note [Fused multiply-add in PyTorch's updates] in adam.cpp).
#include "option_values.h"

#include <kiln/autograd.h>
#include <kiln/ops.h>
#include <kiln/optim/adagrad.h>

namespace kiln::optim {

OptionValues AdagradOptions::values() const {
  return {{"lr", lr_},
          {"lr_decay", lr_decay_},
          {"weight_decay", weight_decay_},
          {"initial_accumulator_value", initial_accumulator_value_},
          {"eps", eps_},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

void AdagradOptions::set_values(const OptionValues& values) {
  internal::read_options("AdagradOptions", values,
                         {{"lr", &lr_},
                          {"lr_decay", &lr_decay_},
                          {"weight_decay", &weight_decay_},
                          {"initial_accumulator_value", &initial_accumulator_value_},
                          {"eps", &eps_},
                          {"maximize", nullptr, &maximize_}});
}

void AdagradOptions::validate() const {
  KILN_CHECK_VALUE(lr_ >= 0.0, "Adagrad: Invalid learning rate: ", lr_);
  KILN_CHECK_VALUE(lr_decay_ >= 0.0, "Adagrad: Invalid lr_decay value: ", lr_decay_);
  KILN_CHECK_VALUE(weight_decay_ >= 0.0, "Adagrad: Invalid weight_decay value: ", weight_decay_);
  KILN_CHECK_VALUE(initial_accumulator_value_ >= 0.0,
                   "Adagrad: Invalid initial_accumulator_value value: ",
                   initial_accumulator_value_);
  KILN_CHECK_VALUE(eps_ >= 0.0, "Adagrad: Invalid epsilon value: ", eps_);
}

std::unique_ptr<OptimizerParamState> AdagradParamState::clone() const {
  auto copy = std::make_unique<AdagradParamState>();
  if (step.defined()) copy->step = step.clone();
  if (sum.defined()) copy->sum = sum.clone();
  return copy;
}

std::map<std::string, Tensor> AdagradParamState::tensors() const {
  std::map<std::string, Tensor> out;
  if (step.defined()) out["step"] = step;
  if (sum.defined()) out["sum"] = sum;
  return out;
}

void AdagradParamState::set_tensor(const std::string& name, const Tensor& value) {
  if (name == "step") {
    step = value;
  } else if (name == "sum") {
    sum = value;
  } else {
    KILN_CHECK_VALUE(false, "Adagrad has no state '", name, "' (it keeps step, sum)");
  }
}

void AdagradParamState::validate() const {
  KILN_CHECK_VALUE(step.defined(), "the state lacks 'step'");
  KILN_CHECK_VALUE(sum.defined(), "the state lacks 'sum'");
}

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults)
    : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, const AdagradOptions& defaults)
    : Optimizer("Adagrad", std::move(param_groups), defaults.clone()) {
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : this->param_groups()) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    for (const Tensor& p : group.params()) state_for(p, o);
  }
}

std::unique_ptr<OptimizerParamState> Adagrad::make_state() const {
  return std::make_unique<AdagradParamState>();
}

AdagradParamState& Adagrad::state_for(const Tensor& p, const AdagradOptions& o) {
  AdagradParamState& st = state_of<AdagradParamState>(p);
  if (!st.step.defined()) {
    st.step = zeros({}, kFloat);  // on the CPU, as PyTorch's
    st.sum = full_like(p, o.initial_accumulator_value());
  }
  return st;
}

void Adagrad::step_group(OptimizerParamGroup& group) {
  const auto& o = static_cast<const AdagradOptions&>(group.options());
  for (Tensor& p : group.params()) {
    if (!p.grad().defined()) continue;
    AdagradParamState& st = state_for(p, o);
    st.step.add_(1);
    double step = st.step.item<double>();
    Tensor grad = o.maximize() ? p.grad().neg() : p.grad();
    if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
    double clr = o.lr() / (1 + (step - 1) * o.lr_decay());
    st.sum.add_(grad.mul(grad));  // addcmul_(grad, grad, value=1)
    Tensor std = st.sum.sqrt().add_(o.eps());
    // addcdiv_(grad, std, value=-clr): self + value * grad / std.
    p.add_(grad.mul(-clr).div_(std));
  }
}

}  // namespace kiln::optim
