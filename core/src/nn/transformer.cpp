// TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and
// Transformer, as PyTorch 1.13's torch.nn modules (training-mode arithmetic; kiln has no
// separate inference fast path, whose results equal it).
#include <kiln/autograd.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/modules/transformer.h>
#include <kiln/ops.h>

#include "repr.h"

#include <limits>

namespace kiln::nn {
namespace {

Tensor activate(const TransformerActivation& activation, const Tensor& x) {
  if (std::holds_alternative<enumtype::kReLU>(activation)) return relu(x);
  if (std::holds_alternative<enumtype::kGELU>(activation)) return gelu(x);
  return std::get<std::function<Tensor(const Tensor&)>>(activation)(x);
}

// Copies every parameter and buffer of `from` into `to` (modules of the same structure).
void copy_state(const Module& from, Module& to) {
  NoGradGuard no_grad;
  auto src = from.named_parameters();
  for (auto& item : to.named_parameters()) item.value().copy_(src[item.key()]);
  auto src_buffers = from.named_buffers();
  for (auto& item : to.named_buffers()) item.value().copy_(src_buffers[item.key()]);
}

void check_layer(const char* kind, int64_t d_model, int64_t nhead, int64_t dim_feedforward) {
  KILN_CHECK_VALUE(d_model > 0 && nhead > 0 && dim_feedforward > 0, kind,
                   ": d_model, nhead and dim_feedforward must be positive (got ", d_model, ", ",
                   nhead, " and ", dim_feedforward, ")");
}

}  // namespace

// --- TransformerEncoderLayer ---------------------------------------------------------------

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(
    const TransformerEncoderLayerOptions& options_)
    : options(options_) {
  const auto& o = options;
  check_layer("TransformerEncoderLayer", o.d_model(), o.nhead(), o.dim_feedforward());
  self_attn = register_module("self_attn",
                              MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead())
                                                     .dropout(o.dropout())
                                                     .batch_first(o.batch_first())));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  LayerNormOptions norm({o.d_model()});
  norm.eps(o.layer_norm_eps());
  norm1 = register_module("norm1", LayerNorm(norm));
  norm2 = register_module("norm2", LayerNorm(norm));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return dropout1(std::get<0>(self_attn(x, x, x, src_key_padding_mask, /*need_weights=*/false,
                                          src_mask)));
  };
  auto ff = [&](const Tensor& x) {
    return dropout2(linear2(dropout(activate(options.activation(), linear1(x)))));
  };
  Tensor x = src;
  if (options.norm_first()) {
    x = x + sa(norm1(x));
    return x + ff(norm2(x));
  }
  x = norm1(x + sa(x));
  return norm2(x + ff(x));
}

void TransformerEncoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::TransformerEncoderLayerImpl";  // libtorch prints the Impl name here
}

// --- TransformerDecoderLayer ---------------------------------------------------------------

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(
    const TransformerDecoderLayerOptions& options_)
    : options(options_) {
  const auto& o = options;
  check_layer("TransformerDecoderLayer", o.d_model(), o.nhead(), o.dim_feedforward());
  auto attention = MultiheadAttentionOptions(o.d_model(), o.nhead())
                       .dropout(o.dropout())
                       .batch_first(o.batch_first());
  self_attn = register_module("self_attn", MultiheadAttention(attention));
  multihead_attn = register_module("multihead_attn", MultiheadAttention(attention));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  LayerNormOptions norm({o.d_model()});
  norm.eps(o.layer_norm_eps());
  norm1 = register_module("norm1", LayerNorm(norm));
  norm2 = register_module("norm2", LayerNorm(norm));
  norm3 = register_module("norm3", LayerNorm(norm));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

void TransformerDecoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  multihead_attn->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
  norm3->reset_parameters();
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                            const Tensor& tgt_mask, const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return dropout1(std::get<0>(self_attn(x, x, x, tgt_key_padding_mask, /*need_weights=*/false,
                                          tgt_mask)));
  };
  auto mha = [&](const Tensor& x) {
    return dropout2(std::get<0>(multihead_attn(x, memory, memory, memory_key_padding_mask,
                                               /*need_weights=*/false, memory_mask)));
  };
  auto ff = [&](const Tensor& x) {
    return dropout3(linear2(dropout(activate(options.activation(), linear1(x)))));
  };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = x + sa(norm1(x));
    x = x + mha(norm2(x));
    return x + ff(norm3(x));
  }
  x = norm1(x + sa(x));
  x = norm2(x + mha(x));
  return norm3(x + ff(x));
}

void TransformerDecoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::TransformerDecoderLayerImpl";  // libtorch prints the Impl name here
}

// --- TransformerEncoder, TransformerDecoder ------------------------------------------------

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions options_)
    : options(std::move(options_)) {
  KILN_CHECK_VALUE(options.num_layers() >= 0, "TransformerEncoder: num_layers must be ",
                   "non-negative (got ", options.num_layers(), ")");
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i) {
    TransformerEncoderLayer layer(options.encoder_layer()->options);
    copy_state(*options.encoder_layer(), *layer);
    layers->push_back(layer);
  }
  norm = options.norm();
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}

