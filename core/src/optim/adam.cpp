// Adam and AdamW: PyTorch 1.13's _single_tensor_adam and _single_tensor_adamw, operation for
// operation and in the same rounding order (see kiln/optim/adam.h).
//
// Note [Fused multiply-add in PyTorch's updates]
// On an AVX2 CPU, PyTorch's add(a, b, alpha) and addcmul compute a + alpha * b with one rounding
// (a fused multiply-add; its float32 SGD results equal FMA results bit for bit), while kiln's CPU
// plugin, built for baseline x86-64, rounds the product and the sum separately. The updates here
// therefore agree with PyTorch's to about an ulp per operation rather than bit for bit; the
// golden tests (tests/optim) measure and bound the difference.
#include "option_values.h"

#include <kiln/ops.h>
#include <kiln/optim/adam.h>

#include <cmath>

namespace kiln::optim {

// --- options ---------------------------------------------------------------------------------

template <class Derived>
OptionValues AdamOptionsBase<Derived>::values() const {
  return {{"lr", lr_},
          {"beta1", std::get<0>(betas_)},
          {"beta2", std::get<1>(betas_)},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"amsgrad", amsgrad_ ? 1.0 : 0.0},
          {"maximize", maximize_ ? 1.0 : 0.0}};
}

template <class Derived>
void AdamOptionsBase<Derived>::set_values(const OptionValues& values) {
  const char* who = std::is_same_v<Derived, AdamWOptions> ? "AdamWOptions" : "AdamOptions";
  internal::read_options(who, values,
                         {{"lr", &lr_},
                          {"beta1", &std::get<0>(betas_)},
                          {"beta2", &std::get<1>(betas_)},
                          {"eps", &eps_},
                          {"weight_decay", &weight_decay_},
                          {"amsgrad", nullptr, &amsgrad_},
                          {"maximize", nullptr, &maximize_}});
}

template <class Derived>
void AdamOptionsBase<Derived>::validate() const {
  const char* who = std::is_same_v<Derived, AdamWOptions> ? "AdamW" : "Adam";
  double beta1 = std::get<0>(betas_);
  double beta2 = std::get<1>(betas_);
  KILN_CHECK_VALUE(lr_ >= 0.0, who, ": Invalid learning rate: ", lr_);
  KILN_CHECK_VALUE(eps_ >= 0.0, who, ": Invalid epsilon value: ", eps_);
  KILN_CHECK_VALUE(beta1 >= 0.0 && beta1 < 1.0, who,
                   ": Invalid beta parameter at index 0: ", beta1);
  KILN_CHECK_VALUE(beta2 >= 0.0 && beta2 < 1.0, who,
                   ": Invalid beta parameter at index 1: ", beta2);
  KILN_CHECK_VALUE(weight_decay_ >= 0.0, who, ": Invalid weight_decay value: ", weight_decay_);
}

template class AdamOptionsBase<AdamOptions>;
template class AdamOptionsBase<AdamWOptions>;

// --- state -----------------------------------------------------------------------------------

std::unique_ptr<OptimizerParamState> AdamParamState::clone() const {
  auto copy = std::make_unique<AdamParamState>();
  for (const auto& [name, t] : tensors()) copy->set_tensor(name, t.clone());
  return copy;
}

std::map<std::string, Tensor> AdamParamState::tensors() const {
  std::map<std::string, Tensor> out;
  if (step.defined()) out["step"] = step;
  if (exp_avg.defined()) out["exp_avg"] = exp_avg;
  if (exp_avg_sq.defined()) out["exp_avg_sq"] = exp_avg_sq;
  if (max_exp_avg_sq.defined()) out["max_exp_avg_sq"] = max_exp_avg_sq;
  return out;
}

void AdamParamState::set_tensor(const std::string& name, const Tensor& value) {
  if (name == "step") {
    step = value;
  } else if (name == "exp_avg") {
    exp_avg = value;
  } else if (name == "exp_avg_sq") {
    exp_avg_sq = value;
  } else if (name == "max_exp_avg_sq") {
    max_exp_avg_sq = value;
  } else {
    KILN_CHECK_VALUE(false, "Adam has no state '", name,
                     "' (it keeps step, exp_avg, exp_avg_sq, max_exp_avg_sq)");
  }
}

