// L-BFGS: PyTorch 1.13's LBFGS.step, _strong_wolfe and _cubic_interpolate, operation for
// operation (see kiln/optim/lbfgs.h).
//
// Note [L-BFGS scalars]
// PyTorch's L-BFGS mixes Python floats (the losses, lr, the step when it comes from lr) with
// 0-dim tensors of the parameters' dtype (dot products, norms, and any value computed from one),
// and the branches of the line search compare them. Arithmetic with a float32 tensor happens in
// float32, the Python float rounded first. Num carries a value and whether PyTorch would hold it
// as a float32 tensor, and computes as PyTorch would, so the iterations take the same branches.
#include "option_values.h"

#include <kiln/autograd.h>
#include <kiln/ops.h>
#include <kiln/optim/lbfgs.h>

#include <cmath>
#include <deque>
#include <optional>
#include <tuple>
#include <utility>

namespace kiln::optim {
namespace {

// See Note [L-BFGS scalars].
struct Num {
  double v = 0;
  bool f32 = false;
};
Num num(double v) { return {v, false}; }
float as_float(double v) { return static_cast<float>(v); }
template <class Op>
Num apply(Num a, Num b, Op op) {
  if (a.f32 || b.f32) return {static_cast<double>(op(as_float(a.v), as_float(b.v))), true};
  return {op(a.v, b.v), false};
}
Num operator+(Num a, Num b) {
  return apply(a, b, [](auto x, auto y) { return x + y; });
}
Num operator-(Num a, Num b) {
  return apply(a, b, [](auto x, auto y) { return x - y; });
}
Num operator*(Num a, Num b) {
  return apply(a, b, [](auto x, auto y) { return x * y; });
}
Num operator/(Num a, Num b) {
  return apply(a, b, [](auto x, auto y) { return x / y; });
}
Num operator-(Num a) { return {-a.v, a.f32}; }
template <class Op>
bool compare(Num a, Num b, Op op) {
  if (a.f32 || b.f32) return op(as_float(a.v), as_float(b.v));
  return op(a.v, b.v);
}
bool operator<(Num a, Num b) {
  return compare(a, b, [](auto x, auto y) { return x < y; });
}
bool operator<=(Num a, Num b) {
  return compare(a, b, [](auto x, auto y) { return x <= y; });
}
bool operator>(Num a, Num b) { return b < a; }
bool operator>=(Num a, Num b) { return b <= a; }
Num abs(Num a) { return {std::abs(a.v), a.f32}; }
Num sqrt(Num a) {
  return a.f32 ? Num{static_cast<double>(std::sqrt(as_float(a.v))), true} : num(std::sqrt(a.v));
}
// Python's min and max of two: the first unless the second is strictly smaller (larger).
Num py_min(Num a, Num b) { return b < a ? b : a; }
Num py_max(Num a, Num b) { return b > a ? b : a; }

// A 0-dim tensor's value, a float32 Num for a float32 tensor.
Num item(const Tensor& t) { return {t.item<double>(), t.dtype() == kFloat}; }
Tensor scalar_tensor(Num n) {
  return full({}, n.v, TensorOptions().dtype(n.f32 ? kFloat : kDouble));
}

// PyTorch's _cubic_interpolate: the minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2),
// clamped to the bounds (by default [min(x1, x2), max(x1, x2)]).
Num cubic_interpolate(Num x1, Num f1, Num g1, Num x2, Num f2, Num g2,
                      std::optional<std::pair<Num, Num>> bounds = std::nullopt) {
  Num xmin_bound = x1 <= x2 ? x1 : x2;
  Num xmax_bound = x1 <= x2 ? x2 : x1;
  if (bounds) std::tie(xmin_bound, xmax_bound) = *bounds;
  Num d1 = g1 + g2 - num(3) * (f1 - f2) / (x1 - x2);
  Num d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= num(0)) {
    Num d2 = sqrt(d2_square);
    Num min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + num(2) * d2))
                           : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + num(2) * d2));
    return py_min(py_max(min_pos, xmin_bound), xmax_bound);
  }
  return (xmin_bound + xmax_bound) / num(2);
}

// The flattened parameters of one L-BFGS run and the closure's evaluations over them.
class Problem {
 public:
  Problem(std::vector<Tensor>& params, const Optimizer::LossClosure& closure)
      : params_(params), closure_(closure) {}

