// Options of MultiheadAttention and the Transformer modules, as libtorch's
// (torch/nn/options/activation.h, transformerlayer.h, transformercoder.h, transformer.h).
// Beyond libtorch 1.13 (which lacks them), kiln adds Python's batch_first, norm_first and
// layer_norm_eps; their defaults are PyTorch's.
#pragma once

#include <kiln/nn/options.h>
#include <kiln/nn/options/conv.h>  // kReLU, kGELU
#include <kiln/tensor.h>

#include <functional>
#include <variant>

namespace kiln::nn {

// The feed-forward activation of a Transformer layer: kReLU, kGELU or any function.
using TransformerActivation =
    std::variant<enumtype::kReLU, enumtype::kGELU, std::function<Tensor(const Tensor&)>>;

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  KILN_ARG(int64_t, embed_dim);
  KILN_ARG(int64_t, num_heads);
  KILN_ARG(double, dropout) = 0.0;
  KILN_ARG(bool, bias) = true;
  KILN_ARG(bool, add_bias_kv) = false;
  KILN_ARG(bool, add_zero_attn) = false;
  KILN_ARG(int64_t, kdim);
  KILN_ARG(int64_t, vdim);
  // kiln's addition (Python's): inputs and outputs [N, L, E] instead of [L, N, E].
  KILN_ARG(bool, batch_first) = false;
};

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  KILN_ARG(int64_t, d_model);
  KILN_ARG(int64_t, nhead);
  KILN_ARG(int64_t, dim_feedforward) = 2048;
  KILN_ARG(double, dropout) = 0.1;
  KILN_ARG(TransformerActivation, activation) = enumtype::kReLU();
  KILN_ARG(double, layer_norm_eps) = 1e-5;  // kiln's additions (Python's) from here
  KILN_ARG(bool, batch_first) = false;
  KILN_ARG(bool, norm_first) = false;
};

struct TransformerDecoderLayerOptions {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  KILN_ARG(int64_t, d_model);
  KILN_ARG(int64_t, nhead);
  KILN_ARG(int64_t, dim_feedforward) = 2048;
  KILN_ARG(double, dropout) = 0.1;
  KILN_ARG(TransformerActivation, activation) = enumtype::kReLU();
  KILN_ARG(double, layer_norm_eps) = 1e-5;  // kiln's additions (Python's) from here
  KILN_ARG(bool, batch_first) = false;
  KILN_ARG(bool, norm_first) = false;
};

struct TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
                     int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  KILN_ARG(int64_t, d_model) = 512;
  KILN_ARG(int64_t, nhead) = 8;
  KILN_ARG(int64_t, num_encoder_layers) = 6;
  KILN_ARG(int64_t, num_decoder_layers) = 6;
  KILN_ARG(int64_t, dim_feedforward) = 2048;
  KILN_ARG(double, dropout) = 0.1;
  KILN_ARG(TransformerActivation, activation) = enumtype::kReLU();
  KILN_ARG(double, layer_norm_eps) = 1e-5;  // kiln's additions (Python's) from here
  KILN_ARG(bool, batch_first) = false;
  KILN_ARG(bool, norm_first) = false;
};

}  // namespace kiln::nn
