// kiln::amp::GradScaler: loss scaling for mixed-precision training, PyTorch's algorithm exactly
// (torch.amp.GradScaler):
//
//   kiln::amp::GradScaler scaler;
//   for (...) {
//     opt.zero_grad();
//     kiln::Tensor loss;
//     {
//       kiln::amp::autocast region(kiln::kCPU);
//       loss = loss_fn(model->forward(x), y);
//     }
//     scaler.scale(loss).backward();  // gradients are scaled by get_scale()
//     scaler.step(opt);               // unscales, then steps unless a gradient is inf or NaN
//     scaler.update();                // halves the scale after an overflow, doubles it after
//   }                                 // growth_interval clean steps
//
// unscale_(opt) may be called once per optimizer between updates (before clipping gradients);
// step() then does not unscale again. Each optimizer decides on its own whether to skip; the
// scale is shared and updated once per iteration from every optimizer's checks. A disabled scaler
// passes everything through (scale returns its input, step just steps, update does nothing).
//
// Beyond PyTorch: last_step_skipped() says whether the latest step() skipped the optimizer's
// step (PyTorch issue 67590), and the scale has a floor, GradScalerOptions::min_scale (default
// kDefaultMinScale), so that a long overflow streak cannot drive it to zero: PyTorch's reaches 0
// after 166 consecutive overflows from 65536, and the next clean step multiplies the gradients
// by 1/0 and writes NaN into the weights. Scales (init_scale, update(new_scale), a loaded state)
// must be finite and within [min_scale, float32's largest].
#pragma once

#include <kiln/export.h>
#include <kiln/optim/optimizer.h>
#include <kiln/tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::amp {

// The default floor of the scale: float32's smallest normal number, 2^-126, the smallest scale
// whose reciprocal (the unscale factor) is a finite float32. It changes nothing while the scale
// stays within float32's normal range, where PyTorch's arithmetic is kept exactly.
constexpr double kDefaultMinScale = 0x1p-126;

struct KILN_API GradScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;   // must be > 1
  double backoff_factor = 0.5;  // must be < 1
  int64_t growth_interval = 2000;
  bool enabled = true;
  // kiln's addition: the back-off never goes below it; kDefaultMinScale when unset, and at least
  // that when set
  std::optional<double> min_scale;

  GradScalerOptions& set_init_scale(double v) {
    init_scale = v;
    return *this;
  }
  GradScalerOptions& set_growth_factor(double v) {
    growth_factor = v;
    return *this;
  }
  GradScalerOptions& set_backoff_factor(double v) {
    backoff_factor = v;
    return *this;
  }
  GradScalerOptions& set_growth_interval(int64_t v) {
    growth_interval = v;
    return *this;
  }
  GradScalerOptions& set_enabled(bool v) {
    enabled = v;
    return *this;
  }
  GradScalerOptions& set_min_scale(double v) {
    min_scale = v;
    return *this;
  }
};

class KILN_API GradScaler {
 public:
  // Throws ValueError when growth_factor is not a finite number > 1, backoff_factor is not in
  // (0, 1), growth_interval is not in [1, 2^31 - 1], min_scale is below kDefaultMinScale or not
  // finite, or init_scale is not finite or outside [min_scale, float32's largest].
  explicit GradScaler(GradScalerOptions options = {});

  // outputs * scale (each of a list); the input itself when disabled.
  Tensor scale(const Tensor& outputs);
  std::vector<Tensor> scale(const std::vector<Tensor>& outputs);

  // Divides the gradients of opt's parameters by the scale in place and records whether any was
  // inf or NaN (checked before dividing). Once per optimizer between update() calls; throws
  // when called twice, after step(), before any scale(), or for a float16 gradient.
  void unscale_(optim::Optimizer& opt);

  // Unscales (unless unscale_ ran) and calls opt.step() unless a gradient was inf or NaN.
  // Returns what opt.step() returned (undefined when skipped). A closure is refused when enabled.
  Tensor step(optim::Optimizer& opt, const optim::Optimizer::LossClosure& closure = nullptr);

  // Backs the scale off (x backoff_factor, not below min_scale) when any optimizer stepped this
  // iteration saw inf or NaN; otherwise grows it (x growth_factor) every growth_interval
  // consecutive clean updates. With new_scale, sets the scale to it instead (the growth tracker
  // is kept; ValueError when it is not finite or outside [min_scale, float32's largest]).
  // Starts a new iteration for every optimizer.
  void update(std::optional<double> new_scale = std::nullopt);
  // The same with a 1-element tensor that does not require grad.
  void update(const Tensor& new_scale);

  // The current scale: 1.0 when disabled, init_scale before the first scale().
  double get_scale() const;
  bool is_enabled() const { return enabled_; }
  // Whether the latest step() skipped the optimizer's step (false before any step).
  bool last_step_skipped() const { return last_step_skipped_; }
  // How many optimizer steps step() has skipped since construction.
  int64_t skipped_steps() const { return skipped_steps_; }

  double get_growth_factor() const { return growth_factor_; }
  void set_growth_factor(double v);
  double get_backoff_factor() const { return backoff_factor_; }
  void set_backoff_factor(double v);
  int64_t get_growth_interval() const { return growth_interval_; }
  void set_growth_interval(int64_t v);
  // Consecutive clean updates since the last growth or back-off.
  int64_t get_growth_tracker() const { return growth_tracker_; }

  // {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}, as
  // PyTorch's state_dict(); empty when disabled.
  std::map<std::string, double> state_dict() const;
  // Restores a state_dict(); does nothing when disabled; throws for an empty dict, a missing
  // key or a value the options would refuse (a NaN scale, a fractional interval, a tracker
  // outside [0, growth_interval)), and then changes nothing.
  void load_state_dict(const std::map<std::string, double>& state);

 private:
  enum class Stage { ready, unscaled, stepped };
  struct OptimizerState {
    Stage stage = Stage::ready;
    std::map<std::string, bool> found_inf_per_device;  // by device, as "cpu", "cuda:0"
  };
  OptimizerState& state_of(const optim::Optimizer& opt) { return per_optimizer_[&opt]; }
  void check_factors() const;
  // ValueError "<who>: <what> ..." unless v is a finite float32 scale >= min_scale_.
  void check_scale(const char* who, const char* what, double v) const;

  bool enabled_;
  bool scale_initialized_ = false;
  float scale_;  // float32, as PyTorch's scale tensor
  double init_scale_;
  double growth_factor_;
  double backoff_factor_;
  int64_t growth_interval_;
  int32_t growth_tracker_ = 0;  // int32, as PyTorch's tracker tensor
  double min_scale_;
  bool warned_at_floor_ = false;
  bool last_step_skipped_ = false;
  int64_t skipped_steps_ = 0;
  std::map<const optim::Optimizer*, OptimizerState> per_optimizer_;
};

}  // namespace kiln::amp
