// Learning-rate schedulers, with PyTorch 1.13's recursive (chainable) formulas, so the rates
// match torch.optim.lr_scheduler's to the last bit:
//
//   kiln::optim::StepLR scheduler(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (int epoch = 0; epoch < 100; ++epoch) {
//     train_one_epoch();            // calls opt.step()
//     scheduler.step();
//   }
//
// Constructing a scheduler records each group's current lr as its base lr and takes PyTorch's
// initial step (epoch 0, rates unchanged). step() advances one epoch and writes each group's lr.
#pragma once

#include <kiln/export.h>
#include <kiln/optim/optimizer.h>

#include <cstdint>
#include <vector>

namespace kiln::optim {

class KILN_API LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // Advances one epoch and sets every group's lr to the schedule's value.
  void step();
  // The lr of each group set by the last step (or the construction).
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  // Epochs stepped so far (0 right after construction).
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  // The lr of each group for last_epoch() (already advanced), from the groups' current lrs.
  virtual std::vector<double> get_lrs() = 0;
  // Each group's current lr.
  std::vector<double> get_current_lrs() const;
  // PyTorch's _initial_step: derived constructors call it last.
  void initial_step();

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;

 private:
  int64_t last_epoch_ = -1;
  std::vector<double> last_lr_;
};

// Multiplies every lr by gamma each step_size epochs.
class KILN_API StepLR : public LRScheduler {
 public:
  // Throws ValueError when step_size < 1.
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;

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

 private:
  int64_t T_max_;
  double eta_min_;
};

}  // namespace kiln::optim
