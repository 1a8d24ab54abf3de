// kiln::nn::functional losses, as composites written to stay finite: cross entropy goes through
// log_softmax (input - logsumexp), never log(softmax); the logits form of binary cross entropy
// never evaluates exp of a positive number.
#include <kiln/autograd.h>
#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>

#include "loss_util.h"

#include <cmath>

namespace kiln::nn::functional {
namespace {

using detail::check_floating;
using detail::check_same_size;
using detail::reduce;

// The class dimension of an input of cross_entropy/nll_loss: 0 for an unbatched [C], else 1.
int64_t class_dim(const Tensor& input) { return input.dim() == 1 ? 0 : 1; }

// Checks the shapes of nll_loss's (input, target): [C] with [], [N, C] with [N], [N, C, d...]
// with [N, d...].
void check_index_target(const char* op, const Tensor& input, const Tensor& target) {
  KILN_CHECK_VALUE(input.dim() >= 1, op, ": expected an input of at least 1 dimension, but got ",
                   "a 0-dim tensor");
  KILN_CHECK_TYPE(target.dtype() == kLong, op, ": expected a target of class indices of dtype ",
                  "int64, but got ", dtype_name(target.dtype()));
  DimVector want;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (d != class_dim(input)) want.push_back(input.size(d));
  }
  KILN_CHECK_VALUE(target.sizes().equals(want), op, ": expected a target of size ",
                   IntArrayRef(want), " for an input of size ", input.sizes(), ", but got ",
                   "target of size ", target.sizes());
}

// nll_loss with the operator's name for messages.
Tensor nll(const char* op, const Tensor& input, const Tensor& target, const Tensor& weight,
           int64_t ignore_index, Reduction reduction) {
  check_index_target(op, input, target);
  check_floating(op, input);
  const int64_t dim = class_dim(input);
  const int64_t classes = input.size(dim);
  KILN_CHECK_VALUE(!weight.defined() || (weight.dim() == 1 && weight.numel() == classes), op,
                   ": weight tensor should be defined either for all ", classes, " classes or ",
                   "no classes but got weight tensor of shape: ", weight.sizes());
  Tensor valid = ne(target, ignore_index);
  Tensor safe = where(valid, target, zeros({}, target.options()));
  if (safe.numel() > 0) {
    int64_t low = min(safe).item<int64_t>(), high = max(safe).item<int64_t>();
    int64_t bad = low < 0 ? low : high;
    KILN_CHECK_INDEX(low >= 0 && high < classes, op, ": Target ", bad, " is out of bounds (",
                     "expected class indices in [0, ", classes, ") or ignore_index ", ignore_index,
                     ")");
  }
  Tensor picked = gather(input, dim, safe.unsqueeze(dim)).squeeze(dim);
  Tensor w = valid.to(input.dtype());
  if (weight.defined()) {
    w = w * weight.to(input.dtype()).index_select(0, safe.reshape({-1})).view(target.sizes());
  }
  Tensor loss = -picked * w;
  if (reduction == Reduction::Mean) return sum(loss) / sum(w);
  return reduce(loss, reduction);
}

}  // namespace

namespace {
using MseLossOp = Operator<Tensor(const Tensor&, const Tensor&, Reduction)>;
Tensor mse_loss_backend(const MseLossOp&, const Tensor& input, const Tensor& target,
                        Reduction reduction) {
  check_floating("mse_loss", input);
  Tensor diff = input - target;
  return reduce(diff * diff, reduction);
}
MseLossOp mse_loss_op("mse_loss",
                      "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
                      mse_loss_backend, false);
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return mse_loss_op(input, target, reduction);
}

