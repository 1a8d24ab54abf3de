// RMSprop: PyTorch 1.13's _single_tensor_rmsprop, operation for operation (see
// kiln/optim/rmsprop.h and Note [Fused multiply-add in PyTorch's updates] in adam.cpp).
#include "option_values.h"

#include <kiln/ops.h>
#include <kiln/optim/rmsprop.h>

namespace kiln::optim {

OptionValues RMSpropOptions::values() const {
  return {{"lr", lr_},
          {"alpha", alpha_},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"momentum", momentum_},
          {"centered", centered_ ? 1.0 : 0.0},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

void RMSpropOptions::set_values(const OptionValues& values) {
  internal::read_options("RMSpropOptions", values,
                         {{"lr", &lr_},
                          {"alpha", &alpha_},
                          {"eps", &eps_},
                          {"weight_decay", &weight_decay_},
                          {"momentum", &momentum_},
                          {"centered", nullptr, &centered_},
                          {"maximize", nullptr, &maximize_}});
}

void RMSpropOptions::validate() const {
  KILN_CHECK_VALUE(lr_ >= 0.0, "RMSprop: Invalid learning rate: ", lr_);
  KILN_CHECK_VALUE(eps_ >= 0.0, "RMSprop: Invalid epsilon value: ", eps_);
  KILN_CHECK_VALUE(momentum_ >= 0.0, "RMSprop: Invalid momentum value: ", momentum_);
  KILN_CHECK_VALUE(weight_decay_ >= 0.0, "RMSprop: Invalid weight_decay value: ", weight_decay_);
  KILN_CHECK_VALUE(alpha_ >= 0.0, "RMSprop: Invalid alpha value: ", alpha_);
}

std::unique_ptr<OptimizerParamState> RMSpropParamState::clone() const {
  auto copy = std::make_unique<RMSpropParamState>();
  for (const auto& [name, t] : tensors()) copy->set_tensor(name, t.clone());
  return copy;
}

std::map<std::string, Tensor> RMSpropParamState::tensors() const {
  std::map<std::string, Tensor> out;
  if (step.defined()) out["step"] = step;
  if (square_avg.defined()) out["square_avg"] = square_avg;
  if (momentum_buffer.defined()) out["momentum_buffer"] = momentum_buffer;
  if (grad_avg.defined()) out["grad_avg"] = grad_avg;
  return out;
}

void RMSpropParamState::set_tensor(const std::string& name, const Tensor& value) {
  if (name == "step") {
    step = value;
  } else if (name == "square_avg") {
    square_avg = value;
  } else if (name == "momentum_buffer") {
    momentum_buffer = value;
  } else if (name == "grad_avg") {
    grad_avg = value;
  } else {
    KILN_CHECK_VALUE(false, "RMSprop has no state '", name,
                     "' (it keeps step, square_avg, momentum_buffer, grad_avg)");
  }
}

void RMSpropParamState::validate() const {
  KILN_CHECK_VALUE(step.defined(), "the state lacks 'step'");
  KILN_CHECK_VALUE(square_avg.defined(), "the state lacks 'square_avg'");
}

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults)
    : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, const RMSpropOptions& defaults)
    : Optimizer("RMSprop", std::move(param_groups), defaults.clone()) {}

std::unique_ptr<OptimizerParamState> RMSprop::make_state() const {
  return std::make_unique<RMSpropParamState>();
}

void RMSprop::step_group(OptimizerParamGroup& group) {
  const auto& o = static_cast<const RMSpropOptions&>(group.options());
  for (Tensor& p : group.params()) {
    if (!p.grad().defined()) continue;
    RMSpropParamState& st = state_of<RMSpropParamState>(p);
    if (!st.step.defined()) {
      st.step = zeros({}, kFloat);  // on the CPU, as PyTorch's
      st.square_avg = zeros_like(p);
    }
    if (o.momentum() > 0 && !st.momentum_buffer.defined()) st.momentum_buffer = zeros_like(p);
    if (o.centered() && !st.grad_avg.defined()) st.grad_avg = zeros_like(p);

    Tensor grad = o.maximize() ? p.grad().neg() : p.grad();
    st.step.add_(1);
    if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
    // addcmul_(grad, grad, value): self + value * grad * grad, in that order.
    st.square_avg.mul_(o.alpha()).add_(grad.mul(1 - o.alpha()).mul_(grad));
    Tensor avg;
    if (o.centered()) {
      st.grad_avg.mul_(o.alpha()).add_(grad, 1 - o.alpha());
      avg = st.square_avg.add(st.grad_avg.neg().mul_(st.grad_avg)).sqrt_();
    } else {
      avg = st.square_avg.sqrt();
    }
    avg.add_(o.eps());
    if (o.momentum() > 0) {
      st.momentum_buffer.mul_(o.momentum()).add_(grad.div(avg));
      p.add_(st.momentum_buffer, -o.lr());
    } else {
      // addcdiv_(grad, avg, value=-lr): self + value * grad / avg.
      p.add_(grad.mul(-o.lr()).div_(avg));
    }
  }
}

}  // namespace kiln::optim