  // The closure's loss (as a Python float) and the flat gradient (zeros for a missing grad).
  double evaluate() {
    Tensor loss;
    {
      AutoGradMode enable_grad(true);
      loss = closure_();
    }
    KILN_CHECK(loss.defined() && loss.numel() == 1, "LBFGS: the closure must return the loss, ",
               "a tensor of one element");
    return loss.item<double>();
  }
  Tensor flat_grad() const {
    std::vector<Tensor> views;
    for (const Tensor& p : params_) {
      views.push_back(p.grad().defined() ? p.grad().reshape({-1}) : zeros({p.numel()}, p.dtype()));
    }
    return cat(views, 0);
  }
  // p += step * update, parameter by parameter.
  void add_grad(Num step, const Tensor& update) {
    int64_t offset = 0;
    for (Tensor& p : params_) {
      p.add_(update.slice(0, offset, offset + p.numel()).view(p.sizes()), step.v);
      offset += p.numel();
    }
  }
  std::vector<Tensor> clone_params() const {
    std::vector<Tensor> copies;
    for (const Tensor& p : params_) copies.push_back(p.clone());
    return copies;
  }
  void set_params(const std::vector<Tensor>& values) {
    for (size_t i = 0; i < params_.size(); ++i) params_[i].copy_(values[i]);
  }
  // PyTorch's _directional_evaluate: the loss and gradient at x + t * d; the parameters are x
  // again afterwards.
  std::pair<double, Tensor> directional_evaluate(const std::vector<Tensor>& x, Num t,
                                                 const Tensor& d) {
    add_grad(t, d);
    double loss = evaluate();
    Tensor grad = flat_grad();
    set_params(x);
    return {loss, grad};
  }
  int64_t numel() const {
    int64_t n = 0;
    for (const Tensor& p : params_) n += p.numel();
    return n;
  }

 private:
  std::vector<Tensor>& params_;
  const Optimizer::LossClosure& closure_;
};

struct LineSearchResult {
  double loss;
  Tensor flat_grad;
  Num t;
  int64_t func_evals;
};

// PyTorch's _strong_wolfe: a step t along d from x (loss f, gradient g, directional derivative
// gtd) that meets the strong Wolfe conditions, by bracketing then zooming (Nocedal and Wright,
// algorithms 3.5 and 3.6).
LineSearchResult strong_wolfe(Problem& problem, const std::vector<Tensor>& x, Num t,
                              const Tensor& d, double f, const Tensor& g, Num gtd,
                              double tolerance_change) {
  const double c1 = 1e-4, c2 = 0.9;
  const int64_t max_ls = 25;
  Num d_norm = item(d.abs().max());
  auto [f_new, g_new] = problem.directional_evaluate(x, t, d);
  int64_t ls_func_evals = 1;
  Num gtd_new = item(dot(g_new, d));

  Num t_prev = num(0);
  double f_prev = f;
  Tensor g_prev = g.clone();
  Num gtd_prev = gtd;
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<Num> bracket, bracket_gtd;
  std::vector<double> bracket_f;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (num(f_new) > num(f) + num(c1) * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new.clone()};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (abs(gtd_new) <= -num(c2) * gtd) {
      bracket = {t};
      bracket_f = {f_new};
      bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= num(0)) {
      bracket = {t_prev, t};
      bracket_f = {f_prev, f_new};
      bracket_g = {g_prev, g_new.clone()};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    // interpolate
    Num min_step = t + num(0.01) * (t - t_prev);
    Num max_step = t * num(10);
    Num tmp = t;
    t = cubic_interpolate(t_prev, num(f_prev), gtd_prev, t, num(f_new), gtd_new,
                          std::make_pair(min_step, max_step));
    t_prev = tmp;
    f_prev = f_new;
    g_prev = g_new.clone();
    gtd_prev = gtd_new;
    std::tie(f_new, g_new) = problem.directional_evaluate(x, t, d);
    ++ls_func_evals;
    gtd_new = item(dot(g_new, d));
    ++ls_iter;
  }
  if (ls_iter == max_ls) {
    bracket = {num(0), t};
    bracket_f = {f, f_new};
    bracket_g = {g, g_new};
  }

  // zoom
  bool insuf_progress = false;
  size_t low_pos = bracket_f.front() <= bracket_f.back() ? 0 : 1;
  size_t high_pos = 1 - low_pos;
  while (!done && ls_iter < max_ls) {
    if (abs(bracket[1] - bracket[0]) * d_norm < num(tolerance_change)) break;
    t = cubic_interpolate(bracket[0], num(bracket_f[0]), bracket_gtd[0], bracket[1],
                          num(bracket_f[1]), bracket_gtd[1]);
    Num high = py_max(bracket[0], bracket[1]);
    Num low = py_min(bracket[0], bracket[1]);
    Num eps = num(0.1) * (high - low);
    if (py_min(high - t, t - low) < eps) {
      if (insuf_progress || t >= high || t <= low) {
        t = abs(t - high) < abs(t - low) ? high - eps : low + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = problem.directional_evaluate(x, t, d);
    ++ls_func_evals;
    gtd_new = item(dot(g_new, d));
    ++ls_iter;
    if (num(f_new) > num(f) + num(c1) * t * gtd || f_new >= bracket_f[low_pos]) {
      bracket[high_pos] = t;
      bracket_f[high_pos] = f_new;
      bracket_g[high_pos] = g_new.clone();
      bracket_gtd[high_pos] = gtd_new;
      low_pos = bracket_f[0] <= bracket_f[1] ? 0 : 1;
      high_pos = 1 - low_pos;
    } else {
      if (abs(gtd_new) <= -num(c2) * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high_pos] - bracket[low_pos]) >= num(0)) {
        bracket[high_pos] = bracket[low_pos];
        bracket_f[high_pos] = bracket_f[low_pos];
        bracket_g[high_pos] = bracket_g[low_pos];
        bracket_gtd[high_pos] = bracket_gtd[low_pos];
      }
      bracket[low_pos] = t;
      bracket_f[low_pos] = f_new;
      bracket_g[low_pos] = g_new.clone();
      bracket_gtd[low_pos] = gtd_new;
    }
  }
  return {bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals};
}

}  // namespace