void TransformerEncoderImpl::reset_parameters() {
  for (size_t i = 0; i < layers->size(); ++i) {
    layers->ptr<TransformerEncoderLayerImpl>(i)->reset_parameters();
  }
  // a norm of another type (any module) keeps its parameters
  if (auto ln = norm.is_empty() ? nullptr : std::dynamic_pointer_cast<LayerNormImpl>(norm.ptr())) {
    ln->reset_parameters();
  }
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask,
                                       const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i) {
    x = layers->ptr<TransformerEncoderLayerImpl>(i)->forward(x, src_mask, src_key_padding_mask);
  }
  return norm.is_empty() ? x : norm.forward<Tensor>(x);
}

void TransformerEncoderImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::TransformerEncoderImpl";  // libtorch prints the Impl name here
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions options_)
    : options(std::move(options_)) {
  KILN_CHECK_VALUE(options.num_layers() >= 0, "TransformerDecoder: num_layers must be ",
                   "non-negative (got ", options.num_layers(), ")");
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i) {
    TransformerDecoderLayer layer(options.decoder_layer()->options);
    copy_state(*options.decoder_layer(), *layer);
    layers->push_back(layer);
  }
  norm = options.norm();
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}

void TransformerDecoderImpl::reset_parameters() {
  for (size_t i = 0; i < layers->size(); ++i) {
    layers->ptr<TransformerDecoderLayerImpl>(i)->reset_parameters();
  }
  // a norm of another type (any module) keeps its parameters
  if (auto ln = norm.is_empty() ? nullptr : std::dynamic_pointer_cast<LayerNormImpl>(norm.ptr())) {
    ln->reset_parameters();
  }
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                       const Tensor& tgt_mask, const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (size_t i = 0; i < layers->size(); ++i) {
    x = layers->ptr<TransformerDecoderLayerImpl>(i)->forward(x, memory, tgt_mask, memory_mask,
                                                             tgt_key_padding_mask,
                                                             memory_key_padding_mask);
  }
  return norm.is_empty() ? x : norm.forward<Tensor>(x);
}

void TransformerDecoderImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::TransformerDecoderImpl";  // libtorch prints the Impl name here
}

// --- Transformer ---------------------------------------------------------------------------

TransformerImpl::TransformerImpl(TransformerOptions options_) : options(std::move(options_)) {
  const auto& o = options;
  LayerNormOptions norm({o.d_model()});
  norm.eps(o.layer_norm_eps());
  auto encoder_layer =
      TransformerEncoderLayer(TransformerEncoderLayerOptions(o.d_model(), o.nhead())
                                  .dim_feedforward(o.dim_feedforward())
                                  .dropout(o.dropout())
                                  .activation(o.activation())
                                  .layer_norm_eps(o.layer_norm_eps())
                                  .batch_first(o.batch_first())
                                  .norm_first(o.norm_first()));
  auto decoder_layer =
      TransformerDecoderLayer(TransformerDecoderLayerOptions(o.d_model(), o.nhead())
                                  .dim_feedforward(o.dim_feedforward())
                                  .dropout(o.dropout())
                                  .activation(o.activation())
                                  .layer_norm_eps(o.layer_norm_eps())
                                  .batch_first(o.batch_first())
                                  .norm_first(o.norm_first()));
  encoder = register_module(
      "encoder", TransformerEncoder(TransformerEncoderOptions(encoder_layer, o.num_encoder_layers())
                                        .norm(AnyModule(LayerNorm(norm)))));
  decoder = register_module(
      "decoder", TransformerDecoder(TransformerDecoderOptions(decoder_layer, o.num_decoder_layers())
                                        .norm(AnyModule(LayerNorm(norm)))));
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (Tensor& p : parameters()) {
    if (p.dim() > 1) init::xavier_uniform_(p);
  }
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask) {
  // libtorch's messages, with the shapes (kiln also takes both unbatched, as PyTorch's Python)
  KILN_CHECK_VALUE(src.dim() == tgt.dim() && (src.dim() == 3 || src.dim() == 2),
                   "Transformer: src and tgt should have 3 dimensions (or both 2, unbatched), but ",
                   "got src ", src.sizes(), " and tgt ", tgt.sizes());
  const bool batched = src.dim() == 3;
  const int64_t batch_dim = options.batch_first() ? 0 : 1;
  KILN_CHECK_VALUE(!batched || src.size(batch_dim) == tgt.size(batch_dim),
                   "Transformer: src and tgt should have equal batch size (at dim ", batch_dim,
                   "), but got src ", src.sizes(), " and tgt ", tgt.sizes());
  KILN_CHECK_VALUE(src.size(-1) == options.d_model() && tgt.size(-1) == options.d_model(),
                   "Transformer: src and tgt should have same feature size as d_model (at dim ",
                   src.dim() - 1, "), but got src ", src.sizes(), " and tgt ", tgt.sizes(),
                   " while d_model is ", options.d_model());
  Tensor memory = encoder(src, src_mask, src_key_padding_mask);
  return decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
}

void TransformerImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Transformer";
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
  KILN_CHECK_VALUE(sz >= 0, "Transformer::generate_square_subsequent_mask: the size must be ",
                   "non-negative (got ", sz, ")");
  Tensor above = triu(ones({sz, sz}, TensorOptions().dtype(kBool)), 1);
  return where(above, full({}, -std::numeric_limits<double>::infinity()), zeros({}));
}

}  // namespace kiln::nn