void AdamParamState::validate() const {
  KILN_CHECK_VALUE(step.defined(), "the state lacks 'step'");
  KILN_CHECK_VALUE(exp_avg.defined(), "the state lacks 'exp_avg'");
  KILN_CHECK_VALUE(exp_avg_sq.defined(), "the state lacks 'exp_avg_sq'");
}

// --- the update ------------------------------------------------------------------------------

namespace {

struct AdamStep {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize;
  bool decoupled;  // AdamW
};

template <class Options>
AdamStep adam_step_of(const Options& o, bool decoupled) {
  return {o.lr(),
          std::get<0>(o.betas()),
          std::get<1>(o.betas()),
          o.eps(),
          o.weight_decay(),
          o.amsgrad(),
          o.maximize(),
          decoupled};
}

void adam_update(Tensor& p, AdamParamState& st, const AdamStep& c) {
  if (!st.step.defined()) {
    st.step = zeros({}, kFloat);  // on the CPU, as PyTorch's non-capturable step
    st.exp_avg = zeros_like(p);
    st.exp_avg_sq = zeros_like(p);
  }
  if (c.amsgrad && !st.max_exp_avg_sq.defined()) st.max_exp_avg_sq = zeros_like(p);

  Tensor grad = c.maximize ? p.grad().neg() : p.grad();
  st.step.add_(1);
  if (c.decoupled) {
    if (c.weight_decay != 0) p.mul_(1 - c.lr * c.weight_decay);
  } else if (c.weight_decay != 0) {
    grad = grad.add(p, c.weight_decay);
  }
  st.exp_avg.mul_(c.beta1).add_(grad, 1 - c.beta1);
  // addcmul_(grad, grad, value): self + value * grad * grad, in that order.
  st.exp_avg_sq.mul_(c.beta2).add_(grad.mul(1 - c.beta2).mul_(grad));

  double step = st.step.item<double>();
  double bias_correction1 = 1 - std::pow(c.beta1, step);
  double bias_correction2 = 1 - std::pow(c.beta2, step);
  double step_size = c.lr / bias_correction1;
  double bias_correction2_sqrt = std::sqrt(bias_correction2);

  Tensor denom;
  if (c.amsgrad) {
    st.max_exp_avg_sq.copy_(maximum(st.max_exp_avg_sq, st.exp_avg_sq));
    denom = st.max_exp_avg_sq.sqrt();
  } else {
    denom = st.exp_avg_sq.sqrt();
  }
  denom.div_(bias_correction2_sqrt).add_(c.eps);
  // addcdiv_(exp_avg, denom, value=-step_size): self + value * exp_avg / denom.
  p.add_(st.exp_avg.mul(-step_size).div_(denom));
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, const AdamOptions& defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, const AdamOptions& defaults)
    : Optimizer("Adam", std::move(param_groups), defaults.clone()) {}

std::unique_ptr<OptimizerParamState> Adam::make_state() const {
  return std::make_unique<AdamParamState>();
}

void Adam::step_group(OptimizerParamGroup& group) {
  AdamStep c = adam_step_of(static_cast<const AdamOptions&>(group.options()), false);
  for (Tensor& p : group.params()) {
    if (p.grad().defined()) adam_update(p, state_of<AdamParamState>(p), c);
  }
}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, const AdamWOptions& defaults)
    : Optimizer("AdamW", std::move(param_groups), defaults.clone()) {}

std::unique_ptr<OptimizerParamState> AdamW::make_state() const {
  return std::make_unique<AdamParamState>();
}

void AdamW::step_group(OptimizerParamGroup& group) {
  AdamStep c = adam_step_of(static_cast<const AdamWOptions&>(group.options()), true);
  for (Tensor& p : group.params()) {
    if (p.grad().defined()) adam_update(p, state_of<AdamParamState>(p), c);
  }
}

}  // namespace kiln::optim