// --- options ---------------------------------------------------------------------------------

OptionValues LBFGSOptions::values() const {
  return {{"lr", lr_},
          {"max_iter", static_cast<double>(max_iter_)},
          {"max_eval", max_eval_ ? static_cast<double>(*max_eval_) : -1.0},
          {"tolerance_grad", tolerance_grad_},
          {"tolerance_change", tolerance_change_},
          {"history_size", static_cast<double>(history_size_)},
          {"line_search_fn", line_search_fn_ ? 1.0 : 0.0}};
}

void LBFGSOptions::set_values(const OptionValues& values) {
  double max_iter = 0, max_eval = 0, history_size = 0, line_search = 0;
  LBFGSOptions read = *this;
  internal::read_options("LBFGSOptions", values,
                         {{"lr", &read.lr_},
                          {"max_iter", &max_iter},
                          {"max_eval", &max_eval},
                          {"tolerance_grad", &read.tolerance_grad_},
                          {"tolerance_change", &read.tolerance_change_},
                          {"history_size", &history_size},
                          {"line_search_fn", &line_search}});
  for (double v : {max_iter, max_eval, history_size}) {
    KILN_CHECK_VALUE(v == std::floor(v) && std::abs(v) < 1e15, "LBFGSOptions: max_iter, ",
                     "max_eval and history_size must be integers (got ", v, ")");
  }
  KILN_CHECK_VALUE(line_search == 0 || line_search == 1,
                   "LBFGSOptions: line_search_fn must be 0 (none) or 1 (strong_wolfe), got ",
                   line_search);
  read.max_iter_ = static_cast<int64_t>(max_iter);
  read.max_eval_ = max_eval < 0 ? std::nullopt
                                : std::optional<int64_t>(static_cast<int64_t>(max_eval));
  read.history_size_ = static_cast<int64_t>(history_size);
  read.line_search_fn_ = line_search == 1 ? std::optional<std::string>("strong_wolfe")
                                          : std::nullopt;
  *this = read;
}

void LBFGSOptions::validate() const {
  KILN_CHECK_VALUE(lr_ >= 0.0, "LBFGS: Invalid learning rate: ", lr_);
  KILN_CHECK_VALUE(max_iter_ >= 1, "LBFGS: max_iter must be at least 1, got ", max_iter_);
  KILN_CHECK_VALUE(!max_eval_ || *max_eval_ >= 1, "LBFGS: max_eval must be at least 1, got ",
                   max_eval_.value_or(0));
  KILN_CHECK_VALUE(history_size_ >= 1, "LBFGS: history_size must be at least 1, got ",
                   history_size_);
  KILN_CHECK_VALUE(!line_search_fn_ || *line_search_fn_ == "strong_wolfe",
                   "LBFGS: only 'strong_wolfe' is supported as line_search_fn, got '",
                   line_search_fn_.value_or(""), "'");
}

// --- state -----------------------------------------------------------------------------------

std::unique_ptr<OptimizerParamState> LBFGSParamState::clone() const {
  auto copy = std::make_unique<LBFGSParamState>();
  for (const auto& [name, t] : tensors()) copy->set_tensor(name, t.clone());
  return copy;
}

