// MultiheadAttention and the Transformer modules, as libtorch's (torch/nn/modules/activation.h,
// transformerlayer.h, transformercoder.h, transformer.h), with PyTorch 1.13's parameter names
// and arithmetic. Sequences are [L, N, E] ([N, L, E] with batch_first); masks are PyTorch's:
// a boolean attn_mask or key_padding_mask is true where attention is NOT allowed, a float one
// is added to the logits.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/modules/any.h>
#include <kiln/nn/modules/container.h>
#include <kiln/nn/modules/dropout.h>
#include <kiln/nn/modules/linear.h>
#include <kiln/nn/modules/normalization.h>
#include <kiln/nn/options/transformer.h>

#include <tuple>

namespace kiln::nn {

// Multi-head attention: softmax(q k^T / sqrt(E / num_heads) + mask) v per head, between
// in-projections (in_proj_weight [3E, E] and in_proj_bias [3E], or q_proj_weight,
// k_proj_weight, v_proj_weight when kdim or vdim differ from embed_dim) and out_proj.
class KILN_API MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);

  // (attention output [L, N, E], weights [N, L, S] averaged over heads or [N, H, L, S], or
  // undefined without need_weights) of query [L, N, E], key [S, N, kdim], value [S, N, vdim];
  // key_padding_mask [N, S], attn_mask [L, S] or [N * num_heads, L, S].
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {},
                                     bool average_attn_weights = true);
  // xavier_uniform_ in-projections, zero biases, xavier_normal_ bias_k and bias_v, as PyTorch.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  MultiheadAttentionOptions options;
  bool _qkv_same_embed_dim;
  Tensor in_proj_weight, in_proj_bias, bias_k, bias_v;
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;  // defined unless _qkv_same_embed_dim
  Linear out_proj = nullptr;
  int64_t head_dim;
};
KILN_MODULE(MultiheadAttention);

// Self-attention and a feed-forward block (linear1, activation, linear2), each with dropout,
// a residual connection and a LayerNorm (after it, or before it with norm_first).
class KILN_API TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  // src [S, N, E] -> [S, N, E]; src_mask [S, S], src_key_padding_mask [N, S].
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn = nullptr;
  Linear linear1 = nullptr, linear2 = nullptr;
  Dropout dropout = nullptr, dropout1 = nullptr, dropout2 = nullptr;
  LayerNorm norm1 = nullptr, norm2 = nullptr;
};
KILN_MODULE(TransformerEncoderLayer);

// Self-attention, attention over the encoder's memory, and a feed-forward block, each with
// dropout, a residual connection and a LayerNorm.
class KILN_API TransformerDecoderLayerImpl : public Module {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);
  // tgt [T, N, E] and memory [S, N, E] -> [T, N, E].
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn = nullptr, multihead_attn = nullptr;
  Linear linear1 = nullptr, linear2 = nullptr;
  Dropout dropout = nullptr, dropout1 = nullptr, dropout2 = nullptr, dropout3 = nullptr;
  LayerNorm norm1 = nullptr, norm2 = nullptr, norm3 = nullptr;
};
KILN_MODULE(TransformerDecoderLayer);

struct TransformerEncoderOptions {
  // num_layers copies of encoder_layer (its parameters copied, as PyTorch's deep copies).
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& layer, int64_t num_layers)
      : encoder_layer_(layer), num_layers_(num_layers) {}
  KILN_ARG(TransformerEncoderLayer, encoder_layer);
  KILN_ARG(int64_t, num_layers);
  KILN_ARG(AnyModule, norm);  // applied to the last layer's output when not empty
};

struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& layer, int64_t num_layers)
      : decoder_layer_(layer), num_layers_(num_layers) {}
  KILN_ARG(TransformerDecoderLayer, decoder_layer);
  KILN_ARG(int64_t, num_layers);
  KILN_ARG(AnyModule, norm);
};

// A stack of encoder layers ("layers.0", ...) and an optional final "norm".
class KILN_API TransformerEncoderImpl : public Module {
 public:
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : TransformerEncoderImpl(TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  TransformerEncoderOptions options;
  ModuleList layers = nullptr;
  AnyModule norm;
};
KILN_MODULE(TransformerEncoder);

// A stack of decoder layers ("layers.0", ...) and an optional final "norm".
class KILN_API TransformerDecoderImpl : public Module {
 public:
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : TransformerDecoderImpl(TransformerDecoderOptions(std::move(decoder_layer), num_layers)) {}
  explicit TransformerDecoderImpl(TransformerDecoderOptions options);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  TransformerDecoderOptions options;
  ModuleList layers = nullptr;
  AnyModule norm;
};
KILN_MODULE(TransformerDecoder);

// An encoder and a decoder, each ending with a LayerNorm, every matrix xavier_uniform_.
class KILN_API TransformerImpl : public Module {
 public:
  explicit TransformerImpl(TransformerOptions options = {});
  // src [S, N, E], tgt [T, N, E] -> [T, N, E].
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {},
                 const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& src_key_padding_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  // [sz, sz] float32: 0 on and below the diagonal, -inf above it (position i sees j <= i).
  static Tensor generate_square_subsequent_mask(int64_t sz);

  TransformerOptions options;
  TransformerEncoder encoder = nullptr;
  TransformerDecoder decoder = nullptr;
};
KILN_MODULE(Transformer);

}  // namespace kiln::nn
