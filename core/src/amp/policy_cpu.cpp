// The CPU autocast policy (bfloat16 by default), after PyTorch's AutocastCPU lists, for the
// operators kiln has. See Note [Autocast policies].
#include "policy.h"

namespace kiln::amp::detail {

const std::vector<PolicyEntry>& cpu_policy_table() {
  using P = CastPolicy;
  static const std::vector<PolicyEntry> table = {
      // matrix products and convolutions: the lower dtype (AMX / AVX512-BF16 on oneDNN)
      {"mm", P::lower_precision},
      {"bmm", P::lower_precision},
      {"addmm", P::lower_precision},
      {"linear", P::lower_precision},
      {"conv2d", P::lower_precision},
      {"baddbmm", P::lower_precision},
      {"addbmm", P::lower_precision},
      // numerically sensitive: float32
      {"prod", P::fp32},
      {"trace", P::fp32},
      {"mse_loss", P::fp32},
      {"nll_loss", P::fp32},
      {"cross_entropy", P::fp32},
      {"binary_cross_entropy", P::fp32},
      {"binary_cross_entropy_with_logits", P::fp32},
      {"l1_loss", P::fp32},
      {"smooth_l1_loss", P::fp32},
      {"huber_loss", P::fp32},
      {"kl_div", P::fp32},
      {"margin_ranking_loss", P::fp32},
      {"hinge_embedding_loss", P::fp32},
      {"multi_margin_loss", P::fp32},
      {"multilabel_margin_loss", P::fp32},
      {"soft_margin_loss", P::fp32},
      {"cosine_embedding_loss", P::fp32},
      {"triplet_margin_loss", P::fp32},
      {"poisson_nll_loss", P::fp32},
      {"ctc_loss", P::fp32},
      {"grid_sampler", P::fp32},
      {"fractional_max_pool2d", P::fp32},
      {"fractional_max_pool3d", P::fp32},
      // mixed inputs: the widest
      {"cat", P::promote},
      {"stack", P::promote},
  };
  return table;
}

}  // namespace kiln::amp::detail