std::map<std::string, Tensor> LBFGSParamState::tensors() const {
  std::map<std::string, Tensor> out;
  out["func_evals"] = full({}, func_evals, TensorOptions().dtype(kLong));
  out["n_iter"] = full({}, n_iter, TensorOptions().dtype(kLong));
  if (!d.defined()) return out;
  out["d"] = d;
  out["t"] = t;
  out["old_dirs"] = old_dirs;
  out["old_stps"] = old_stps;
  out["ro"] = ro;
  out["H_diag"] = H_diag;
  out["prev_flat_grad"] = prev_flat_grad;
  out["prev_loss"] = full({}, prev_loss, TensorOptions().dtype(kDouble));
  return out;
}

void LBFGSParamState::set_tensor(const std::string& name, const Tensor& value) {
  auto scalar = [&](const char* what) {
    KILN_CHECK_VALUE(value.numel() == 1, "LBFGS state '", what, "' must have one element");
    return value.reshape({});
  };
  if (name == "func_evals") {
    func_evals = scalar("func_evals").item<int64_t>();
  } else if (name == "n_iter") {
    n_iter = scalar("n_iter").item<int64_t>();
  } else if (name == "prev_loss") {
    prev_loss = scalar("prev_loss").item<double>();
  } else if (name == "t") {
    t = scalar("t");
  } else if (name == "H_diag") {
    H_diag = scalar("H_diag");
  } else if (name == "d") {
    d = value;
  } else if (name == "old_dirs") {
    old_dirs = value;
  } else if (name == "old_stps") {
    old_stps = value;
  } else if (name == "ro") {
    ro = value;
  } else if (name == "prev_flat_grad") {
    prev_flat_grad = value;
  } else {
    KILN_CHECK_VALUE(false, "LBFGS has no state '", name,
                     "' (it keeps d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, "
                     "prev_loss, func_evals, n_iter)");
  }
}

// --- the optimizer ---------------------------------------------------------------------------

