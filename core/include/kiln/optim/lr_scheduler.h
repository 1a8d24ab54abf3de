// Learning-rate schedulers, with PyTorch 1.13's recursive (chainable) formulas, so the rates
// match torch.optim.lr_scheduler's to the last bit:
//
//   kiln::optim::StepLR scheduler(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (int epoch = 0; epoch < 100; ++epoch) {
//     train_one_epoch();            // calls opt.step()
//     scheduler.step();
//   }
//
// Constructing a scheduler takes each group's initial lr (PyTorch's group["initial_lr"]: the lr
// when the group's first scheduler was made, recorded then) as its base lr and takes PyTorch's
// initial step (epoch 0). step() advances one epoch and writes each group's lr. More schedulers
// (LinearLR, OneCycleLR, CosineAnnealingWarmRestarts, ReduceLROnPlateau, SequentialLR) are in
// kiln/optim/schedulers.h.
//
// Resuming, in PyTorch's order: build the optimizer and the scheduler as before, then
//
//   opt.load_state_dict(saved_opt);              // restores each group's current lr
//   scheduler.load_state_dict(saved_scheduler);  // restores the epoch and base rates
//
// and the following step()s give the rates of an uninterrupted run.
#pragma once

#include <kiln/export.h>
#include <kiln/optim/optimizer.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::optim {

// A snapshot of a scheduler, as PyTorch's scheduler.state_dict(): the epoch counters, the base
// and last rates, and the schedule's settings by PyTorch's names ("step_size", "gamma",
// "T_max", "eta_min").
struct LRSchedulerStateDict {
  int64_t last_epoch = 0;
  int64_t step_count = 0;  // PyTorch's _step_count: step() calls, the initial one included
  std::vector<double> base_lrs;
  std::vector<double> last_lr;
  std::map<std::string, double> options;
  // SequentialLR: the state of each of its schedulers.
  std::vector<LRSchedulerStateDict> schedulers;
};

class KILN_API LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // Advances one epoch and sets every group's lr to the schedule's value.
  virtual void step();
  // The lr of each group set by the last step (or the construction).
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  // Epochs stepped so far (0 right after construction).
  int64_t last_epoch() const { return last_epoch_; }

  // The scheduler's state; the optimizer's lrs are in the optimizer's own state_dict().
  virtual LRSchedulerStateDict state_dict() const;
  // Restores a state_dict() of a scheduler of the same kind over as many groups; throws
  // ValueError (naming what differs) otherwise, leaving this scheduler unchanged.
  virtual void load_state_dict(const LRSchedulerStateDict& state_dict);

 protected:
  friend class SequentialLR;

  // PyTorch's deprecated step(epoch), which SequentialLR uses to restart a scheduler at epoch 0:
  // sets the epoch and the rates of closed_form_lrs().
  virtual void step_to(int64_t epoch);
  // The rates at last_epoch() from the base rates alone (PyTorch's _get_closed_form_lr);
  // get_lrs() for a schedule without one.
  virtual std::vector<double> closed_form_lrs() { return get_lrs(); }
  // Sets every group's lr and the last rates.
  void apply_lrs(std::vector<double> lrs);
  void set_last_epoch(int64_t epoch) { last_epoch_ = epoch; }
  void count_step() { ++step_count_; }
  // The lr of each group for last_epoch() (already advanced), from the groups' current lrs.
  virtual std::vector<double> get_lrs() = 0;
  // Each group's current lr.
  std::vector<double> get_current_lrs() const;
  // PyTorch's _initial_step: derived constructors call it last.
  void initial_step();
  // The schedule's settings by PyTorch's names, for state_dict().
  virtual std::map<std::string, double> options() const = 0;
  // Checks (ValueError) and returns settings for load_state_dict; set_options applies them.
  virtual void check_options(const std::map<std::string, double>& options) const = 0;
  virtual void set_options(const std::map<std::string, double>& options) = 0;

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;

 private:
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
  std::vector<double> last_lr_;
};

// Multiplies every lr by gamma each step_size epochs.
class KILN_API StepLR : public LRScheduler {
 public:
  // Throws ValueError when step_size < 1.
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  std::map<std::string, double> options() const override;
  void check_options(const std::map<std::string, double>& options) const override;
  void set_options(const std::map<std::string, double>& options) override;

 private:
  int64_t step_size_;
  double gamma_;
};

// Cosine annealing from the base lr to eta_min over T_max epochs (and back up over the next
// T_max, periodically), with PyTorch's recursive formula.
class KILN_API CosineAnnealingLR : public LRScheduler {
 public:
  // Throws ValueError when T_max < 1.
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  std::map<std::string, double> options() const override;
  void check_options(const std::map<std::string, double>& options) const override;
  void set_options(const std::map<std::string, double>& options) override;

 private:
  int64_t T_max_;
  double eta_min_;
};

}  // namespace kiln::optim