namespace {
using NllLossOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, Reduction)>;
Tensor nll_loss_backend(const NllLossOp&, const Tensor& input, const Tensor& target,
                        const Tensor& weight, int64_t ignore_index, Reduction reduction) {
  return nll("nll_loss", input, target, weight, ignore_index, reduction);
}
NllLossOp nll_loss_op("nll_loss",
                      "nll_loss(Tensor self, Tensor target, Tensor? weight, int ignore_index=-100, "
                      "int reduction=Mean) -> Tensor",
                      nll_loss_backend, false);
}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                int64_t ignore_index, Reduction reduction) {
  return nll_loss_op(input, target, weight, ignore_index, reduction);
}

namespace {
// The loss of the uniform target for cross entropy with label smoothing and class indices:
// -sum_c weight[c] * logp[c] per position, 0 at ignored targets; Mean divides by the sum of the
// targets' weights (or their count), as nll_loss does.
Tensor uniform_target_loss(const Tensor& logp, const Tensor& target, const Tensor& weight,
                           int64_t ignore_index, Reduction reduction) {
  const int64_t dim = class_dim(logp);
  Tensor weighted = logp;
  Tensor valid = ne(target, ignore_index);
  Tensor target_weight = valid.to(logp.dtype());
  if (weight.defined()) {
    DimVector shape(static_cast<size_t>(logp.dim()), 1);
    shape[static_cast<size_t>(dim)] = weight.numel();
    weighted = logp * weight.to(logp.dtype()).view(shape);
    Tensor safe = where(valid, target, zeros({}, target.options()));
    target_weight =
        target_weight *
        weight.to(logp.dtype()).index_select(0, safe.reshape({-1})).view(target.sizes());
  }
  Tensor loss = where(valid, -sum(weighted, {dim}), zeros({}, logp.options()));
  if (reduction == Reduction::Mean) return sum(loss) / sum(target_weight);
  return reduce(loss, reduction);
}

using CrossEntropyOp =
    Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, Reduction, double)>;
Tensor cross_entropy_backend(const CrossEntropyOp&, const Tensor& input, const Tensor& target,
                             const Tensor& weight, int64_t ignore_index, Reduction reduction,
                             double label_smoothing) {
  check_floating("cross_entropy", input);
  KILN_CHECK_VALUE(input.dim() >= 1, "cross_entropy: expected an input of at least 1 dimension, ",
                   "but got a 0-dim tensor");
  KILN_CHECK_VALUE(label_smoothing >= 0.0 && label_smoothing <= 1.0,
                   "cross_entropy: ", "label_smoothing must be between 0.0 and 1.0, but got ",
                   label_smoothing);
  const int64_t dim = class_dim(input);
  const int64_t classes = input.size(dim);
  const double smoothing_per_class = label_smoothing / static_cast<double>(classes);
  Tensor logp = log_softmax(input, dim);
  if (!target.is_floating_point()) {
    Tensor loss = nll("cross_entropy", logp, target, weight, ignore_index, reduction);
    if (label_smoothing == 0.0) return loss;
    Tensor uniform = uniform_target_loss(logp, target, weight, ignore_index, reduction);
    return (1 - label_smoothing) * loss + uniform * smoothing_per_class;
  }
  // class probabilities
  KILN_CHECK_VALUE(target.sizes().equals(input.sizes()), "cross_entropy: expected a target of ",
                   "class probabilities of the input's size ", input.sizes(), ", but got ",
                   "target of size ", target.sizes());
  Tensor probabilities = target;
  if (label_smoothing > 0.0) {
    probabilities = target * (1 - label_smoothing) + smoothing_per_class;
  }
  if (weight.defined()) {
    KILN_CHECK_VALUE(weight.dim() == 1 && weight.numel() == classes, "cross_entropy: weight ",
                     "tensor should be defined either for all ", classes, " classes or no ",
                     "classes but got weight tensor of shape: ", weight.sizes());
    DimVector shape(static_cast<size_t>(input.dim()), 1);
    shape[static_cast<size_t>(dim)] = classes;
    logp = logp * weight.to(logp.dtype()).view(shape);
  }
  Tensor loss = -sum(logp * probabilities, {dim});
  return reduce(loss, reduction);
}
CrossEntropyOp cross_entropy_op("cross_entropy",
                                "cross_entropy(Tensor self, Tensor target, Tensor? weight, int "
                                "ignore_index=-100, int reduction=Mean, float "
                                "label_smoothing=0.0) -> Tensor",
                                cross_entropy_backend, false);
}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t ignore_index, Reduction reduction, double label_smoothing) {
  return cross_entropy_op(input, target, weight, ignore_index, reduction, label_smoothing);
}

