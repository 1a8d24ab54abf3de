// LinearLR, CosineAnnealingWarmRestarts, OneCycleLR, ReduceLROnPlateau and SequentialLR: PyTorch
// 1.13's torch.optim.lr_scheduler, with the same floating-point expressions in the same order.
#include <kiln/optim/schedulers.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <set>

namespace kiln::optim {
namespace {

constexpr double pi = std::numbers::pi;

// Checks that saved settings have exactly `keys` (the state of a scheduler of this kind).
void check_keys(const char* scheduler, const std::map<std::string, double>& options,
                const std::set<std::string>& keys) {
  for (const std::string& key : keys) {
    KILN_CHECK_VALUE(options.count(key), scheduler, ".load_state_dict: the state has no '", key,
                     "': it was saved by another kind of scheduler or over other groups");
  }
  for (const auto& [key, value] : options) {
    KILN_CHECK_VALUE(keys.count(key), scheduler, ".load_state_dict: unexpected setting '", key,
                     "': the state was saved by another kind of scheduler or over other groups");
  }
}

// `name` with a group index: "max_lr.0".
std::string indexed(const char* name, size_t i) {
  return std::string(name) + "." + std::to_string(i);
}

}  // namespace

// --- LinearLR --------------------------------------------------------------------------------

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  KILN_CHECK_VALUE(start_factor > 0 && start_factor <= 1.0, "LinearLR: Starting multiplicative ",
                   "factor expected to be greater than 0 and less or equal to 1 (got ",
                   start_factor, ")");
  KILN_CHECK_VALUE(end_factor >= 0 && end_factor <= 1.0, "LinearLR: Ending multiplicative ",
                   "factor expected to be between 0 and 1 (got ", end_factor, ")");
  KILN_CHECK_VALUE(total_iters >= 1, "LinearLR: total_iters must be at least 1, got ", total_iters);
  initial_step();
}

std::vector<double> LinearLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  const int64_t epoch = last_epoch();
  if (epoch == 0) {
    for (double& lr : lrs) lr = lr * start_factor_;
    return lrs;
  }
  if (epoch > total_iters_) return lrs;
  const double delta = end_factor_ - start_factor_;
  for (double& lr : lrs) {
    lr = lr * (1. + delta / (static_cast<double>(total_iters_) * start_factor_ +
                             static_cast<double>(epoch - 1) * delta));
  }
  return lrs;
}

std::vector<double> LinearLR::closed_form_lrs() {
  std::vector<double> lrs;
  const double progress = static_cast<double>(std::min(total_iters_, last_epoch()));
  for (double base : base_lrs_) {
    lrs.push_back(base * (start_factor_ + (end_factor_ - start_factor_) * progress /
                                              static_cast<double>(total_iters_)));
  }
  return lrs;
}

std::map<std::string, double> LinearLR::options() const {
  return {{"start_factor", start_factor_},
          {"end_factor", end_factor_},
          {"total_iters", static_cast<double>(total_iters_)}};
}

void LinearLR::check_options(const std::map<std::string, double>& options) const {
  check_keys("LinearLR", options, {"start_factor", "end_factor", "total_iters"});
  double total_iters = options.at("total_iters");
  KILN_CHECK_VALUE(total_iters >= 1 && total_iters == std::floor(total_iters),
                   "LinearLR.load_state_dict: total_iters must be an integer of at least 1, got ",
                   total_iters);
}

void LinearLR::set_options(const std::map<std::string, double>& options) {
  start_factor_ = options.at("start_factor");
  end_factor_ = options.at("end_factor");
  total_iters_ = static_cast<int64_t>(options.at("total_iters"));
}

// --- CosineAnnealingWarmRestarts -------------------------------------------------------------

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0,
                                                         int64_t T_mult, double eta_min)
    : LRScheduler(optimizer), T_0_(T_0), T_mult_(T_mult), eta_min_(eta_min) {
  KILN_CHECK_VALUE(T_0 >= 1, "CosineAnnealingWarmRestarts: Expected positive integer T_0, but got ",
                   T_0);
  KILN_CHECK_VALUE(T_mult >= 1, "CosineAnnealingWarmRestarts: Expected integer T_mult >= 1, but ",
                   "got ", T_mult);
  T_i_ = static_cast<double>(T_0);
  initial_step();
}

