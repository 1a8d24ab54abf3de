// Attention, as PyTorch 2.0's torch.nn.functional.scaled_dot_product_attention and libtorch's
// F::multi_head_attention_forward. See Note [Fused attention] (core/src/ops/attention.cpp) for
// when the fused kernel runs instead of the composite.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options.h>
#include <kiln/tensor.h>

#include <optional>
#include <tuple>

namespace kiln::nn::functional {

// softmax(q @ k^T * scale + mask) @ v with q [..., L, E], k [..., S, E], v [..., S, Ev] (batch
// dimensions broadcast) -> [..., L, Ev]; scale is 1 / sqrt(E) unless given. attn_mask broadcasts
// to [..., L, S]: boolean (true: the key takes part) or additive (q's dtype). is_causal lets
// query i see keys j <= i (with a mask, an error). dropout_p drops attention weights (training
// semantics always, as PyTorch's). A query that sees no key gives NaN, as PyTorch's.
KILN_API Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                             const Tensor& value, const Tensor& attn_mask = {},
                                             double dropout_p = 0.0, bool is_causal = false,
                                             std::optional<double> scale = std::nullopt);

// The composite's (output, attention weights [..., L, S]) of the same arguments: what
// MultiheadAttention returns when it needs the weights. Never runs the fused kernel.
KILN_API std::tuple<Tensor, Tensor> scaled_dot_product_attention_with_weights(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask = {},
    double dropout_p = 0.0, bool is_causal = false, std::optional<double> scale = std::nullopt);

// libtorch's options of multi_head_attention_forward (torch/nn/options/activation.h).
struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads,
                                       Tensor in_proj_weight, Tensor in_proj_bias, Tensor bias_k,
                                       Tensor bias_v, bool add_zero_attn, double dropout_p,
                                       Tensor out_proj_weight, Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}
  KILN_ARG(int64_t, embed_dim_to_check);
  KILN_ARG(int64_t, num_heads);
  KILN_ARG(Tensor, in_proj_weight);
  KILN_ARG(Tensor, in_proj_bias);
  KILN_ARG(Tensor, bias_k);
  KILN_ARG(Tensor, bias_v);
  KILN_ARG(bool, add_zero_attn);
  KILN_ARG(double, dropout_p);
  KILN_ARG(Tensor, out_proj_weight);
  KILN_ARG(Tensor, out_proj_bias);
  KILN_ARG(bool, training) = false;
  KILN_ARG(Tensor, key_padding_mask) = {};
  KILN_ARG(bool, need_weights) = true;
  KILN_ARG(Tensor, attn_mask) = {};
  KILN_ARG(bool, use_separate_proj_weight) = false;
  KILN_ARG(Tensor, q_proj_weight) = {};
  KILN_ARG(Tensor, k_proj_weight) = {};
  KILN_ARG(Tensor, v_proj_weight) = {};
  KILN_ARG(Tensor, static_k) = {};
  KILN_ARG(Tensor, static_v) = {};
  KILN_ARG(bool, average_attn_weights) = true;
};

// PyTorch 1.13's multi-head attention of query [L, N, E] (or unbatched [L, E]) over key
// [S, N, kdim] and value [S, N, vdim]: (output [L, N, E], weights [N, L, S] averaged over heads,
// [N, H, L, S] otherwise, or undefined without need_weights). Masks as nn::MultiheadAttention.
KILN_API std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options);

}  // namespace kiln::nn::functional
