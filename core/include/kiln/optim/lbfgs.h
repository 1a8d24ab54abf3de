// L-BFGS, exactly PyTorch 1.13's torch.optim.LBFGS (after Nocedal and Wright's "Numerical
// Optimization", algorithms 7.4 and 3.5-3.6): each step() runs up to max_iter iterations of a
// limited-memory quasi-Newton update over the flattened parameters, calling the closure (which
// recomputes the loss and the gradients) as it needs, with a fixed step lr or, with
// line_search_fn "strong_wolfe", a line search for a step that meets the strong Wolfe conditions.
//
//   kiln::optim::LBFGS opt(model->parameters(),
//                          kiln::optim::LBFGSOptions(1).line_search_fn("strong_wolfe"));
//   opt.step([&] {
//     opt.zero_grad();
//     kiln::Tensor loss = criterion(model(x), y);
//     loss.backward();
//     return loss;
//   });
//
// As PyTorch's, it takes one parameter group only, and its state (the direction, the step and the
// curvature history, with the counters) is kept under the first parameter, with flat tensors:
// state_dict() holds them as "d", "t", "old_dirs" [k, n], "old_stps" [k, n], "ro" [k], "al",
// "H_diag", "prev_flat_grad", "prev_loss", "func_evals", "n_iter".
#pragma once

#include <kiln/optim/optimizer.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::optim {

class KILN_API LBFGSOptions : public OptimizerCloneableOptions<LBFGSOptions> {
 public:
  // lr 1, max_iter 20, max_eval max_iter * 5 / 4, tolerance_grad 1e-7, tolerance_change 1e-9,
  // history_size 100, no line search: PyTorch's defaults. Implicit from the lr, as libtorch's.
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT: as libtorch

  // Each option has a setter that returns *this for chaining and a getter of the same name,
  // as libtorch's options.
  LBFGSOptions& lr(double v) {
    lr_ = v;
    return *this;
  }
  // Iterations per step().
  LBFGSOptions& max_iter(int64_t v) {
    max_iter_ = v;
    return *this;
  }
  // Closure calls per step() (nullopt: max_iter * 5 / 4).
  LBFGSOptions& max_eval(std::optional<int64_t> v) {
    max_eval_ = v;
    return *this;
  }
  // Stop when the largest gradient element is at most this.
  LBFGSOptions& tolerance_grad(double v) {
    tolerance_grad_ = v;
    return *this;
  }
  // Stop when the step or the loss changes by less than this.
  LBFGSOptions& tolerance_change(double v) {
    tolerance_change_ = v;
    return *this;
  }
  // Curvature pairs kept.
  LBFGSOptions& history_size(int64_t v) {
    history_size_ = v;
    return *this;
  }
  // nullopt (a fixed step of lr) or "strong_wolfe".
  LBFGSOptions& line_search_fn(std::optional<std::string> v) {
    line_search_fn_ = std::move(v);
    return *this;
  }
  double lr() const { return lr_; }
  int64_t max_iter() const { return max_iter_; }
  const std::optional<int64_t>& max_eval() const { return max_eval_; }
  double tolerance_grad() const { return tolerance_grad_; }
  double tolerance_change() const { return tolerance_change_; }
  int64_t history_size() const { return history_size_; }
  const std::optional<std::string>& line_search_fn() const { return line_search_fn_; }

  // OptimizerOptions: see kiln/optim/optimizer.h. In values(), max_eval is -1 when unset and
  // line_search_fn is 1 for "strong_wolfe", 0 for none.
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  OptionValues values() const override;
  void set_values(const OptionValues& values) override;
  void validate() const override;

 private:
  double lr_;
  int64_t max_iter_ = 20;
  std::optional<int64_t> max_eval_;
  double tolerance_grad_ = 1e-7;
  double tolerance_change_ = 1e-9;
  int64_t history_size_ = 100;
  std::optional<std::string> line_search_fn_;
};

// The state of an L-BFGS run (kept under the first parameter): see the top of this file.
class KILN_API LBFGSParamState : public OptimizerParamState {
 public:
  int64_t func_evals = 0;
  int64_t n_iter = 0;
  Tensor d;               // the last search direction, flat [n]
  Tensor t;               // the last step length, 0-dim
  Tensor old_dirs;        // [k, n]: y_i = grad_{i+1} - grad_i
  Tensor old_stps;        // [k, n]: s_i = t_i * d_i
  Tensor ro;              // [k]: 1 / (y_i . s_i)
  Tensor al;              // [history_size] scratch of the two-loop recursion
  Tensor H_diag;          // 0-dim: the initial inverse Hessian's scale
  Tensor prev_flat_grad;  // [n]
  double prev_loss = 0;

  // OptimizerParamState: see kiln/optim/optimizer.h.
  std::unique_ptr<OptimizerParamState> clone() const override;
  std::map<std::string, Tensor> tensors() const override;
  void set_tensor(const std::string& name, const Tensor& value) override;
  bool shaped_like_param(const std::string&) const override { return false; }
};

class KILN_API LBFGS : public Optimizer {
 public:
  // One group of `params`; throws ValueError for invalid options or more than one group.
  LBFGS(std::vector<Tensor> params, const LBFGSOptions& defaults = LBFGSOptions());
  LBFGS(std::vector<OptimizerParamGroup> param_groups,
        const LBFGSOptions& defaults = LBFGSOptions());

  // Runs up to max_iter iterations, calling `closure` (required: it must zero the gradients,
  // compute the loss and call backward) as the algorithm needs; returns the closure's first loss.
  Tensor step(const LossClosure& closure = nullptr) override;

 protected:
  void step_group(OptimizerParamGroup& group) override;
  std::unique_ptr<OptimizerParamState> make_state() const override;
};

}  // namespace kiln::optim