void CosineAnnealingWarmRestarts::step() {
  if (last_epoch() < 0) return step(0.0);
  T_cur_ = T_cur_ + 1;
  if (T_cur_ >= T_i_) {
    T_cur_ = T_cur_ - T_i_;
    T_i_ = T_i_ * static_cast<double>(T_mult_);
  }
  count_step();
  set_last_epoch(last_epoch() + 1);
  apply_lrs(get_lrs());
}

void CosineAnnealingWarmRestarts::step(double epoch) {
  KILN_CHECK_VALUE(epoch >= 0, "CosineAnnealingWarmRestarts: Expected non-negative epoch, but ",
                   "got ", epoch);
  const double T_0 = static_cast<double>(T_0_);
  if (epoch >= T_0) {
    if (T_mult_ == 1) {
      T_cur_ = std::fmod(epoch, T_0);
    } else {
      const double T_mult = static_cast<double>(T_mult_);
      double n = std::floor(std::log(epoch / T_0 * (T_mult - 1) + 1) / std::log(T_mult));
      T_cur_ = epoch - T_0 * (std::pow(T_mult, n) - 1) / (T_mult - 1);
      T_i_ = T_0 * std::pow(T_mult, n);
    }
  } else {
    T_i_ = T_0;
    T_cur_ = epoch;
  }
  count_step();
  set_last_epoch(static_cast<int64_t>(std::floor(epoch)));
  apply_lrs(get_lrs());
}

std::vector<double> CosineAnnealingWarmRestarts::get_lrs() {
  std::vector<double> lrs;
  for (double base : base_lrs_) {
    lrs.push_back(eta_min_ + (base - eta_min_) * (1 + std::cos(pi * T_cur_ / T_i_)) / 2);
  }
  return lrs;
}

std::map<std::string, double> CosineAnnealingWarmRestarts::options() const {
  return {{"T_0", static_cast<double>(T_0_)},
          {"T_mult", static_cast<double>(T_mult_)},
          {"eta_min", eta_min_},
          {"T_i", T_i_},
          {"T_cur", T_cur_}};
}

void CosineAnnealingWarmRestarts::check_options(
    const std::map<std::string, double>& options) const {
  check_keys("CosineAnnealingWarmRestarts", options, {"T_0", "T_mult", "eta_min", "T_i", "T_cur"});
  for (const char* key : {"T_0", "T_mult"}) {
    double v = options.at(key);
    KILN_CHECK_VALUE(v >= 1 && v == std::floor(v),
                     "CosineAnnealingWarmRestarts.load_state_dict: ", key,
                     " must be an integer of at least 1, got ", v);
  }
  KILN_CHECK_VALUE(options.at("T_i") >= 1, "CosineAnnealingWarmRestarts.load_state_dict: T_i ",
                   "must be at least 1, got ", options.at("T_i"));
}

void CosineAnnealingWarmRestarts::set_options(const std::map<std::string, double>& options) {
  T_0_ = static_cast<int64_t>(options.at("T_0"));
  T_mult_ = static_cast<int64_t>(options.at("T_mult"));
  eta_min_ = options.at("eta_min");
  T_i_ = options.at("T_i");
  T_cur_ = options.at("T_cur");
}

// --- OneCycleLR ------------------------------------------------------------------------------

