// MultiheadAttention, on functional::multi_head_attention_forward.
#include <kiln/autograd.h>
#include <kiln/nn/functional/attention.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/transformer.h>
#include <kiln/ops.h>

#include "repr.h"

namespace kiln::nn {

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_)
    : options(options_) {
  const int64_t e = options.embed_dim(), h = options.num_heads();
  KILN_CHECK_VALUE(e > 0 && h > 0, "MultiheadAttention: embed_dim and num_heads must be ",
                   "positive (got ", e, " and ", h, ")");
  KILN_CHECK_VALUE(e % h == 0, "MultiheadAttention: embed_dim ", e,
                   " must be divisible by num_heads ", h);
  KILN_CHECK_VALUE(options.kdim() > 0 && options.vdim() > 0, "MultiheadAttention: kdim and ",
                   "vdim must be positive (got ", options.kdim(), " and ", options.vdim(), ")");
  KILN_CHECK_VALUE(options.dropout() >= 0.0 && options.dropout() <= 1.0,
                   "MultiheadAttention: dropout must be in [0, 1], but got ", options.dropout());
  head_dim = e / h;
  _qkv_same_embed_dim = options.kdim() == e && options.vdim() == e;
  if (_qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({e, e}));
    k_proj_weight = register_parameter("k_proj_weight", empty({e, options.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({e, options.vdim()}));
  }
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * e}));
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(options.bias())));
  if (options.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  }
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights) {
  const bool transpose = options.batch_first() && query.dim() == 3;
  auto seq_first = [transpose](const Tensor& t) { return transpose ? t.transpose(0, 1) : t; };
  namespace F = functional;
  auto o = F::MultiheadAttentionForwardFuncOptions(options.embed_dim(), options.num_heads(),
                                                   in_proj_weight, in_proj_bias, bias_k, bias_v,
                                                   options.add_zero_attn(), options.dropout(),
                                                   out_proj->weight, out_proj->bias)
               .training(is_training())
               .key_padding_mask(key_padding_mask)
               .need_weights(need_weights)
               .attn_mask(attn_mask)
               .average_attn_weights(average_attn_weights);
  if (!_qkv_same_embed_dim) {
    o.use_separate_proj_weight(true)
        .q_proj_weight(q_proj_weight)
        .k_proj_weight(k_proj_weight)
        .v_proj_weight(v_proj_weight);
  }
  auto [out, weights] =
      F::multi_head_attention_forward(seq_first(query), seq_first(key), seq_first(value), o);
  return {seq_first(out), weights};
}

// libtorch prints the class and its out_proj child.
void MultiheadAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::MultiheadAttention";
}

}  // namespace kiln::nn
