// Adagrad, exactly PyTorch 1.13's torch.optim.Adagrad:
//
//   step += 1
//   g = grad (negated when maximize) + weight_decay * p
//   clr = lr / (1 + (step - 1) * lr_decay)
//   sum += g * g
//   p -= clr * g / (sqrt(sum) + eps)
//
// As PyTorch's, every parameter gets its state (step 0, sum = initial_accumulator_value) when
// the optimizer is made, so state_dict() lists parameters that were never stepped.
//
//   kiln::optim::Adagrad opt(model->parameters(), kiln::optim::AdagradOptions(0.1));
#pragma once

#include <kiln/optim/optimizer.h>

namespace kiln::optim {

class KILN_API AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
 public:
  // lr 1e-2, lr_decay 0, weight_decay 0, initial_accumulator_value 0, eps 1e-10: PyTorch's
  // defaults. Implicit from the lr, as libtorch's.
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: as libtorch

  // Each option has a setter that returns *this for chaining and a getter of the same name,
  // as libtorch's options; the meaning of each is in the formula above.
  AdagradOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  AdagradOptions& lr_decay(double v) {
    lr_decay_ = v;
    return *this;
  }
  AdagradOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  AdagradOptions& initial_accumulator_value(double v) {
    initial_accumulator_value_ = v;
    return *this;
  }
  AdagradOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  AdagradOptions& maximize(bool v) {
    maximize_ = v;
    return *this;
  }
  double lr() const { return lr_; }
  double lr_decay() const { return lr_decay_; }
  double weight_decay() const { return weight_decay_; }
  double initial_accumulator_value() const { return initial_accumulator_value_; }
  double eps() const { return eps_; }
  bool maximize() const { return maximize_; }

  // OptimizerOptions: see kiln/optim/optimizer.h.
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  OptionValues values() const override;
  void set_values(const OptionValues& values) override;
  void validate() const override;

 private:
  double lr_;
  double lr_decay_ = 0;
  double weight_decay_ = 0;
  double initial_accumulator_value_ = 0;
  double eps_ = 1e-10;
  bool maximize_ = false;
};

// The step count (a 0-dim float32 CPU tensor, as PyTorch's) and sum of squared gradients.
class KILN_API AdagradParamState : public OptimizerParamState {
 public:
  Tensor step;
  Tensor sum;

  // OptimizerParamState: see kiln/optim/optimizer.h.
  std::unique_ptr<OptimizerParamState> clone() const override;
  std::map<std::string, Tensor> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;
  void validate() const override;
};

class KILN_API Adagrad : public Optimizer {
 public:
  // One group of `params` with `defaults`; throws ValueError for invalid options.
  Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults = AdagradOptions());
  // Groups without options take `defaults`.
  Adagrad(std::vector<OptimizerParamGroup> param_groups,
          const AdagradOptions& defaults = AdagradOptions());

 protected:
  void step_group(OptimizerParamGroup& group) override;
  std::unique_ptr<OptimizerParamState> make_state() const override;

 private:
  // The state of p, made as PyTorch's __init__ makes it when p has none.
  AdagradParamState& state_for(const Tensor& p, const AdagradOptions& options);
};

}  // namespace kiln::optim