namespace {
enum { kInitialLr, kMaxLr, kMinLr, kMaxMomentum, kBaseMomentum };
}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o)
    : LRScheduler(optimizer),
      pct_start_(o.pct_start()),
      linear_(o.anneal_strategy() == "linear"),
      cycle_momentum_(o.cycle_momentum()),
      three_phase_(o.three_phase()) {
  if (o.total_steps()) {
    KILN_CHECK_VALUE(*o.total_steps() > 0, "OneCycleLR: Expected positive integer total_steps, ",
                     "but got ", *o.total_steps());
    total_steps_ = *o.total_steps();
  } else {
    KILN_CHECK_VALUE(o.epochs() && o.steps_per_epoch(), "OneCycleLR: You must define either ",
                     "total_steps OR (epochs AND steps_per_epoch)");
    KILN_CHECK_VALUE(*o.epochs() > 0, "OneCycleLR: Expected positive integer epochs, but got ",
                     *o.epochs());
    KILN_CHECK_VALUE(*o.steps_per_epoch() > 0, "OneCycleLR: Expected positive integer ",
                     "steps_per_epoch, but got ", *o.steps_per_epoch());
    KILN_CHECK_VALUE(*o.epochs() <= std::numeric_limits<int64_t>::max() / *o.steps_per_epoch(),
                     "OneCycleLR: epochs * steps_per_epoch overflows");
    total_steps_ = *o.epochs() * *o.steps_per_epoch();
  }
  KILN_CHECK_VALUE(pct_start_ >= 0 && pct_start_ <= 1, "OneCycleLR: Expected float between 0 ",
                   "and 1 pct_start, but got ", pct_start_);
  KILN_CHECK_VALUE(o.anneal_strategy() == "cos" || o.anneal_strategy() == "linear",
                   "OneCycleLR: anneal_strategy must by one of 'cos' or 'linear', instead got ",
                   o.anneal_strategy());
  std::vector<OptimizerParamGroup>& groups = optimizer_.param_groups();
  const std::vector<double>& max_lr = o.max_lr();
  KILN_CHECK_VALUE(max_lr.size() == 1 || max_lr.size() == groups.size(), "OneCycleLR: expected ",
                   groups.size(), " values for max_lr, got ", max_lr.size());
  if (cycle_momentum_) {
    OptionValues defaults = optimizer_.defaults().values();
    KILN_CHECK_VALUE(defaults.count("momentum") || defaults.count("beta1"), "OneCycleLR: ",
                     "optimizer must support momentum with `cycle_momentum` option enabled (",
                     optimizer_.name(), " has neither momentum nor betas)");
    momentum_key_ = defaults.count("beta1") ? "beta1" : "momentum";
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupRates r{};
    r[kMaxLr] = max_lr.size() == 1 ? max_lr[0] : max_lr[i];
    r[kInitialLr] = r[kMaxLr] / o.div_factor();
    r[kMinLr] = r[kInitialLr] / o.final_div_factor();
    r[kMaxMomentum] = o.max_momentum();
    r[kBaseMomentum] = o.base_momentum();
    rates_.push_back(r);
    groups[i].set_initial_lr(r[kInitialLr]);
    base_lrs_[i] = r[kInitialLr];
    if (cycle_momentum_) {
      OptionValues values = groups[i].options().values();
      values[momentum_key_] = o.max_momentum();
      groups[i].options().set_values(values);
    }
  }
  initial_step();
}

std::vector<OneCycleLR::Phase> OneCycleLR::phases() const {
  const double total = static_cast<double>(total_steps_);
  if (three_phase_) {
    return {{pct_start_ * total - 1, kInitialLr, kMaxLr, kMaxMomentum, kBaseMomentum},
            {2 * pct_start_ * total - 2, kMaxLr, kInitialLr, kBaseMomentum, kMaxMomentum},
            {total - 1, kInitialLr, kMinLr, kMaxMomentum, kMaxMomentum}};
  }
  return {{pct_start_ * total - 1, kInitialLr, kMaxLr, kMaxMomentum, kBaseMomentum},
          {total - 1, kMaxLr, kMinLr, kBaseMomentum, kMaxMomentum}};
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (linear_) return (end - start) * pct + start;
  double cos_out = std::cos(pi * pct) + 1;
  return end + (start - end) / 2.0 * cos_out;
}

