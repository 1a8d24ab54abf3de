// multinomial: a composite over rand, cumsum and comparisons. See kiln/sampling.h.
#include <kiln/sampling.h>

#include <kiln/autograd.h>
#include <kiln/error.h>
#include <kiln/ops.h>

#include <limits>
#include <vector>

namespace kiln {
namespace {

// With replacement: sample j of a row is the number of cumulative weights at or below
// u_j * total (u_j uniform in [0, 1)), so category i is drawn when u_j * total falls in
// [cdf[i-1], cdf[i]): never a category of weight 0. The cumulative weights are summed in float64.
// The count is capped at the last category of positive weight, which rounding of u_j * total up
// to total would otherwise overshoot.
Tensor sample_with_replacement(const Tensor& p, int64_t n) {
  Tensor cdf = cumsum(p, -1, kDouble);                  // [B, V]
  Tensor total = narrow(cdf, -1, cdf.size(-1) - 1, 1);  // [B, 1]
  Tensor u = rand({p.size(0), n}, TensorOptions().dtype(kDouble).device(p.device())) * total;
  Tensor below = le(cdf.unsqueeze(1), u.unsqueeze(2));  // [B, n, V]
  Tensor index = below.sum({-1}, false, kLong);         // [B, n]
  Tensor last = lt(cdf, total).sum({-1}, true, kLong);  // [B, 1]
  return minimum(index, last);
}

// Without replacement, PyTorch's exponential race: the categories of the n largest
// p / E (E ~ Exp(1) per category), taken one argmax at a time.
Tensor sample_without_replacement(const Tensor& p, int64_t n) {
  Tensor u = rand(p.sizes(), TensorOptions().dtype(kDouble).device(p.device()));
  Tensor race = p.to(kDouble) / neg(log1p(neg(u)));  // p / E, E = -log(1 - u) > 0
  Tensor categories = arange(p.size(-1), TensorOptions().dtype(kLong).device(p.device()));
  std::vector<Tensor> picks;
  for (int64_t j = 0; j < n; ++j) {
    Tensor pick = race.argmax(-1, /*keepdim=*/true);  // [B, 1]
    picks.push_back(pick);
    if (j + 1 < n) race = race.masked_fill(eq(categories, pick), -1.0);
  }
  return cat(picks, -1);
}

}  // namespace

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
  KILN_CHECK_VALUE(probs.defined(), "multinomial: expects a defined probability tensor");
  KILN_CHECK_VALUE(probs.dim() == 1 || probs.dim() == 2, "multinomial: prob_dist must be 1 or 2 ",
                   "dim, got a tensor of shape ", probs.sizes());
  KILN_CHECK_TYPE(probs.is_floating_point(), "multinomial: only supports floating-point dtypes ",
                  "for input, got: ", dtype_name(probs.dtype()), " (convert the weights with ",
                  ".to(kiln::kFloat))");
  KILN_CHECK_VALUE(num_samples > 0, "multinomial: cannot sample n_sample <= 0 samples (got ",
                   num_samples, ")");
  const int64_t categories = probs.size(-1);
  KILN_CHECK_VALUE(replacement || num_samples <= categories, "multinomial: cannot sample ",
                   "n_sample > prob_dist.size(-1) samples without replacement (", num_samples,
                   " samples of ", categories, " categories)");
  KILN_CHECK_VALUE(categories > 0, "multinomial: prob_dist of shape ", probs.sizes(),
                   " has no categories");
  const int64_t rows = probs.dim() == 2 ? probs.size(0) : 1;
  int64_t work = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(rows, num_samples, &work) &&
                       !__builtin_mul_overflow(work, categories, &work),
                   "multinomial: ", rows, " rows x ", num_samples, " samples x ", categories,
                   " categories overflows int64");
  NoGradGuard no_grad;
  Tensor p = probs.dim() == 1 ? probs.unsqueeze(0) : probs;
  if (p.numel() == 0) {
    return empty(probs.dim() == 1 ? std::vector<int64_t>{num_samples}
                                  : std::vector<int64_t>{rows, num_samples},
                 TensorOptions().dtype(kLong).device(probs.device()));
  }
  bool bad = logical_or(lt(p, 0),
                        logical_or(isnan(p), eq(abs(p), std::numeric_limits<double>::infinity())))
                 .any()
                 .item<bool>();
  KILN_CHECK_VALUE(!bad, "multinomial: probability tensor contains either `inf`, `nan` or ",
                   "element < 0 (shape ", probs.sizes(), ", ", dtype_name(probs.dtype()), ", on ",
                   probs.device(), ")");
  Tensor positive = gt(p, 0).sum({-1}, false, kLong);
  KILN_CHECK_VALUE(positive.min().item<int64_t>() > 0, "multinomial: invalid multinomial ",
                   "distribution (sum of probabilities <= 0): a row of the ", probs.sizes(),
                   " weights is all zeros");
  KILN_CHECK_VALUE(replacement || positive.min().item<int64_t>() >= num_samples,
                   "multinomial: invalid multinomial distribution (with replacement=False, not ",
                   "enough non-negative category to sample): ", num_samples, " samples need as ",
                   "many categories of positive weight in every row");
  Tensor out = replacement ? sample_with_replacement(p, num_samples)
                           : sample_without_replacement(p, num_samples);
  return probs.dim() == 1 ? out.squeeze(0) : out;
}

}  // namespace kiln