namespace {
using BinaryCrossEntropyOp =
    Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, Reduction)>;
Tensor binary_cross_entropy_backend(const BinaryCrossEntropyOp&, const Tensor& input,
                                    const Tensor& target, const Tensor& weight,
                                    Reduction reduction) {
  check_same_size("binary_cross_entropy", input, target);
  check_floating("binary_cross_entropy", input);
  if (input.numel() > 0) {
    NoGradGuard no_grad;
    bool inside = all(logical_and(ge(input, 0), le(input, 1))).item<bool>();
    KILN_CHECK_VALUE(inside, "binary_cross_entropy: all elements of input should be between 0 ",
                     "and 1");
  }
  // log clamped to >= -100 (PyTorch's), through `where` so that log(0) = -inf never meets a
  // zero gradient (0 * inf would be NaN)
  const double tiny = std::exp(-100.0);
  auto clamped_log = [tiny](const Tensor& p) {
    Tensor usable = gt(p, tiny);
    return where(usable, log(where(usable, p, ones_like(p))), full_like(p, -100.0));
  };
  Tensor loss = -(target * clamped_log(input) + (1 - target) * clamped_log(1 - input));
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}
BinaryCrossEntropyOp binary_cross_entropy_op("binary_cross_entropy",
                                             "binary_cross_entropy(Tensor self, Tensor target, "
                                             "Tensor? weight, int reduction=Mean) -> Tensor",
                                             binary_cross_entropy_backend, false);
}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction) {
  return binary_cross_entropy_op(input, target, weight, reduction);
}

namespace {
using BinaryCrossEntropyWithLogitsOp =
    Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, Reduction, const Tensor&)>;
Tensor binary_cross_entropy_with_logits_backend(const BinaryCrossEntropyWithLogitsOp&,
                                                const Tensor& input, const Tensor& target,
                                                const Tensor& weight, Reduction reduction,
                                                const Tensor& pos_weight) {
  KILN_CHECK_VALUE(input.sizes().equals(target.sizes()),
                   "binary_cross_entropy_with_logits: ", "Target size (", target.sizes(),
                   ") must be the same as input size (", input.sizes(), ")");
  check_floating("binary_cross_entropy_with_logits", input);
  Tensor softplus_neg = detail::log1p_exp(-input);  // log(1 + exp(-x))
  Tensor loss;
  if (pos_weight.defined()) {
    Tensor log_weight = (pos_weight - 1) * target + 1;
    loss = (1 - target) * input + log_weight * softplus_neg;
  } else {
    loss = (1 - target) * input + softplus_neg;
  }
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}
BinaryCrossEntropyWithLogitsOp binary_cross_entropy_with_logits_op(
    "binary_cross_entropy_with_logits",
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight, int "
    "reduction=Mean, Tensor? pos_weight) -> Tensor",
    binary_cross_entropy_with_logits_backend, false);
}  // namespace

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, Reduction reduction,
                                        const Tensor& pos_weight) {
  return binary_cross_entropy_with_logits_op(input, target, weight, reduction, pos_weight);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return mse_loss(input, target, options.reduction());
}
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options) {
  return cross_entropy(input, target, options.weight(), options.ignore_index(), options.reduction(),
                       options.label_smoothing());
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  return nll_loss(input, target, options.weight(), options.ignore_index(), options.reduction());
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options) {
  return binary_cross_entropy(input, target, options.weight(), options.reduction());
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  return binary_cross_entropy_with_logits(input, target, options.weight(), options.reduction(),
                                          options.pos_weight());
}

}  // namespace kiln::nn::functional
