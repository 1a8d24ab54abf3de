// Adam and AdamW, exactly PyTorch 1.13's torch.optim.Adam and torch.optim.AdamW:
//
//   step += 1
//   Adam:  g = grad (negated when maximize) + weight_decay * p
//   AdamW: g = grad (negated when maximize);  p *= 1 - lr * weight_decay   (decoupled)
//   exp_avg    = beta1 * exp_avg    + (1 - beta1) * g
//   exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
//   v = amsgrad ? (max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq)) : exp_avg_sq
//   p -= lr / (1 - beta1^step) * exp_avg / (sqrt(v) / sqrt(1 - beta2^step) + eps)
//
//   kiln::optim::Adam opt({w}, kiln::optim::AdamOptions(0.1));
//   kiln::optim::AdamW opt(params, kiln::optim::AdamWOptions(1e-3).weight_decay(0.05));
#pragma once

#include <kiln/optim/optimizer.h>

#include <tuple>

namespace kiln::optim {

// The options of Adam and AdamW (they differ in the default weight decay only).
template <class Derived>
class KILN_API AdamOptionsBase : public OptimizerCloneableOptions<Derived> {
 public:
  explicit AdamOptionsBase(double lr, double weight_decay) : lr_(lr), weight_decay_(weight_decay) {}

  // Each option has a setter that returns *this for chaining and a getter of the same name,
  // as libtorch's options; the meaning of each is in the formula above.
  Derived& lr(double v) {
    lr_ = v;
    return self();
  }
  Derived& betas(const std::tuple<double, double>& v) {
    betas_ = v;
    return self();
  }
  Derived& eps(double v) {
    eps_ = v;
    return self();
  }
  Derived& weight_decay(double v) {
    weight_decay_ = v;
    return self();
  }
  Derived& amsgrad(bool v) {
    amsgrad_ = v;
    return self();
  }
  Derived& maximize(bool v) {
    maximize_ = v;
    return self();
  }
  double lr() const { return lr_; }
  const std::tuple<double, double>& betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool amsgrad() const { return amsgrad_; }
  bool maximize() const { return maximize_; }

  // OptimizerOptions: see kiln/optim/optimizer.h.
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  OptionValues values() const override;
  void set_values(const OptionValues& values) override;
  void validate() const override;

 private:
  Derived& self() { return static_cast<Derived&>(*this); }

  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_;
  bool amsgrad_ = false;
  bool maximize_ = false;
};

class KILN_API AdamOptions : public AdamOptionsBase<AdamOptions> {
 public:
  // lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0, amsgrad false: PyTorch's defaults.
  // Implicit from the lr, as libtorch's: Adam(params, 0.1).
  AdamOptions(double lr = 1e-3) : AdamOptionsBase(lr, 0.0) {}  // NOLINT: as libtorch
};

class KILN_API AdamWOptions : public AdamOptionsBase<AdamWOptions> {
 public:
  // As AdamOptions but weight_decay 1e-2 (decoupled), PyTorch's AdamW defaults. Implicit from
  // the lr, as libtorch's.
  AdamWOptions(double lr = 1e-3) : AdamOptionsBase(lr, 1e-2) {}  // NOLINT: as libtorch
};

extern template class AdamOptionsBase<AdamOptions>;
extern template class AdamOptionsBase<AdamWOptions>;

// The moment estimates of one parameter. step is a 0-dim float32 CPU tensor, as PyTorch's.
class KILN_API AdamParamState : public OptimizerParamState {
 public:
  Tensor step;
  Tensor exp_avg;
  Tensor exp_avg_sq;
  Tensor max_exp_avg_sq;  // defined with amsgrad only

  // OptimizerParamState: see kiln/optim/optimizer.h.
  std::unique_ptr<OptimizerParamState> clone() const override;
  std::map<std::string, Tensor> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;
  void validate() const override;
};

class KILN_API Adam : public Optimizer {
 public:
  // One group of `params` with `defaults`; throws ValueError for invalid options.
  Adam(std::vector<Tensor> params, const AdamOptions& defaults = AdamOptions());
  // Groups without options take `defaults`.
  Adam(std::vector<OptimizerParamGroup> param_groups, const AdamOptions& defaults = AdamOptions());

 protected:
  void step_group(OptimizerParamGroup& group) override;
  std::unique_ptr<OptimizerParamState> make_state() const override;
};

class KILN_API AdamW : public Optimizer {
 public:
  // One group of `params` with `defaults`; throws ValueError for invalid options.
  AdamW(std::vector<Tensor> params, const AdamWOptions& defaults = AdamWOptions());
  // Groups without options take `defaults`.
  AdamW(std::vector<OptimizerParamGroup> param_groups,
        const AdamWOptions& defaults = AdamWOptions());

 protected:
  void step_group(OptimizerParamGroup& group) override;
  std::unique_ptr<OptimizerParamState> make_state() const override;
};

}  // namespace kiln::optim
