// kiln::nn::functional's regression and likelihood losses: l1, smooth L1, Huber, KL divergence,
// Poisson and Gaussian negative log-likelihoods. Composites of kiln operators (autograd
// differentiates them); each with a policy in the autocast tables is an operator of its own.
#include <kiln/autograd.h>
#include <kiln/nn/functional.h>

#include "loss_util.h"

#include <cmath>
#include <numbers>

namespace kiln::nn::functional {
namespace {

using detail::check_floating;
using detail::reduce;

using PairLossOp = Operator<Tensor(const Tensor&, const Tensor&, Reduction)>;
Tensor l1_loss_backend(const PairLossOp&, const Tensor& input, const Tensor& target,
                       Reduction reduction) {
  check_floating("l1_loss", input);
  return reduce(abs(input - target), reduction);
}
PairLossOp l1_loss_op("l1_loss",
                      "l1_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
                      l1_loss_backend, false);

// smooth_l1_loss and huber_loss: quadratic below `threshold`, linear above.
using ThresholdLossOp = Operator<Tensor(const Tensor&, const Tensor&, Reduction, double)>;
Tensor smooth_l1_loss_backend(const ThresholdLossOp&, const Tensor& input, const Tensor& target,
                              Reduction reduction, double beta) {
  check_floating("smooth_l1_loss", input);
  KILN_CHECK_VALUE(beta >= 0, "smooth_l1_loss: beta must not be negative, but got ", beta);
  if (beta == 0) return l1_loss_op(input, target, reduction);
  Tensor z = abs(input - target);
  return reduce(where(lt(z, beta), 0.5 * z * z / beta, z - 0.5 * beta), reduction);
}
ThresholdLossOp smooth_l1_loss_op("smooth_l1_loss",
                                  "smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, "
                                  "float beta=1.0) -> Tensor",
                                  smooth_l1_loss_backend, false);

Tensor huber_loss_backend(const ThresholdLossOp&, const Tensor& input, const Tensor& target,
                          Reduction reduction, double delta) {
  check_floating("huber_loss", input);
  KILN_CHECK_VALUE(delta > 0, "huber_loss: delta must be positive, but got ", delta);
  Tensor z = abs(input - target);
  return reduce(where(lt(z, delta), 0.5 * z * z, delta * (z - 0.5 * delta)), reduction);
}
ThresholdLossOp huber_loss_op("huber_loss",
                              "huber_loss(Tensor self, Tensor target, int reduction=Mean, "
                              "float delta=1.0) -> Tensor",
                              huber_loss_backend, false);

using KlDivOp = Operator<Tensor(const Tensor&, const Tensor&, Reduction, bool)>;
Tensor kl_div_backend(const KlDivOp&, const Tensor& input, const Tensor& target,
                      Reduction reduction, bool log_target) {
  KILN_CHECK_TYPE(input.is_floating_point() && target.is_floating_point(), "kl_div: expected ",
                  "floating point input and target, but got ", dtype_name(input.dtype()), " and ",
                  dtype_name(target.dtype()));
  if (log_target) return reduce(exp(target) * (target - input), reduction);
  // target * log(target), 0 where target is 0 (log evaluated at 1 there, so that its gradient
  // stays finite)
  Tensor zero = eq(target, 0);
  Tensor entropy = where(zero, 0.0, target * log(where(zero, 1.0, target)));
  return reduce(entropy - target * input, reduction);
}
KlDivOp kl_div_op("kl_div",
                  "kl_div(Tensor self, Tensor target, int reduction=Mean, bool log_target=False) "
                  "-> Tensor",
                  kl_div_backend, false);

using PoissonNllLossOp =
    Operator<Tensor(const Tensor&, const Tensor&, bool, bool, double, Reduction)>;
Tensor poisson_nll_loss_backend(const PoissonNllLossOp&, const Tensor& input, const Tensor& target,
                                bool log_input, bool full, double eps, Reduction reduction) {
  check_floating("poisson_nll_loss", input);
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    // Stirling's approximation of log(target!), where target > 1 (evaluated at 2 elsewhere)
    Tensor large = gt(target, 1);
    Tensor t = where(large, target, 2.0);
    Tensor stirling = t * log(t) - t + 0.5 * log(2 * std::numbers::pi * t);
    loss = loss + where(large, stirling, 0.0);
  }
  return reduce(loss, reduction);
}
PoissonNllLossOp poisson_nll_loss_op("poisson_nll_loss",
                                     "poisson_nll_loss(Tensor input, Tensor target, bool "
                                     "log_input, bool full, float eps, int reduction) -> Tensor",
                                     poisson_nll_loss_backend, false);

}  // namespace

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return l1_loss_op(input, target, reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  return smooth_l1_loss_op(input, target, reduction, beta);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  return huber_loss_op(input, target, reduction, delta);
}

