// Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay,
// exactly PyTorch 1.13's torch.optim.SGD:
//
//   g = grad (negated when maximize) + weight_decay * p
//   buf = g on the first step, then buf = momentum * buf + (1 - dampening) * g
//   g = nesterov ? g + momentum * buf : buf            (when momentum != 0)
//   p -= lr * g
//
//   kiln::optim::SGD opt(model.parameters(),
//                        kiln::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
#pragma once

#include <kiln/optim/optimizer.h>

namespace kiln::optim {

class KILN_API SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
 public:
  // No default learning rate, as PyTorch's SGD. Implicit, as libtorch's: SGD(params, 0.1).
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT: as libtorch

  // Each option has a setter that returns *this for chaining and a getter of the same name,
  // as libtorch's options; the meaning of each is in the formula above.
  SGDOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  SGDOptions& momentum(double v) {
    momentum_ = v;
    return *this;
  }
  SGDOptions& dampening(double v) {
    dampening_ = v;
    return *this;
  }
  SGDOptions& weight_decay(double v) {
    weight_decay_ = v;
    return *this;
  }
  SGDOptions& nesterov(bool v) {
    nesterov_ = v;
    return *this;
  }
  SGDOptions& maximize(bool v) {
    maximize_ = v;
    return *this;
  }
  double lr() const { return lr_; }
  double momentum() const { return momentum_; }
  double dampening() const { return dampening_; }
  double weight_decay() const { return weight_decay_; }
  bool nesterov() const { return nesterov_; }
  bool maximize() const { return maximize_; }

  // OptimizerOptions: see kiln/optim/optimizer.h.
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  OptionValues values() const override;
  void set_values(const OptionValues& values) override;
  void validate() const override;

 private:
  double lr_;
  double momentum_ = 0;
  double dampening_ = 0;
  double weight_decay_ = 0;
  bool nesterov_ = false;
  bool maximize_ = false;
};

// The momentum buffer of one parameter (undefined until the first step with momentum).
class KILN_API SGDParamState : public OptimizerParamState {
 public:
  Tensor momentum_buffer;

  // OptimizerParamState: see kiln/optim/optimizer.h.
  std::unique_ptr<OptimizerParamState> clone() const override;
  std::map<std::string, Tensor> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;
};

class KILN_API SGD : public Optimizer {
 public:
  // One group of `params` with `defaults`; throws ValueError for invalid options.
  SGD(std::vector<Tensor> params, const SGDOptions& defaults);
  // Groups without options take `defaults`.
  SGD(std::vector<OptimizerParamGroup> param_groups, const SGDOptions& defaults);

 protected:
  void step_group(OptimizerParamGroup& group) override;
  std::unique_ptr<OptimizerParamState> make_state() const override;
};

}  // namespace kiln::optim
