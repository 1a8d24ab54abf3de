// kiln::nn::functional's margin and embedding losses: margin ranking, hinge embedding, multi-class
// and multi-label margins, soft margins, cosine embedding and the triplet losses. Composites of
// kiln operators; each with a policy in the autocast tables is an operator of its own.
#include <kiln/nn/functional.h>

#include "loss_util.h"

namespace kiln::nn::functional {
namespace {

using detail::check_floating;
using detail::reduce;

using MarginPairOp =
    Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, double, Reduction)>;
Tensor margin_ranking_loss_backend(const MarginPairOp&, const Tensor& input1, const Tensor& input2,
                                   const Tensor& target, double margin, Reduction reduction) {
  KILN_CHECK_VALUE(input1.dim() == input2.dim() && input1.dim() == target.dim(),
                   "margin_ranking_loss: all input tensors should have the same number of "
                   "dimensions, but got sizes input1: ",
                   input1.sizes(), ", input2: ", input2.sizes(), ", target: ", target.sizes());
  return reduce(clamp_min(-target * (input1 - input2) + margin, 0), reduction);
}
MarginPairOp margin_ranking_loss_op("margin_ranking_loss",
                                    "margin_ranking_loss(Tensor input1, Tensor input2, Tensor "
                                    "target, float margin=0.0, int reduction=Mean) -> Tensor",
                                    margin_ranking_loss_backend, false);

Tensor cosine_embedding_loss_backend(const MarginPairOp&, const Tensor& input1,
                                     const Tensor& input2, const Tensor& target, double margin,
                                     Reduction reduction) {
  const int64_t dim = target.dim();
  KILN_CHECK_VALUE(dim <= 1, "cosine_embedding_loss: expected a 0-D or 1-D target, but got ",
                   "one of size ", target.sizes());
  KILN_CHECK_VALUE(input1.dim() == dim + 1 && input2.dim() == dim + 1,
                   "cosine_embedding_loss: ", "a ", dim, "-D target expects ", dim + 1,
                   "-D inputs, but got inputs of sizes ", input1.sizes(), " and ", input2.sizes());
  const double tiny = 1e-12;  // PyTorch's EPSILON against a zero vector
  Tensor dot = sum(input1 * input2, {dim});
  Tensor square1 = sum(input1 * input1, {dim}) + tiny;
  Tensor square2 = sum(input2 * input2, {dim}) + tiny;
  Tensor cos = dot / sqrt(square1 * square2);
  Tensor positive = where(eq(target, 1), 1 - cos, 0.0);
  Tensor negative = where(eq(target, -1), clamp_min(cos - margin, 0), 0.0);
  return reduce(positive + negative, reduction);
}
MarginPairOp cosine_embedding_loss_op("cosine_embedding_loss",
                                      "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor "
                                      "target, float margin=0.0, int reduction=Mean) -> Tensor",
                                      cosine_embedding_loss_backend, false);

using HingeEmbeddingOp = Operator<Tensor(const Tensor&, const Tensor&, double, Reduction)>;
Tensor hinge_embedding_loss_backend(const HingeEmbeddingOp&, const Tensor& input,
                                    const Tensor& target, double margin, Reduction reduction) {
  check_floating("hinge_embedding_loss", input);
  // as PyTorch's: a target other than 1 and -1 takes both terms
  Tensor below_margin = where(ne(target, 1), clamp_min(margin - input, 0), 0.0);
  Tensor itself = where(ne(target, -1), input, 0.0);
  return reduce(below_margin + itself, reduction);
}
HingeEmbeddingOp hinge_embedding_loss_op("hinge_embedding_loss",
                                         "hinge_embedding_loss(Tensor self, Tensor target, float "
                                         "margin=1.0, int reduction=Mean) -> Tensor",
                                         hinge_embedding_loss_backend, false);

// Checks a margin loss's input: [N, C] or [C] (or a 0-D one) with C > 0.
void check_margin_input(const char* op, const Tensor& input) {
  check_floating(op, input);
  bool ok = (input.dim() == 2 && input.size(1) != 0) || (input.dim() == 1 && input.numel() != 0) ||
            input.dim() == 0;
  KILN_CHECK_VALUE(ok, op, ": expected a non-empty vector or matrix (with an optional 0-size ",
                   "batch), but got input of size ", input.sizes());
}

// Checks that class indices lie in [low, classes).
void check_class_range(const char* op, const Tensor& target, int64_t low, int64_t classes) {
  KILN_CHECK_TYPE(target.dtype() == kLong, op, ": expected a target of class indices of dtype ",
                  "int64, but got ", dtype_name(target.dtype()));
  if (target.numel() == 0) return;
  int64_t least = min(target).item<int64_t>(), most = max(target).item<int64_t>();
  KILN_CHECK_INDEX(least >= low && most < classes, op, ": target ", least < low ? least : most,
                   " is out of range: expected class indices in [", low, ", ", classes, ")");
}

using MultiMarginOp =
    Operator<Tensor(const Tensor&, const Tensor&, int64_t, double, const Tensor&, Reduction)>;
Tensor multi_margin_loss_backend(const MultiMarginOp&, const Tensor& input, const Tensor& target,
                                 int64_t p, double margin, const Tensor& weight,
                                 Reduction reduction) {
  KILN_CHECK_VALUE(p == 1 || p == 2, "multi_margin_loss: only p == 1 and p == 2 are supported, ",
                   "but got p = ", p);
  check_margin_input("multi_margin_loss", input);
  Tensor x = input.dim() == 2 ? input : input.reshape({1, -1});
  const int64_t batch = x.size(0), classes = x.size(1);
  KILN_CHECK_VALUE(target.dim() <= 1 && target.numel() == batch, "multi_margin_loss: expected ",
                   "a target of ", batch, " class indices for an input of size ", input.sizes(),
                   ", but got target of size ", target.sizes());
  check_class_range("multi_margin_loss", target, 0, classes);
  KILN_CHECK_VALUE(!weight.defined() || (weight.dim() == 1 && weight.numel() == classes),
                   "multi_margin_loss: expected a weight of ", classes, " elements (one per ",
                   "class), but got weight of size ", weight.sizes());
  Tensor t = target.reshape({batch, 1});
  Tensor hinge = clamp_min(margin - gather(x, 1, t) + x, 0);  // [N, C]
  if (p == 2) hinge = hinge * hinge;
  if (weight.defined())
    hinge = hinge * weight.to(x.dtype()).index_select(0, t.reshape({-1})).unsqueeze(1);
  Tensor others = ne(arange(classes, t.options()).unsqueeze(0), t);
  Tensor loss = sum(where(others, hinge, 0.0), {1}) / static_cast<double>(classes);
  if (target.dim() == 0) loss = loss.reshape({});
  return reduce(loss, reduction);
}
MultiMarginOp multi_margin_loss_op("multi_margin_loss",
                                   "multi_margin_loss(Tensor self, Tensor target, int p=1, float "
                                   "margin=1.0, Tensor? weight=None, int reduction=Mean) -> Tensor",
                                   multi_margin_loss_backend, false);

using PairLossOp = Operator<Tensor(const Tensor&, const Tensor&, Reduction)>;
Tensor multilabel_margin_loss_backend(const PairLossOp&, const Tensor& input, const Tensor& target,
                                      Reduction reduction) {
  const char* op = "multilabel_margin_loss";
  check_margin_input(op, input);
  KILN_CHECK_VALUE(target.sizes().equals(input.sizes()), op, ": expected a target of the ",
                   "input's size ", input.sizes(), ", but got target of size ", target.sizes());
  Tensor x = input.dim() == 2 ? input : input.reshape({1, -1});
  const int64_t batch = x.size(0), classes = x.size(1);
  check_class_range(op, target, -1, classes);
  Tensor t = target.reshape({batch, classes});
  // the targets of a sample are its indices up to the first -1
  Tensor positions = arange(classes, t.options()).unsqueeze(0);  // [1, C]
  Tensor first_end = amin(where(eq(t, -1), positions, classes), {1}, /*keepdim=*/true);
  Tensor valid = lt(positions, first_end);  // [N, K]
  Tensor safe = where(valid, t, 0);
  Tensor is_target =
      any(logical_and(eq(safe.unsqueeze(2), positions.unsqueeze(0)), valid.unsqueeze(2)),
          1);  // [N, C]
  // hinge[n, k, j] = max(0, 1 - (x[n, t[n, k]] - x[n, j])) over targets k and non-targets j
  Tensor hinge = clamp_min(1 - gather(x, 1, safe).unsqueeze(2) + x.unsqueeze(1), 0);
  Tensor counted = logical_and(valid.unsqueeze(2), logical_not(is_target).unsqueeze(1));
  Tensor loss = sum(where(counted, hinge, 0.0), {1, 2}) / static_cast<double>(classes);
  if (input.dim() <= 1) loss = loss.reshape({});
  return reduce(loss, reduction);
}
PairLossOp multilabel_margin_loss_op("multilabel_margin_loss",
                                     "multilabel_margin_loss(Tensor self, Tensor target, int "
                                     "reduction=Mean) -> Tensor",
                                     multilabel_margin_loss_backend, false);

Tensor soft_margin_loss_backend(const PairLossOp&, const Tensor& input, const Tensor& target,
                                Reduction reduction) {
  check_floating("soft_margin_loss", input);
  return reduce(detail::log1p_exp(-target * input), reduction);
}
PairLossOp soft_margin_loss_op("soft_margin_loss",
                               "soft_margin_loss(Tensor self, Tensor target, int reduction=Mean) "
                               "-> Tensor",
                               soft_margin_loss_backend, false);

using TripletOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, double, double,
                                  double, bool, Reduction)>;