LBFGS::LBFGS(std::vector<Tensor> params, const LBFGSOptions& defaults)
    : LBFGS(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

LBFGS::LBFGS(std::vector<OptimizerParamGroup> param_groups, const LBFGSOptions& defaults)
    : Optimizer("LBFGS", std::move(param_groups), defaults.clone()) {
  KILN_CHECK_VALUE(this->param_groups().size() == 1,
                   "LBFGS doesn't support per-parameter options (parameter groups)");
  for (OptimizerOptions* o : {&this->defaults(), &this->param_groups()[0].options()}) {
    auto& options = static_cast<LBFGSOptions&>(*o);
    if (!options.max_eval()) options.max_eval(options.max_iter() * 5 / 4);
  }
}

std::unique_ptr<OptimizerParamState> LBFGS::make_state() const {
  return std::make_unique<LBFGSParamState>();
}

void LBFGS::step_group(OptimizerParamGroup&) {
  KILN_INTERNAL_ASSERT(false, "LBFGS::step_group is never called: LBFGS::step runs the group");
}

Tensor LBFGS::step(const LossClosure& closure) {
  KILN_CHECK(closure != nullptr, "LBFGS: step() needs a closure that zeroes the gradients, ",
             "computes the loss, calls backward() and returns the loss");
  KILN_CHECK_VALUE(param_groups().size() == 1,
                   "LBFGS doesn't support per-parameter options (parameter groups)");
  NoGradGuard no_grad;
  OptimizerParamGroup& group = param_groups()[0];
  const auto& o = static_cast<const LBFGSOptions&>(group.options());
  std::vector<Tensor>& params = group.params();
  LBFGSParamState& state = state_of<LBFGSParamState>(params[0]);
  Problem problem(params, closure);
  const int64_t n = problem.numel();

  Tensor orig_loss;
  {
    AutoGradMode enable_grad(true);
    orig_loss = closure();
  }
  KILN_CHECK(orig_loss.defined() && orig_loss.numel() == 1,
             "LBFGS: the closure must return the loss, a tensor of one element");
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  state.func_evals += 1;
  Tensor flat_grad = problem.flat_grad();
  if (item(flat_grad.abs().max()) <= num(o.tolerance_grad())) return orig_loss;

  // The state of the previous step() (see LBFGSParamState).
  Tensor d = state.d;
  Num t = state.t.defined() ? item(state.t) : num(0);
  std::deque<Tensor> old_dirs, old_stps;
  std::deque<Num> ro;
  if (state.old_dirs.defined()) {
    KILN_CHECK_VALUE(state.d.numel() == n && state.old_dirs.dim() == 2 &&
                         state.old_dirs.size(1) == n &&
                         state.old_stps.sizes().equals(state.old_dirs.sizes()) &&
                         state.ro.numel() == state.old_dirs.size(0),
                     "LBFGS: the state does not fit the parameters (", n, " elements)");
    for (int64_t i = 0; i < state.old_dirs.size(0); ++i) {
      old_dirs.push_back(state.old_dirs[i].clone());
      old_stps.push_back(state.old_stps[i].clone());
      ro.push_back(item(state.ro[i]));
    }
  }
  Num H_diag = state.H_diag.defined() ? item(state.H_diag) : num(1);
  Tensor prev_flat_grad = state.prev_flat_grad;
  double prev_loss = state.prev_loss;
  std::vector<Num> al(static_cast<size_t>(o.history_size()));

  int64_t n_iter = 0;
  while (n_iter < o.max_iter()) {
    ++n_iter;
    ++state.n_iter;
    // the direction: steepest descent first, then the two-loop recursion
    if (state.n_iter == 1) {
      d = flat_grad.neg();
      old_dirs.clear();
      old_stps.clear();
      ro.clear();
      H_diag = num(1);
    } else {
      Tensor y = flat_grad.sub(prev_flat_grad);
      Tensor s = d.mul(t.v);
      Num ys = item(dot(y, s));
      if (ys > num(1e-10)) {
        if (static_cast<int64_t>(old_dirs.size()) == o.history_size()) {
          old_dirs.pop_front();
          old_stps.pop_front();
          ro.pop_front();
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(num(1) / ys);
        H_diag = ys / item(dot(y, y));
      }
      const size_t num_old = old_dirs.size();
      Tensor q = flat_grad.neg();
      for (size_t i = num_old; i-- > 0;) {
        al[i] = item(dot(old_stps[i], q)) * ro[i];
        q.add_(old_dirs[i], -al[i].v);
      }
      Tensor r = q.mul(H_diag.v);
      for (size_t i = 0; i < num_old; ++i) {
        Num be_i = item(dot(old_dirs[i], r)) * ro[i];
        r.add_(old_stps[i], (al[i] - be_i).v);
      }
      d = r;
    }
    prev_flat_grad = prev_flat_grad.defined() ? prev_flat_grad.copy_(flat_grad) : flat_grad.clone();
    prev_loss = loss;
    // the step length
    if (state.n_iter == 1) {
      t = py_min(num(1), num(1) / item(flat_grad.abs().sum())) * num(o.lr());
    } else {
      t = num(o.lr());
    }
    Num gtd = item(dot(flat_grad, d));
    if (gtd > -num(o.tolerance_change())) break;

    int64_t ls_func_evals = 0;
    bool opt_cond = false;
    if (o.line_search_fn()) {
      std::vector<Tensor> x_init = problem.clone_params();
      LineSearchResult found =
          strong_wolfe(problem, x_init, t, d, loss, flat_grad, gtd, o.tolerance_change());
      loss = found.loss;
      flat_grad = found.flat_grad;
      t = found.t;
      ls_func_evals = found.func_evals;
      problem.add_grad(t, d);
      opt_cond = item(flat_grad.abs().max()) <= num(o.tolerance_grad());
    } else {
      problem.add_grad(t, d);
      if (n_iter != o.max_iter()) {
        loss = problem.evaluate();
        flat_grad = problem.flat_grad();
        opt_cond = item(flat_grad.abs().max()) <= num(o.tolerance_grad());
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    state.func_evals += ls_func_evals;

    if (n_iter == o.max_iter()) break;
    if (current_evals >= *o.max_eval()) break;
    if (opt_cond) break;
    if (item(d.mul(t.v).abs().max()) <= num(o.tolerance_change())) break;
    if (std::abs(loss - prev_loss) < o.tolerance_change()) break;
  }

  state.d = d;
  state.t = scalar_tensor(t);
  if (old_dirs.empty()) {
    state.old_dirs = zeros({0, n}, flat_grad.dtype());
    state.old_stps = zeros({0, n}, flat_grad.dtype());
    state.ro = zeros({0}, flat_grad.dtype());
  } else {
    state.old_dirs = stack(std::vector<Tensor>(old_dirs.begin(), old_dirs.end()), 0);
    state.old_stps = stack(std::vector<Tensor>(old_stps.begin(), old_stps.end()), 0);
    std::vector<Tensor> ros;
    for (Num r : ro) ros.push_back(scalar_tensor(r));
    state.ro = stack(ros, 0);
  }
  state.H_diag = scalar_tensor(H_diag);
  state.prev_flat_grad = prev_flat_grad;
  state.prev_loss = prev_loss;
  return orig_loss;
}

}  // namespace kiln::optim
