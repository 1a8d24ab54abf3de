// A GPT (Radford et al. 2019, "Language Models are Unsupervised Multitask Learners") in
// nanoGPT's shape (Karpathy's minimal GPT-2): the same modules under the same names, its
// initialisation, forward, generate and configure_optimizers, so that a nanoGPT state_dict saved
// as safetensors (without the tied lm_head.weight and the .attn.bias masks, as nanoGPT's own
// from_pretrained drops them) loads by name with kiln::load(*model, path).
//
//   auto model = kiln::models::GPT(kiln::models::GPTConfig().vocab_size(65).block_size(256));
//   auto [logits, loss] = model(idx, targets);   // [B, T] int64 -> [B, T, vocab], scalar
//   auto opt = model->configure_optimizers(0.1, 1e-3, {0.9, 0.99});
//   kiln::Tensor text = model->generate(prompt, 100, 0.8, 10);
//
// Names: transformer (a ModuleDict of wte, wpe, drop, h, ln_f), transformer.h.{i} a Block of
// ln_1, attn (c_attn, c_proj, attn_dropout, resid_dropout), ln_2, mlp (c_fc, gelu, c_proj,
// dropout); lm_head, a Linear without bias whose weight is transformer.wte.weight (weight
// tying: one parameter, listed once as transformer.wte.weight).
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/modules/activation.h>
#include <kiln/nn/modules/collections.h>
#include <kiln/nn/modules/container.h>
#include <kiln/nn/modules/dropout.h>
#include <kiln/nn/modules/embedding.h>
#include <kiln/nn/modules/linear.h>
#include <kiln/nn/options.h>
#include <kiln/optim/adam.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>

namespace kiln::models {

// nanoGPT's GPTConfig; the defaults are GPT-2 small's (124M parameters, vocabulary padded to a
// multiple of 64).
struct GPTConfig {
  // The longest context: positions 0 .. block_size - 1 have embeddings.
  KILN_ARG(int64_t, block_size) = 1024;
  KILN_ARG(int64_t, vocab_size) = 50304;
  KILN_ARG(int64_t, n_layer) = 12;
  KILN_ARG(int64_t, n_head) = 12;
  // Embedding width; a multiple of n_head.
  KILN_ARG(int64_t, n_embd) = 768;
  // Dropout probability after the embeddings, on the attention weights and after each residual
  // branch.
  KILN_ARG(double, dropout) = 0.0;
  // Biases in the Linear layers and LayerNorms (GPT-2's); false is a little faster and better.
  KILN_ARG(bool, bias) = true;
};

// LayerNorm over the last dimension with an optional bias (PyTorch 1.13's has none without the
// weight): nanoGPT's LayerNorm. weight starts at 1, bias at 0.
class KILN_API LayerNormImpl : public nn::Module {
 public:
  LayerNormImpl(int64_t ndim, bool bias);
  // layer_norm(x, [ndim], weight, bias, 1e-5).
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& stream) const override;

  Tensor weight;
  Tensor bias;  // undefined without bias
};
KILN_MODULE(LayerNorm);

// Masked multi-head self-attention: each position attends to itself and the positions before it.
class KILN_API CausalSelfAttentionImpl : public nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const GPTConfig& config);
  // [B, T, n_embd] -> [B, T, n_embd], T <= block_size.
  Tensor forward(const Tensor& x);

  GPTConfig config;
  nn::Linear c_attn{nullptr}, c_proj{nullptr};  // q, k, v in one; the output projection
  nn::Dropout attn_dropout{nullptr}, resid_dropout{nullptr};
};
KILN_MODULE(CausalSelfAttention);

// c_fc (n_embd -> 4 n_embd), exact GELU, c_proj (back to n_embd), dropout.
class KILN_API MLPImpl : public nn::Module {
 public:
  explicit MLPImpl(const GPTConfig& config);
  Tensor forward(const Tensor& x);

  nn::Linear c_fc{nullptr}, c_proj{nullptr};
  nn::GELU gelu{nullptr};
  nn::Dropout dropout{nullptr};
};
KILN_MODULE(MLP);

// A pre-norm transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x)).
class KILN_API BlockImpl : public nn::Module {
 public:
  explicit BlockImpl(const GPTConfig& config);
  Tensor forward(const Tensor& x);

  LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  MLP mlp{nullptr};
};
KILN_MODULE(Block);

class KILN_API GPTImpl : public nn::Module {
 public:
  // Builds the model with nanoGPT's initialisation: Linear and Embedding weights from
  // N(0, 0.02), biases 0, every c_proj.weight from N(0, 0.02 / sqrt(2 n_layer)). Throws
  // ValueError for a non-positive size, n_embd not a multiple of n_head, or dropout outside
  // [0, 1].
  explicit GPTImpl(const GPTConfig& config = {});

  // idx [B, T] int64 token indices (T <= block_size) -> (logits, loss). With targets [B, T]
  // (int64, -1 ignored): logits [B, T, vocab_size] and the mean cross entropy; without:
  // logits of the last position only, [B, 1, vocab_size], and an undefined loss.
  std::tuple<Tensor, Tensor> forward(const Tensor& idx, const Tensor& targets = {});

  // Appends max_new_tokens tokens to idx [B, T] (int64), each drawn from the softmax of the
  // last position's logits / temperature (over the last block_size tokens), keeping only the
  // top_k largest logits when given. Runs without gradients; call eval() first to turn dropout
  // off, as nanoGPT. Returns [B, T + max_new_tokens]. The draws use kiln's generator
  // (kiln::manual_seed), so they differ from PyTorch's for the same seed.
  Tensor generate(const Tensor& idx, int64_t max_new_tokens, double temperature = 1.0,
                  std::optional<int64_t> top_k = std::nullopt);

  // AdamW over two groups: every parameter of 2 or more dimensions (the matmul and embedding
  // weights) with weight_decay, the biases and LayerNorm weights without.
  std::shared_ptr<optim::AdamW> configure_optimizers(double weight_decay, double learning_rate,
                                                     std::tuple<double, double> betas);

  // The number of parameters (each tied tensor once); without the position embeddings unless
  // non_embedding is false, as nanoGPT's get_num_params.
  int64_t get_num_params(bool non_embedding = true) const;

  GPTConfig config;
  nn::ModuleDict transformer{nullptr};
  nn::Embedding wte{nullptr}, wpe{nullptr};  // also transformer.wte, transformer.wpe
  nn::Dropout drop{nullptr};
  nn::ModuleList h{nullptr};
  LayerNorm ln_f{nullptr};
  nn::Linear lm_head{nullptr};  // weight is wte->weight

 private:
  Tensor hidden(const Tensor& idx);  // the blocks and ln_f: [B, T] -> [B, T, n_embd]
};
KILN_MODULE(GPT);

}  // namespace kiln::models
