// kiln::amp::GradScaler: the reference's algorithm (pytorch torch/amp/grad_scaler.py and
// _amp_update_scale_), with the scale and growth tracker kept on the host as float32 and int32.
#include <kiln/amp/grad_scaler.h>
#include <kiln/autograd.h>
#include <kiln/error.h>
#include <kiln/ops.h>

#include "../runtime.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace kiln::amp {
namespace {

constexpr double kMaxScale = std::numeric_limits<float>::max();
constexpr int64_t kMaxInterval = std::numeric_limits<int32_t>::max();

// Whether any element of the tensors is inf or NaN: x * 0 is 0 for every finite x and NaN
// otherwise, so one sum per tensor and one read of the total decide, exactly.
bool any_non_finite(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return false;
  std::vector<Tensor> probes;
  probes.reserve(tensors.size());
  for (const Tensor& t : tensors) probes.push_back(sum(t * 0.0, kFloat));
  return isnan(sum(stack(probes))).item<bool>();
}

// Throws unless the factors and the interval are ones GradScaler accepts.
void check_factors(double growth_factor, double backoff_factor, int64_t growth_interval) {
  KILN_CHECK_VALUE(growth_factor > 1.0 && std::isfinite(growth_factor), "GradScaler: the growth ",
                   "factor must be > 1.0 and finite, but got ", growth_factor);
  KILN_CHECK_VALUE(backoff_factor < 1.0 && backoff_factor > 0.0, "GradScaler: the backoff ",
                   "factor must be < 1.0 and > 0, but got ", backoff_factor);
  KILN_CHECK_VALUE(growth_interval >= 1 && growth_interval <= kMaxInterval, "GradScaler: the ",
                   "growth interval must be >= 1 and < 2^31 (the tracker is int32), but got ",
                   growth_interval);
}

// A whole number in [low, high] from a state dict's double, or ValueError naming the key.
int64_t state_integer(const std::map<std::string, double>& state, const char* key, int64_t low,
                      int64_t high) {
  double v = state.at(key);
  KILN_CHECK_VALUE(v == std::floor(v) && v >= static_cast<double>(low) &&
                       v <= static_cast<double>(high),
                   "GradScaler.load_state_dict: \"", key, "\" must be a whole number in [", low,
                   ", ", high, "], but got ", v);
  return static_cast<int64_t>(v);
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options)
    : enabled_(options.enabled),
      scale_(0.0f),
      init_scale_(options.init_scale),
      growth_factor_(options.growth_factor),
      backoff_factor_(options.backoff_factor),
      growth_interval_(options.growth_interval),
      min_scale_(options.min_scale.value_or(kDefaultMinScale)) {
  check_factors();
  KILN_CHECK_VALUE(min_scale_ >= kDefaultMinScale && min_scale_ <= kMaxScale, "GradScaler: ",
                   "min_scale must be in [2^-126, float32's largest] (the reciprocal of a smaller ",
                   "scale is not a finite float32), but got ", min_scale_);
  check_scale("GradScaler", "init_scale", init_scale_);
  scale_ = static_cast<float>(init_scale_);
}

void GradScaler::check_factors() const {
  amp::check_factors(growth_factor_, backoff_factor_, growth_interval_);
}

void GradScaler::check_scale(const char* who, const char* what, double v) const {
  KILN_CHECK_VALUE(std::isfinite(v) && v >= min_scale_ && v <= kMaxScale, who, ": ", what,
                   " must be finite and in [min_scale, float32's largest] = [", min_scale_, ", ",
                   kMaxScale, "], but got ", v);
}

Tensor GradScaler::scale(const Tensor& outputs) {
  if (!enabled_) return outputs;
  KILN_CHECK_VALUE(outputs.defined(), "GradScaler.scale: outputs must be a defined tensor");
  scale_initialized_ = true;
  return outputs * static_cast<double>(scale_);
}

std::vector<Tensor> GradScaler::scale(const std::vector<Tensor>& outputs) {
  std::vector<Tensor> scaled;
  scaled.reserve(outputs.size());
  for (const Tensor& t : outputs) scaled.push_back(scale(t));
  return scaled;
}

void GradScaler::unscale_(optim::Optimizer& opt) {
  if (!enabled_) return;
  KILN_CHECK(scale_initialized_, "GradScaler.unscale_: attempted unscale_ but the scale is not ",
             "set yet. This may indicate your script did not use scaler.scale(loss or outputs) ",
             "earlier in the iteration.");
  OptimizerState& st = state_of(opt);
  KILN_CHECK(st.stage != Stage::unscaled, "GradScaler.unscale_: unscale_() has already been ",
             "called on this optimizer (", opt.name(), ") since the last update().");
  KILN_CHECK(st.stage != Stage::stepped, "GradScaler.unscale_: unscale_() is being called after ",
             "step() on this optimizer (", opt.name(), ").");
  const double inv_scale = static_cast<float>(1.0 / static_cast<double>(scale_));
  std::map<std::string, std::vector<Tensor>> by_device;
  for (const Tensor& p : opt.parameters()) {
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    KILN_CHECK_VALUE(g.dtype() != kHalf, "GradScaler.unscale_: Attempting to unscale FP16 ",
                     "gradients (parameter of size ", p.sizes(), ", dtype ", dtype_name(p.dtype()),
                     ", gradient dtype float16, on ", p.device(), "). Keep the parameters in ",
                     "float32 and let autocast cast them.");
    by_device[g.device().str()].push_back(g);
  }
  NoGradGuard no_grad;
  for (auto& [device, grads] : by_device) {
    st.found_inf_per_device[device] = any_non_finite(grads);
    if (inv_scale == 1.0) continue;
    for (Tensor& g : grads) g.mul_(inv_scale);
  }
  st.stage = Stage::unscaled;
}

Tensor GradScaler::step(optim::Optimizer& opt, const optim::Optimizer::LossClosure& closure) {
  if (!enabled_) return opt.step(closure);
  KILN_CHECK(closure == nullptr, "GradScaler.step: Closure use is not currently supported if ",
             "GradScaler is enabled.");
  OptimizerState& st = state_of(opt);
  KILN_CHECK(st.stage != Stage::stepped, "GradScaler.step: step() has already been called since ",
             "the last update() for this optimizer (", opt.name(), ").");
  if (st.stage == Stage::ready) unscale_(opt);
  KILN_CHECK(!st.found_inf_per_device.empty(), "GradScaler.step: No inf checks were recorded ",
             "for this optimizer (", opt.name(), "): none of its ", opt.size(), " parameters ",
             "has a gradient.");
  bool found_inf = false;
  for (const auto& [device, inf] : st.found_inf_per_device) found_inf = found_inf || inf;
  Tensor result;
  if (found_inf) {
    ++skipped_steps_;
  } else {
    result = opt.step();
  }
  last_step_skipped_ = found_inf;
  st.stage = Stage::stepped;
  return result;
}

void GradScaler::update(std::optional<double> new_scale) {
  if (!enabled_) return;
  if (new_scale) {
    check_scale("GradScaler.update", "new_scale", *new_scale);
    scale_ = static_cast<float>(*new_scale);
    scale_initialized_ = true;
  } else {
    bool recorded = false, found_inf = false;
    for (const auto& [opt, st] : per_optimizer_) {
      for (const auto& [device, inf] : st.found_inf_per_device) {
        recorded = true;
        found_inf = found_inf || inf;
      }
    }
    KILN_CHECK(recorded, "GradScaler.update: No inf checks were recorded prior to update.");
    if (found_inf) {
      scale_ = static_cast<float>(scale_ * backoff_factor_);
      if (scale_ < min_scale_) {
        scale_ = static_cast<float>(min_scale_);
        if (!warned_at_floor_) {
          warned_at_floor_ = true;
          detail::warn(detail::str("GradScaler: the scale reached its floor min_scale=", min_scale_,
                                   " after repeated inf or NaN gradients, and ", skipped_steps_,
                                   " steps were skipped; gradients that overflow ",
                                   "at any scale come from the loss or the model, not from ",
                                   "float16's range"));
        }
      }
      growth_tracker_ = 0;
    } else {
      int32_t successful = growth_tracker_ + 1;
      if (successful == growth_interval_) {
        auto grown = static_cast<float>(scale_ * growth_factor_);
        if (std::isfinite(grown)) scale_ = grown;
        growth_tracker_ = 0;
      } else {
        growth_tracker_ = successful;
      }
    }
  }
  per_optimizer_.clear();
}

void GradScaler::update(const Tensor& new_scale) {
  if (!enabled_) return;
  KILN_CHECK_VALUE(new_scale.defined() && new_scale.numel() == 1 && !new_scale.requires_grad() &&
                       new_scale.is_floating_point(),
                   "GradScaler.update: new_scale should be a float or a 1-element floating ",
                   "tensor with requires_grad=False, but got ",
                   new_scale.defined() ? new_scale.sizes() : IntArrayRef{}, " ",
                   new_scale.defined() ? dtype_name(new_scale.dtype()) : "undefined",
                   new_scale.defined() && new_scale.requires_grad() ? " requiring grad" : "");
  update(new_scale.item<double>());
}

double GradScaler::get_scale() const {
  if (!enabled_) return 1.0;
  return scale_initialized_ ? static_cast<double>(scale_) : init_scale_;
}

void GradScaler::set_growth_factor(double v) {
  amp::check_factors(v, backoff_factor_, growth_interval_);
  growth_factor_ = v;
}
void GradScaler::set_backoff_factor(double v) {
  amp::check_factors(growth_factor_, v, growth_interval_);
  backoff_factor_ = v;
}
void GradScaler::set_growth_interval(int64_t v) {
  amp::check_factors(growth_factor_, backoff_factor_, v);
  growth_interval_ = v;
}

std::map<std::string, double> GradScaler::state_dict() const {
  if (!enabled_) return {};
  return {{"scale", get_scale()},
          {"growth_factor", growth_factor_},
          {"backoff_factor", backoff_factor_},
          {"growth_interval", static_cast<double>(growth_interval_)},
          {"_growth_tracker", static_cast<double>(growth_tracker_)}};
}

void GradScaler::load_state_dict(const std::map<std::string, double>& state) {
  if (!enabled_) return;
  KILN_CHECK(!state.empty(), "GradScaler.load_state_dict: The source state dict is empty, ",
             "possibly because it was saved from a disabled instance of GradScaler.");
  for (const char* key :
       {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}) {
    KILN_CHECK_VALUE(state.count(key), "GradScaler.load_state_dict: the state dict has no \"", key,
                     "\" entry");
  }
  // every value checked before any is kept
  double scale = state.at("scale");
  check_scale("GradScaler.load_state_dict", "\"scale\"", scale);
  double growth = state.at("growth_factor"), backoff = state.at("backoff_factor");
  int64_t interval = state_integer(state, "growth_interval", 1, kMaxInterval);
  amp::check_factors(growth, backoff, interval);
  int64_t tracker = state_integer(state, "_growth_tracker", 0, interval - 1);
  init_scale_ = scale;
  scale_ = static_cast<float>(scale);
  growth_factor_ = growth;
  backoff_factor_ = backoff;
  growth_interval_ = interval;
  growth_tracker_ = static_cast<int32_t>(tracker);
}

}  // namespace kiln::amp
