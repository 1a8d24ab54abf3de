// LR schedulers: PyTorch 1.13's _LRScheduler.step and the get_lr of StepLR and
// CosineAnnealingLR, with the same floating-point expressions in the same order.
#include <kiln/optim/lr_scheduler.h>

#include <cmath>
#include <numbers>

namespace kiln::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  base_lrs_ = get_current_lrs();
}

std::vector<double> LRScheduler::get_current_lrs() const {
  std::vector<double> lrs;
  for (const OptimizerParamGroup& group : optimizer_.param_groups()) {
    lrs.push_back(group.options().get_lr());
  }
  return lrs;
}

void LRScheduler::initial_step() { step(); }

void LRScheduler::step() {
  KILN_CHECK(optimizer_.param_groups().size() == base_lrs_.size(), "LRScheduler: the optimizer "
             "has ", optimizer_.param_groups().size(), " parameter groups but had ",
             base_lrs_.size(), " when the scheduler was created");
  ++last_epoch_;
  std::vector<double> lrs = get_lrs();
  std::vector<OptimizerParamGroup>& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = std::move(lrs);
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  KILN_CHECK_VALUE(step_size >= 1, "StepLR: step_size must be at least 1, got ", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  if (last_epoch() == 0 || last_epoch() % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  KILN_CHECK_VALUE(T_max >= 1, "CosineAnnealingLR: T_max must be at least 1, got ", T_max);
  initial_step();
}

// PyTorch's recursive form (its branch for a scheduler resumed at last_epoch > 0 is not needed:
// kiln's schedulers always start at epoch 0).
std::vector<double> CosineAnnealingLR::get_lrs() {
  constexpr double pi = std::numbers::pi;
  const int64_t epoch = last_epoch();
  const double T_max = static_cast<double>(T_max_);
  std::vector<double> lrs = get_current_lrs();
  if (epoch == 0) return lrs;
  int64_t period = 2 * T_max_;
  if ((((epoch - 1 - T_max_) % period) + period) % period == 0) {
    for (size_t i = 0; i < lrs.size(); ++i) {
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T_max)) / 2;
    }
    return lrs;
  }
  const double e = static_cast<double>(epoch);
  for (double& lr : lrs) {
    lr = (1 + std::cos(pi * e / T_max)) / (1 + std::cos(pi * (e - 1) / T_max)) *
             (lr - eta_min_) +
         eta_min_;
  }
  return lrs;
}

}  // namespace kiln::optim