Tensor triplet_margin_loss_backend(const TripletOp&, const Tensor& anchor, const Tensor& positive,
                                   const Tensor& negative, double margin, double p, double eps,
                                   bool swap, Reduction reduction) {
  KILN_CHECK_VALUE(anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
                   "triplet_margin_loss: all inputs should have the same number of dimensions, ",
                   "but got ", anchor.dim(), "-D, ", positive.dim(), "-D and ", negative.dim(),
                   "-D inputs");
  Tensor to_positive = pairwise_distance(anchor, positive, p, eps);
  Tensor to_negative = pairwise_distance(anchor, negative, p, eps);
  if (swap) to_negative = minimum(to_negative, pairwise_distance(positive, negative, p, eps));
  return reduce(clamp_min(margin + to_positive - to_negative, 0), reduction);
}
TripletOp triplet_margin_loss_op("triplet_margin_loss",
                                 "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor "
                                 "negative, float margin=1.0, float p=2, float eps=1e-06, bool "
                                 "swap=False, int reduction=Mean) -> Tensor",
                                 triplet_margin_loss_backend, false);

}  // namespace

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, Reduction reduction) {
  return margin_ranking_loss_op(input1, input2, target, margin, reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin,
                            Reduction reduction) {
  return hinge_embedding_loss_op(input, target, margin, reduction);
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p, double margin,
                         const Tensor& weight, Reduction reduction) {
  return multi_margin_loss_op(input, target, p, margin, weight, reduction);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return multilabel_margin_loss_op(input, target, reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return soft_margin_loss_op(input, target, reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction) {
  check_floating("multilabel_soft_margin_loss", input);
  KILN_CHECK_VALUE(input.dim() >= 1, "multilabel_soft_margin_loss: expected an input of at ",
                   "least 1 dimension, but got a 0-dim tensor");
  // -(target * log_sigmoid(x) + (1 - target) * log_sigmoid(-x)), log_sigmoid(x) = -log1p_exp(-x)
  Tensor loss = target * detail::log1p_exp(-input) + (1 - target) * detail::log1p_exp(input);
  if (weight.defined()) loss = loss * weight;
  const int64_t class_dim = input.dim() - 1;
  loss = sum(loss, {class_dim}) / static_cast<double>(input.size(class_dim));
  return reduce(loss, reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, Reduction reduction) {
  return cosine_embedding_loss_op(input1, input2, target, margin, reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, Reduction reduction) {
  return triplet_margin_loss_op(anchor, positive, negative, margin, p, eps, swap, reduction);
}

// --- option forms -----------------------------------------------------------------------------

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  return margin_ranking_loss(input1, input2, target, options.margin(), options.reduction());
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& options) {
  return hinge_embedding_loss(input, target, options.margin(), options.reduction());
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                         const MultiMarginLossFuncOptions& options) {
  return multi_margin_loss(input, target, options.p(), options.margin(), options.weight(),
                           options.reduction());
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options) {
  return multilabel_margin_loss(input, target, options.reduction());
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const SoftMarginLossFuncOptions& options) {
  return soft_margin_loss(input, target, options.reduction());
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options) {
  return multilabel_soft_margin_loss(input, target, options.weight(), options.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  return cosine_embedding_loss(input1, input2, target, options.margin(), options.reduction());
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options) {
  return triplet_margin_loss(anchor, positive, negative, options.margin(), options.p(),
                             options.eps(), options.swap(), options.reduction());
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                         const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options) {
  auto distance = options.distance_function().value_or([](const Tensor& a, const Tensor& b) {
    return pairwise_distance(a, b);
  });
  Tensor to_positive = distance(anchor, positive);
  Tensor to_negative = distance(anchor, negative);
  if (options.swap()) to_negative = minimum(to_negative, distance(positive, negative));
  return reduce(clamp_min(options.margin() + to_positive - to_negative, 0), options.reduction());
}

}  // namespace kiln::nn::functional