std::vector<double> OneCycleLR::get_lrs() {
  const int64_t step_num = last_epoch();
  KILN_CHECK_VALUE(step_num <= total_steps_, "OneCycleLR: Tried to step ", step_num + 1,
                   " times. The specified number of total steps is ", total_steps_);
  const std::vector<Phase> schedule = phases();
  std::vector<OptimizerParamGroup>& groups = optimizer_.param_groups();
  std::vector<double> lrs;
  for (size_t g = 0; g < groups.size(); ++g) {
    const GroupRates& r = rates_[g];
    double start_step = 0, lr = 0, momentum = 0;
    for (size_t i = 0; i < schedule.size(); ++i) {
      const Phase& phase = schedule[i];
      if (static_cast<double>(step_num) <= phase.end_step || i + 1 == schedule.size()) {
        double pct = (static_cast<double>(step_num) - start_step) / (phase.end_step - start_step);
        lr = anneal(r[phase.start_lr], r[phase.end_lr], pct);
        momentum = anneal(r[phase.start_momentum], r[phase.end_momentum], pct);
        break;
      }
      start_step = phase.end_step;
    }
    lrs.push_back(lr);
    if (cycle_momentum_) {
      OptionValues values = groups[g].options().values();
      values[momentum_key_] = momentum;
      groups[g].options().set_values(values);
    }
  }
  return lrs;
}

std::map<std::string, double> OneCycleLR::options() const {
  std::map<std::string, double> out = {{"total_steps", static_cast<double>(total_steps_)},
                                       {"pct_start", pct_start_},
                                       {"anneal_linear", linear_ ? 1.0 : 0.0},
                                       {"cycle_momentum", cycle_momentum_ ? 1.0 : 0.0},
                                       {"three_phase", three_phase_ ? 1.0 : 0.0}};
  const char* names[] = {"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum"};
  for (size_t g = 0; g < rates_.size(); ++g) {
    for (size_t k = 0; k < rates_[g].size(); ++k) out[indexed(names[k], g)] = rates_[g][k];
  }
  return out;
}

void OneCycleLR::check_options(const std::map<std::string, double>& options) const {
  std::set<std::string> keys;
  for (const auto& [key, value] : this->options()) keys.insert(key);
  check_keys("OneCycleLR", options, keys);
  double total = options.at("total_steps");
  KILN_CHECK_VALUE(total >= 1 && total == std::floor(total),
                   "OneCycleLR.load_state_dict: ", "total_steps must be a positive integer, got ",
                   total);
  KILN_CHECK_VALUE(options.at("cycle_momentum") == (cycle_momentum_ ? 1.0 : 0.0),
                   "OneCycleLR.load_state_dict: the state was saved with cycle_momentum ",
                   options.at("cycle_momentum") != 0 ? "on" : "off", ", this scheduler has it ",
                   cycle_momentum_ ? "on" : "off");
}

void OneCycleLR::set_options(const std::map<std::string, double>& options) {
  total_steps_ = static_cast<int64_t>(options.at("total_steps"));
  pct_start_ = options.at("pct_start");
  linear_ = options.at("anneal_linear") != 0;
  three_phase_ = options.at("three_phase") != 0;
  const char* names[] = {"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum"};
  for (size_t g = 0; g < rates_.size(); ++g) {
    for (size_t k = 0; k < rates_[g].size(); ++k) rates_[g][k] = options.at(indexed(names[k], g));
  }
}

// --- ReduceLROnPlateau -----------------------------------------------------------------------

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, SchedulerMode mode, double factor,
                                     int64_t patience, double threshold,
                                     ThresholdMode threshold_mode, int64_t cooldown,
                                     const std::vector<double>& min_lr, double eps)
    : LRScheduler(optimizer),
      mode_(mode),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      threshold_mode_(threshold_mode),
      cooldown_(cooldown),
      eps_(eps) {
  KILN_CHECK_VALUE(factor < 1.0, "ReduceLROnPlateau: Factor should be < 1.0 (got ", factor, ")");
  KILN_CHECK_VALUE(patience >= 0 && cooldown >= 0, "ReduceLROnPlateau: patience and cooldown ",
                   "must be non-negative (got ", patience, " and ", cooldown, ")");
  const size_t groups = optimizer_.param_groups().size();
  KILN_CHECK_VALUE(min_lr.size() <= 1 || min_lr.size() == groups, "ReduceLROnPlateau: expected ",
                   groups, " min_lrs, got ", min_lr.size());
  min_lrs_.assign(groups, min_lr.empty() ? 0.0 : min_lr[0]);
  if (min_lr.size() == groups) min_lrs_ = min_lr;
  best_ = mode == min ? std::numeric_limits<double>::infinity()
                      : -std::numeric_limits<double>::infinity();
  // No initial step, as PyTorch's: the rates stay as they are until a metric says otherwise.
  set_last_epoch(0);
  count_step();
  apply_lrs(get_current_lrs());
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  if (mode_ == min && threshold_mode_ == rel) return a < best * (1. - threshold_);
  if (mode_ == min) return a < best - threshold_;
  if (threshold_mode_ == rel) return a > best * (threshold_ + 1.);
  return a > best + threshold_;
}

