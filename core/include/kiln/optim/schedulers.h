// More learning-rate schedulers on the LRScheduler base (kiln/optim/lr_scheduler.h), with
// PyTorch 1.13's formulas, so that the rates match torch.optim.lr_scheduler's:
//
//   LinearLR                    the lr scaled linearly from start_factor to end_factor
//   CosineAnnealingWarmRestarts cosine annealing restarted every T_0, T_0 * T_mult, ... epochs
//   OneCycleLR                  the 1cycle policy, lr (and momentum) per batch
//   ReduceLROnPlateau           the lr cut by `factor` when a metric stops improving
//   SequentialLR                schedulers one after another, switching at milestones
#pragma once

#include <kiln/nn/options.h>  // KILN_ARG
#include <kiln/optim/lr_scheduler.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::optim {

// lr = base_lr * factor, factor going linearly from start_factor (epoch 0) to end_factor (epoch
// total_iters and after).
class KILN_API LinearLR : public LRScheduler {
 public:
  // Throws ValueError unless 0 < start_factor <= 1, 0 <= end_factor <= 1, total_iters >= 1.
  explicit LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
                    int64_t total_iters = 5);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  std::map<std::string, double> options() const override;
  void check_options(const std::map<std::string, double>& options) const override;
  void set_options(const std::map<std::string, double>& options) override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, where T_cur counts the
// epochs since the last restart and T_i, the length of the current period, starts at T_0 and is
// multiplied by T_mult at each restart (SGDR).
class KILN_API CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  // Throws ValueError unless T_0 >= 1 and T_mult >= 1.
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1,
                              double eta_min = 0.0);

  // Advances one epoch.
  void step() override;
  // Jumps to `epoch`, which may be fractional (step(epoch + i / iters) inside an epoch, as
  // PyTorch's documentation shows); throws ValueError for a negative epoch.
  void step(double epoch);

 protected:
  void step_to(int64_t epoch) override { step(static_cast<double>(epoch)); }
  std::vector<double> get_lrs() override;
  std::map<std::string, double> options() const override;
  void check_options(const std::map<std::string, double>& options) const override;
  void set_options(const std::map<std::string, double>& options) override;

 private:
  int64_t T_0_, T_mult_;
  double eta_min_;
  double T_i_;
  double T_cur_ = -1;
};

// The options of OneCycleLR, with PyTorch's defaults. Give total_steps, or epochs and
// steps_per_epoch.
struct KILN_API OneCycleLROptions {
  // One max_lr for every group, or one per group.
  OneCycleLROptions(double max_lr) : max_lr_({max_lr}) {}  // NOLINT: as a number
  OneCycleLROptions(std::vector<double> max_lr) : max_lr_(std::move(max_lr)) {}  // NOLINT

  KILN_ARG(std::optional<int64_t>, total_steps);
  KILN_ARG(std::optional<int64_t>, epochs);
  KILN_ARG(std::optional<int64_t>, steps_per_epoch);
  // The fraction of the steps spent increasing the lr.
  KILN_ARG(double, pct_start) = 0.3;
  // "cos" or "linear".
  KILN_ARG(std::string, anneal_strategy) = "cos";
  // Whether momentum (or Adam's beta1) cycles inversely to the lr.
  KILN_ARG(bool, cycle_momentum) = true;
  KILN_ARG(double, base_momentum) = 0.85;
  KILN_ARG(double, max_momentum) = 0.95;
  // initial_lr = max_lr / div_factor; min_lr = initial_lr / final_div_factor.
  KILN_ARG(double, div_factor) = 25.0;
  KILN_ARG(double, final_div_factor) = 1e4;
  // Three phases (up, down to initial_lr, down to min_lr) instead of two.
  KILN_ARG(bool, three_phase) = false;

 public:
  const std::vector<double>& max_lr() const { return max_lr_; }

 private:
  std::vector<double> max_lr_;
};

// The 1cycle policy (Smith and Topin, "Super-Convergence"): the lr rises from max_lr /
// div_factor to max_lr over pct_start of the steps, then anneals to initial_lr /
// final_div_factor; with cycle_momentum, the optimizer's momentum (or beta1) moves the other
// way between max_momentum and base_momentum. Call step() after every batch.
class KILN_API OneCycleLR : public LRScheduler {
 public:
  // Throws ValueError for invalid options, PyTorch's messages.
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);

 protected:
  std::vector<double> get_lrs() override;
  std::map<std::string, double> options() const override;
  void check_options(const std::map<std::string, double>& options) const override;
  void set_options(const std::map<std::string, double>& options) override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr, start_momentum, end_momentum;  // indices into GroupRates
  };
  // initial_lr, max_lr, min_lr, max_momentum, base_momentum.
  using GroupRates = std::array<double, 5>;
  double anneal(double start, double end, double pct) const;
  std::vector<Phase> phases() const;

  int64_t total_steps_;
  double pct_start_;
  bool linear_;
  bool cycle_momentum_;
  bool three_phase_;
  std::string momentum_key_;  // "momentum" or "beta1"
  std::vector<GroupRates> rates_;
};

// Cuts every group's lr by `factor` when a metric has not improved for `patience` epochs.
// As PyTorch's, it is stepped with the metric: step(val_loss). libtorch calls it
// ReduceLROnPlateauScheduler.
class KILN_API ReduceLROnPlateau : public LRScheduler {
 public:
  enum SchedulerMode { min, max };
  enum ThresholdMode { rel, abs };

  // min_lr: empty (0), one for every group, or one per group. Throws ValueError when factor >= 1
  // or min_lr has another count.
  explicit ReduceLROnPlateau(Optimizer& optimizer, SchedulerMode mode = min, double factor = 0.1,
                             int64_t patience = 10, double threshold = 1e-4,
                             ThresholdMode threshold_mode = rel, int64_t cooldown = 0,
                             const std::vector<double>& min_lr = {}, double eps = 1e-8);

  // Records the epoch's metric and cuts the rates after `patience` epochs without improvement
  // (and not within `cooldown` epochs of the last cut).
  void step(double metric);
  // Throws: this scheduler needs the metric.
  void step() override;

 protected:
  std::vector<double> get_lrs() override;
  std::map<std::string, double> options() const override;
  void check_options(const std::map<std::string, double>& options) const override;
  void set_options(const std::map<std::string, double>& options) override;

 private:
  bool is_better(double a, double best) const;

  SchedulerMode mode_;
  double factor_;
  int64_t patience_;
  double threshold_;
  ThresholdMode threshold_mode_;
  int64_t cooldown_;
  std::vector<double> min_lrs_;
  double eps_;
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
};
using ReduceLROnPlateauScheduler = ReduceLROnPlateau;

// Runs schedulers[0] until milestones[0], then schedulers[1] (restarted at its epoch 0) until
// milestones[1], and so on. The schedulers must be over `optimizer`; they are kept alive here.
class KILN_API SequentialLR : public LRScheduler {
 public:
  // Throws ValueError for a scheduler over another optimizer, a ReduceLROnPlateau, or a count
  // of milestones other than schedulers - 1.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);

  void step() override;
  // With the state of every scheduler.
  LRSchedulerStateDict state_dict() const override;
  void load_state_dict(const LRSchedulerStateDict& state_dict) override;

 protected:
  std::vector<double> get_lrs() override;
  std::map<std::string, double> options() const override;
  void check_options(const std::map<std::string, double>& options) const override;
  void set_options(const std::map<std::string, double>& options) override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace kiln::optim