Tensor kl_div(const Tensor& input, const Tensor& target, KLDivReduction reduction,
              bool log_target) {
  const bool batchmean = std::holds_alternative<BatchMean>(reduction);
  Tensor out = kl_div_op(input, target, batchmean ? Reduction::Sum : std::get<Reduction>(reduction),
                         log_target);
  if (batchmean && input.dim() != 0) out = out / static_cast<double>(input.size(0));
  return out;
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, Reduction reduction) {
  return poisson_nll_loss_op(input, target, log_input, full, eps, reduction);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full,
                         double eps, Reduction reduction) {
  check_floating("gaussian_nll_loss", input);
  Tensor v = var;
  if (!var.sizes().equals(input.sizes())) {
    // homoscedastic: var lacks input's last dimension, or has it as 1
    auto leading = [](const Tensor& t) {
      return IntArrayRef(t.sizes().data(), t.dim() > 0 ? static_cast<size_t>(t.dim() - 1) : 0);
    };
    bool without_last = input.dim() > 0 && var.sizes().equals(leading(input));
    bool last_is_one = var.dim() == input.dim() && var.dim() > 0 && var.size(-1) == 1 &&
                       leading(var).equals(leading(input));
    KILN_CHECK_VALUE(without_last || last_is_one, "gaussian_nll_loss: var of size ", var.sizes(),
                     " does not fit the input of size ", input.sizes(), "; expected the input's ",
                     "size, or it without its last dimension or with that dimension 1");
    if (without_last) v = var.unsqueeze(-1);
  }
  if (v.numel() > 0) {
    NoGradGuard no_grad;
    KILN_CHECK_VALUE(!any(lt(v, 0)).item<bool>(), "gaussian_nll_loss: var has negative entries");
  }
  v = detail::clamp_min_keep_grad(v, eps);
  Tensor diff = input - target;
  Tensor loss = 0.5 * (log(v) + diff * diff / v);
  if (full) loss = loss + 0.5 * std::log(2 * std::numbers::pi);
  return reduce(loss, reduction);
}

// --- option forms -----------------------------------------------------------------------------

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  return l1_loss(input, target, options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options, std::optional<double> beta) {
  KILN_CHECK_VALUE(!(beta && options.beta()), "smooth_l1_loss: expected beta not to be given in ",
                   "the options, but got ", options.beta().value_or(0.0), " there and ",
                   beta.value_or(0.0), " as an argument");
  double chosen = beta.value_or(options.beta().value_or(1.0));
  return smooth_l1_loss(input, target, options.reduction(), chosen);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  return huber_loss(input, target, options.reduction(), options.delta());
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  return kl_div(input, target, options.reduction(), options.log_target());
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                        const PoissonNLLLossFuncOptions& options) {
  return poisson_nll_loss(input, target, options.log_input(), options.full(), options.eps(),
                          options.reduction());
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                         const GaussianNLLLossFuncOptions& options) {
  return gaussian_nll_loss(input, target, var, options.full(), options.eps(), options.reduction());
}

}  // namespace kiln::nn::functional