void ReduceLROnPlateau::step(double metric) {
  set_last_epoch(last_epoch() + 1);
  count_step();
  if (is_better(metric, best_)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad epochs in cooldown do not count
  }
  std::vector<double> lrs = get_current_lrs();
  if (num_bad_epochs_ > patience_) {
    for (size_t i = 0; i < lrs.size(); ++i) {
      double new_lr = std::max(lrs[i] * factor_, min_lrs_[i]);
      if (lrs[i] - new_lr > eps_) lrs[i] = new_lr;
    }
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
  apply_lrs(std::move(lrs));
}

void ReduceLROnPlateau::step() {
  KILN_CHECK(false, "ReduceLROnPlateau: step() needs the epoch's metric: call step(metric)");
}

std::vector<double> ReduceLROnPlateau::get_lrs() { return get_current_lrs(); }

std::map<std::string, double> ReduceLROnPlateau::options() const {
  std::map<std::string, double> out = {{"mode_max", mode_ == max ? 1.0 : 0.0},
                                       {"factor", factor_},
                                       {"patience", static_cast<double>(patience_)},
                                       {"threshold", threshold_},
                                       {"threshold_abs", threshold_mode_ == abs ? 1.0 : 0.0},
                                       {"cooldown", static_cast<double>(cooldown_)},
                                       {"eps", eps_},
                                       {"best", best_},
                                       {"num_bad_epochs", static_cast<double>(num_bad_epochs_)},
                                       {"cooldown_counter",
                                        static_cast<double>(cooldown_counter_)}};
  for (size_t i = 0; i < min_lrs_.size(); ++i) out[indexed("min_lr", i)] = min_lrs_[i];
  return out;
}

void ReduceLROnPlateau::check_options(const std::map<std::string, double>& options) const {
  std::set<std::string> keys;
  for (const auto& [key, value] : this->options()) keys.insert(key);
  check_keys("ReduceLROnPlateau", options, keys);
  KILN_CHECK_VALUE(options.at("factor") < 1.0, "ReduceLROnPlateau.load_state_dict: Factor ",
                   "should be < 1.0 (got ", options.at("factor"), ")");
  for (const char* key : {"patience", "cooldown", "num_bad_epochs", "cooldown_counter"}) {
    double v = options.at(key);
    KILN_CHECK_VALUE(v >= 0 && v == std::floor(v), "ReduceLROnPlateau.load_state_dict: ", key,
                     " must be a non-negative integer, got ", v);
  }
}

void ReduceLROnPlateau::set_options(const std::map<std::string, double>& options) {
  mode_ = options.at("mode_max") != 0 ? max : min;
  factor_ = options.at("factor");
  patience_ = static_cast<int64_t>(options.at("patience"));
  threshold_ = options.at("threshold");
  threshold_mode_ = options.at("threshold_abs") != 0 ? abs : rel;
  cooldown_ = static_cast<int64_t>(options.at("cooldown"));
  eps_ = options.at("eps");
  best_ = options.at("best");
  num_bad_epochs_ = static_cast<int64_t>(options.at("num_bad_epochs"));
  cooldown_counter_ = static_cast<int64_t>(options.at("cooldown_counter"));
  for (size_t i = 0; i < min_lrs_.size(); ++i) min_lrs_[i] = options.at(indexed("min_lr", i));
}

// --- SequentialLR ----------------------------------------------------------------------------

SequentialLR::SequentialLR(Optimizer& optimizer,
                           std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  KILN_CHECK_VALUE(!schedulers_.empty(), "SequentialLR: expects at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    KILN_CHECK_VALUE(schedulers_[i] != nullptr, "SequentialLR: scheduler ", i, " is null");
    KILN_CHECK_VALUE(&schedulers_[i]->optimizer_ == &optimizer, "SequentialLR: Sequential ",
                     "Schedulers expects all schedulers to belong to the same optimizer, but got ",
                     "schedulers at index ", i, " to be different than the optimizer passed in.");
    KILN_CHECK_VALUE(dynamic_cast<ReduceLROnPlateau*>(schedulers_[i].get()) == nullptr,
                     "SequentialLR: scheduler ", i, " is a ReduceLROnPlateau, which is stepped ",
                     "with a metric and cannot be sequenced");
  }
  KILN_CHECK_VALUE(milestones_.size() + 1 == schedulers_.size(), "SequentialLR: Sequential ",
                   "Schedulers expects number of schedulers provided to be one more than the ",
                   "number of milestone points, but got number of schedulers ", schedulers_.size(),
                   " and the number of milestones to be equal to ", milestones_.size());
  KILN_CHECK_VALUE(std::is_sorted(milestones_.begin(), milestones_.end()),
                   "SequentialLR: milestones must be in increasing order");
  // As PyTorch's: back to the initial rates, the other schedulers' steps undone, and the first
  // scheduler's initial step taken again.
  for (OptimizerParamGroup& group : optimizer_.param_groups()) {
    group.options().set_lr(*group.initial_lr());
  }
  for (const auto& scheduler : schedulers_) --scheduler->last_epoch_;
  schedulers_[0]->step_count_ = 0;
  schedulers_[0]->step();
  set_last_epoch(0);
  count_step();
  apply_lrs(schedulers_[0]->get_last_lr());
}

void SequentialLR::step() {
  set_last_epoch(last_epoch() + 1);
  count_step();
  auto idx =
      static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch()) -
                          milestones_.begin());
  LRScheduler& scheduler = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch()) {
    scheduler.step_to(0);
  } else {
    scheduler.step();
  }
  apply_lrs(scheduler.get_last_lr());
}

