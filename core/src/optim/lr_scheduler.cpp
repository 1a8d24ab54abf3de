// LR schedulers: PyTorch 1.13's _LRScheduler.step and the get_lr of StepLR and
// CosineAnnealingLR, with the same floating-point expressions in the same order.
#include <kiln/optim/lr_scheduler.h>

#include <cmath>
#include <numbers>
#include <set>

namespace kiln::optim {

namespace {

// Checks that a saved scheduler's settings are exactly `keys` (it was a scheduler of this kind).
void check_option_keys(const char* scheduler, const std::map<std::string, double>& options,
                       const std::set<std::string>& keys) {
  for (const std::string& key : keys) {
    KILN_CHECK_VALUE(options.count(key), scheduler, ".load_state_dict: the state has no '", key,
                     "': it was saved by another kind of scheduler");
  }
  for (const auto& [key, value] : options) {
    KILN_CHECK_VALUE(keys.count(key), scheduler, ".load_state_dict: unexpected setting '", key,
                     "': the state was saved by another kind of scheduler");
  }
}

}  // namespace

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (OptimizerParamGroup& group : optimizer_.param_groups()) {
    if (!group.initial_lr()) group.set_initial_lr(group.options().get_lr());
    base_lrs_.push_back(*group.initial_lr());
  }
}

std::vector<double> LRScheduler::get_current_lrs() const {
  std::vector<double> lrs;
  for (const OptimizerParamGroup& group : optimizer_.param_groups()) {
    lrs.push_back(group.options().get_lr());
  }
  return lrs;
}

void LRScheduler::initial_step() { step(); }

LRSchedulerStateDict LRScheduler::state_dict() const {
  return {last_epoch_, step_count_, base_lrs_, last_lr_, options(), {}};
}

void LRScheduler::load_state_dict(const LRSchedulerStateDict& state_dict) {
  const size_t groups = base_lrs_.size();
  KILN_CHECK_VALUE(state_dict.base_lrs.size() == groups && state_dict.last_lr.size() == groups,
                   "LRScheduler.load_state_dict: the state has ", state_dict.base_lrs.size(),
                   " base rates and ", state_dict.last_lr.size(),
                   " last rates, but the "
                   "scheduler has ",
                   groups, " parameter groups");
  // -1: a scheduler of a SequentialLR not started yet
  KILN_CHECK_VALUE(state_dict.last_epoch >= -1 && state_dict.step_count >= 0,
                   "LRScheduler.load_state_dict: invalid last_epoch ", state_dict.last_epoch,
                   " or step count ", state_dict.step_count);
  check_options(state_dict.options);
  set_options(state_dict.options);
  last_epoch_ = state_dict.last_epoch;
  step_count_ = state_dict.step_count;
  base_lrs_ = state_dict.base_lrs;
  last_lr_ = state_dict.last_lr;
}

void LRScheduler::step() {
  KILN_CHECK(optimizer_.param_groups().size() == base_lrs_.size(),
             "LRScheduler: the optimizer "
             "has ",
             optimizer_.param_groups().size(), " parameter groups but had ", base_lrs_.size(),
             " when the scheduler was created");
  ++last_epoch_;
  ++step_count_;
  apply_lrs(get_lrs());
}

void LRScheduler::step_to(int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  apply_lrs(closed_form_lrs());
}

void LRScheduler::apply_lrs(std::vector<double> lrs) {
  std::vector<OptimizerParamGroup>& groups = optimizer_.param_groups();
  KILN_CHECK(groups.size() == lrs.size(), "LRScheduler: the optimizer has ", groups.size(),
             " parameter groups but the schedule has ", lrs.size(), " rates");
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

std::vector<double> StepLR::closed_form_lrs() {
  std::vector<double> lrs;
  for (double base : base_lrs_) {
    lrs.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch() / step_size_)));
  }
  return lrs;
}

std::map<std::string, double> StepLR::options() const {
  return {{"step_size", static_cast<double>(step_size_)}, {"gamma", gamma_}};
}

void StepLR::check_options(const std::map<std::string, double>& options) const {
  check_option_keys("StepLR", options, {"step_size", "gamma"});
  double step_size = options.at("step_size");
  KILN_CHECK_VALUE(step_size >= 1 && step_size == std::floor(step_size),
                   "StepLR.load_state_dict: step_size must be an integer of at least 1, got ",
                   step_size);
}

void StepLR::set_options(const std::map<std::string, double>& options) {
  step_size_ = static_cast<int64_t>(options.at("step_size"));
  gamma_ = options.at("gamma");
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  KILN_CHECK_VALUE(T_max >= 1, "CosineAnnealingLR: T_max must be at least 1, got ", T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::closed_form_lrs() {
  constexpr double pi = std::numbers::pi;
  std::vector<double> lrs;
  for (double base : base_lrs_) {
    lrs.push_back(eta_min_ + (base - eta_min_) *
                                 (1 + std::cos(pi * static_cast<double>(last_epoch()) /
                                               static_cast<double>(T_max_))) /
                                 2);
  }
  return lrs;
}

std::map<std::string, double> CosineAnnealingLR::options() const {
  return {{"T_max", static_cast<double>(T_max_)}, {"eta_min", eta_min_}};
}

void CosineAnnealingLR::check_options(const std::map<std::string, double>& options) const {
  check_option_keys("CosineAnnealingLR", options, {"T_max", "eta_min"});
  double T_max = options.at("T_max");
  KILN_CHECK_VALUE(T_max >= 1 && T_max == std::floor(T_max),
                   "CosineAnnealingLR.load_state_dict: T_max must be an integer of at least 1, "
                   "got ",
                   T_max);
}

void CosineAnnealingLR::set_options(const std::map<std::string, double>& options) {
  T_max_ = static_cast<int64_t>(options.at("T_max"));
  eta_min_ = options.at("eta_min");
}

// PyTorch's recursive form. A resumed scheduler (load_state_dict) continues from the optimizer's
// restored lrs with the same recursion, as PyTorch's does; its closed form (step(epoch)) is not
// offered, as PyTorch deprecates it.
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
    lr = (1 + std::cos(pi * e / T_max)) / (1 + std::cos(pi * (e - 1) / T_max)) * (lr - eta_min_) +
         eta_min_;
  }
  return lrs;
}

}  // namespace kiln::optim
