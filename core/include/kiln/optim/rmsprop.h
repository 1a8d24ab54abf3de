// RMSprop, exactly PyTorch 1.13's torch.optim.RMSprop:
//
//   step += 1
//   g = grad (negated when maximize) + weight_decay * p
//   square_avg = alpha * square_avg + (1 - alpha) * g * g
//   centered:  grad_avg = alpha * grad_avg + (1 - alpha) * g;  avg = sqrt(square_avg - grad_avg^2)
//   otherwise: avg = sqrt(square_avg)
//   avg += eps
//   momentum > 0:  buf = momentum * buf + g / avg;  p -= lr * buf
//   otherwise:     p -= lr * g / avg
//
//   kiln::optim::RMSprop opt(model->parameters(), kiln::optim::RMSpropOptions(0.01).alpha(0.9));
#pragma once

#include <kiln/optim/optimizer.h>

namespace kiln::optim {

class KILN_API RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
 public:
  // lr 1e-2, alpha 0.99, eps 1e-8, weight_decay 0, momentum 0, centered false: PyTorch's
  // defaults. Implicit from the lr, as libtorch's.
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: as libtorch

  // Each option has a setter that returns *this for chaining and a getter of the same name,
  // as libtorch's options; the meaning of each is in the formula above.
  RMSpropOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  RMSpropOptions& alpha(double v) {
    alpha_ = v;
    return *this;
  }
  RMSpropOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  RMSpropOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  RMSpropOptions& momentum(double v) {
    momentum_ = v;
    return *this;
  }
  RMSpropOptions& centered(bool v) {
    centered_ = v;
    return *this;
  }
  RMSpropOptions& maximize(bool v) {
    maximize_ = v;
    return *this;
  }
  double lr() const { return lr_; }
  double alpha() const { return alpha_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  double momentum() const { return momentum_; }
  bool centered() const { return centered_; }
  bool maximize() const { return maximize_; }

  // OptimizerOptions: see kiln/optim/optimizer.h.
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  OptionValues values() const override;
  void set_values(const OptionValues& values) override;
  void validate() const override;

 private:
  double lr_;
  double alpha_ = 0.99;
  double eps_ = 1e-8;
  double weight_decay_ = 0;
  double momentum_ = 0;
  bool centered_ = false;
  bool maximize_ = false;
};

// The running averages of one parameter. step is a 0-dim float32 CPU tensor, as PyTorch's.
class KILN_API RMSpropParamState : public OptimizerParamState {
 public:
  Tensor step;
  Tensor square_avg;
  Tensor momentum_buffer;  // defined when momentum > 0
  Tensor grad_avg;         // defined when centered

  // OptimizerParamState: see kiln/optim/optimizer.h.
  std::unique_ptr<OptimizerParamState> clone() const override;
  std::map<std::string, Tensor> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;
  void validate() const override;
};

class KILN_API RMSprop : public Optimizer {
 public:
  // One group of `params` with `defaults`; throws ValueError for invalid options.
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults = RMSpropOptions());
  // Groups without options take `defaults`.
  RMSprop(std::vector<OptimizerParamGroup> param_groups,
          const RMSpropOptions& defaults = RMSpropOptions());

 protected:
  void step_group(OptimizerParamGroup& group) override;
  std::unique_ptr<OptimizerParamState> make_state() const override;
};

}  // namespace kiln::optim