std::vector<double> SequentialLR::get_lrs() { return get_current_lrs(); }

LRSchedulerStateDict SequentialLR::state_dict() const {
  LRSchedulerStateDict dict = LRScheduler::state_dict();
  for (const auto& scheduler : schedulers_) dict.schedulers.push_back(scheduler->state_dict());
  return dict;
}

void SequentialLR::load_state_dict(const LRSchedulerStateDict& state_dict) {
  KILN_CHECK_VALUE(state_dict.schedulers.size() == schedulers_.size(), "SequentialLR.",
                   "load_state_dict: the state has ", state_dict.schedulers.size(),
                   " schedulers, this SequentialLR has ", schedulers_.size());
  // Every part is checked before anything changes: each scheduler loads into a snapshot first.
  std::vector<LRSchedulerStateDict> before;
  for (const auto& scheduler : schedulers_) before.push_back(scheduler->state_dict());
  try {
    LRScheduler::load_state_dict(state_dict);
    for (size_t i = 0; i < schedulers_.size(); ++i) {
      schedulers_[i]->load_state_dict(state_dict.schedulers[i]);
    }
  } catch (...) {
    for (size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(before[i]);
    throw;
  }
}

std::map<std::string, double> SequentialLR::options() const {
  std::map<std::string, double> out;
  for (size_t i = 0; i < milestones_.size(); ++i) {
    out[indexed("milestone", i)] = static_cast<double>(milestones_[i]);
  }
  return out;
}

void SequentialLR::check_options(const std::map<std::string, double>& options) const {
  std::set<std::string> keys;
  for (const auto& [key, value] : this->options()) keys.insert(key);
  check_keys("SequentialLR", options, keys);
}

void SequentialLR::set_options(const std::map<std::string, double>& options) {
  for (size_t i = 0; i < milestones_.size(); ++i) {
    milestones_[i] = static_cast<int64_t>(options.at(indexed("milestone", i)));
  }
}

}  // namespace kiln::optim
