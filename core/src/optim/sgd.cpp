// SGD: PyTorch 1.13's _single_tensor_sgd, operation for operation (see kiln/optim/sgd.h and
// Note [Fused multiply-add in PyTorch's updates] in adam.cpp).
#include "option_values.h"

#include <kiln/optim/sgd.h>

namespace kiln::optim {

OptionValues SGDOptions::values() const {
  return {{"lr", lr_},
          {"momentum", momentum_},
          {"dampening", dampening_},
          {"weight_decay", weight_decay_},
          {"nesterov", nesterov_ ? 1.0 : 0.0},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

void SGDOptions::set_values(const OptionValues& values) {
  internal::read_options("SGDOptions", values,
                         {{"lr", &lr_},
                          {"momentum", &momentum_},
                          {"dampening", &dampening_},
                          {"weight_decay", &weight_decay_},
                          {"nesterov", nullptr, &nesterov_},
                          {"maximize", nullptr, &maximize_}});
}

void SGDOptions::validate() const {
  KILN_CHECK_VALUE(lr_ >= 0.0, "SGD: Invalid learning rate: ", lr_);
  KILN_CHECK_VALUE(momentum_ >= 0.0, "SGD: Invalid momentum value: ", momentum_);
  KILN_CHECK_VALUE(weight_decay_ >= 0.0, "SGD: Invalid weight_decay value: ", weight_decay_);
  KILN_CHECK_VALUE(!nesterov_ || (momentum_ > 0 && dampening_ == 0),
                   "SGD: Nesterov momentum requires a momentum and zero dampening (momentum ",
                   momentum_, ", dampening ", dampening_, ")");
}

std::unique_ptr<OptimizerParamState> SGDParamState::clone() const {
  auto copy = std::make_unique<SGDParamState>();
  if (momentum_buffer.defined()) copy->momentum_buffer = momentum_buffer.clone();
  return copy;
}

std::map<std::string, Tensor> SGDParamState::tensors() const {
  std::map<std::string, Tensor> out;
  if (momentum_buffer.defined()) out["momentum_buffer"] = momentum_buffer;
  return out;
}

void SGDParamState::set_tensor(const std::string& name, const Tensor& value) {
  KILN_CHECK_VALUE(name == "momentum_buffer", "SGD has no state '", name,
                   "' (it keeps momentum_buffer)");
  momentum_buffer = value;
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, const SGDOptions& defaults)
    : Optimizer("SGD", std::move(param_groups), defaults.clone()) {}

std::unique_ptr<OptimizerParamState> SGD::make_state() const {
  return std::make_unique<SGDParamState>();
}

void SGD::step_group(OptimizerParamGroup& group) {
  const auto& o = static_cast<const SGDOptions&>(group.options());
  for (Tensor& p : group.params()) {
    if (!p.grad().defined()) continue;
    Tensor d_p = o.maximize() ? p.grad().neg() : p.grad();
    if (o.weight_decay() != 0) d_p = d_p.add(p, o.weight_decay());
    if (o.momentum() != 0) {
      Tensor& buf = state_of<SGDParamState>(p).momentum_buffer;
      if (!buf.defined()) {
        buf = d_p.clone();  // the first step takes the gradient whole: no dampening
      } else {
        buf.mul_(o.momentum()).add_(d_p, 1 - o.dampening());
      }
      d_p = o.nesterov() ? d_p.add(buf, o.momentum()) : buf;
    }
    p.add_(d_p, -o.lr());
  }
}

}  // namespace kiln::optim
