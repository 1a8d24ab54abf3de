// The CUDA autocast policy (float16 by default), after PyTorch's Autocast (CUDA) lists, for the
// operators kiln has; it also serves every device type other than the CPU. See Note [Autocast
// policies].
#include "policy.h"

namespace kiln::amp::detail {

const std::vector<PolicyEntry>& cuda_policy_table() {
  using P = CastPolicy;
  static const std::vector<PolicyEntry> table = {
      // matrix products and convolutions: the lower dtype (tensor cores)
      {"mm", P::lower_precision},
      {"bmm", P::lower_precision},
      {"addmm", P::lower_precision},
      {"linear", P::lower_precision},
      {"conv2d", P::lower_precision},
      {"mv", P::lower_precision},
      {"addmv", P::lower_precision},
      {"addr", P::lower_precision},
      {"baddbmm", P::lower_precision},
      {"addbmm", P::lower_precision},
      // numerically sensitive: float32 (and exp, log, log1p, expm1, rsqrt, pow: kFp32OffCpu in
      // their declarations, core/src/ops/unary.cpp and binary.cpp)
      {"softplus", P::fp32},
      {"layer_norm", P::fp32},
      {"logsumexp", P::fp32},
      {"mse_loss", P::fp32},
      {"nll_loss", P::fp32},
      {"cross_entropy", P::fp32},
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
      {"cosine_similarity", P::fp32},
      {"pdist", P::fp32},
      // reductions and the softmax family: float32 unless the call gives a dtype
      {"sum", P::fp32_set_opt_dtype},
      {"prod", P::fp32_set_opt_dtype},
      {"cumsum", P::fp32_set_opt_dtype},
      {"cumprod", P::fp32_set_opt_dtype},
      {"softmax", P::fp32_set_opt_dtype},
      {"log_softmax", P::fp32_set_opt_dtype},
      // mixed inputs: the widest
      {"scatter_add", P::promote},
      {"bilinear", P::promote},
      {"grid_sampler", P::promote},
      // unsafe in float16
      {"binary_cross_entropy", P::banned},
  };
  return table;
}

std::string banned_message(const char* op) {
  return std::string(op) +
         ": kiln::nn::functional::binary_cross_entropy and kiln::nn::BCELoss are unsafe to "
         "autocast. Many models use a sigmoid layer right before the binary cross entropy layer. "
         "In this case, combine the two layers using "
         "kiln::nn::functional::binary_cross_entropy_with_logits or kiln::nn::BCEWithLogitsLoss. "
         "binary_cross_entropy_with_logits and BCEWithLogits are safe to autocast.";
}

}  // namespace kiln::amp::detail
