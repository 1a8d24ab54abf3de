// kiln::nn::utils::clip_grad_norm_ and clip_grad_value_.
#include <kiln/autograd.h>
#include <kiln/nn/utils.h>
#include <kiln/ops.h>

#include <cmath>
#include <limits>

namespace kiln::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return 0.0;
  // the norm of the per-tensor norms is the norm of all elements together
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) norms.push_back(norm(g, norm_type).to(kDouble).reshape({1}));
  Tensor all_norms = cat(norms);
  double total = std::isinf(norm_type) ? amax(all_norms).item<double>()
                                       : norm(all_norms, norm_type).item<double>();
  KILN_CHECK_VALUE(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_: the total ",
                   "norm of order ", norm_type, " for gradients from `parameters` is ",
                   "non-finite, so it cannot be clipped. To disable this error and scale the ",
                   "gradients by the non-finite norm anyway, set error_if_nonfinite=false");
  double coef = max_norm / (total + 1e-6);
  if (!(coef >= 1.0)) {  // a NaN norm makes NaN gradients, as PyTorch
    for (const Tensor& g : grads) const_cast<Tensor&>(g).mul_(coef);
  }
  return total;
}

double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>(parameters), max_norm, norm_type, error_if_nonfinite);
}

double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters) {
    if (p.defined() && p.grad().defined()) {
      const_cast<Tensor&>(p.grad()).clamp_(-clip_value, clip_value);
    }
  }
}

void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value) {
  clip_grad_value_(std::vector<Tensor>(parameters), clip_value);
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace kiln::nn::utils
