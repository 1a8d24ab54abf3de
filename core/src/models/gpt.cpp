#include <kiln/models/gpt.h>

#include <kiln/autograd.h>
#include <kiln/error.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/attention.h>
#include <kiln/nn/init.h>
#include <kiln/ops.h>
#include <kiln/sampling.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace kiln::models {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

nn::Linear linear(int64_t in, int64_t out, bool bias) {
  return nn::Linear(nn::LinearOptions(in, out).bias(bias));
}

// softmax(q k^T / sqrt(head_size) masked above the diagonal) v, with dropout on the weights
// while training: q, k, v [B, n_head, T, head_size]. Without dropout, the CPU's fused kernel.
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, double dropout_p,
                        bool training) {
  return nn::functional::scaled_dot_product_attention(q, k, v, {}, training ? dropout_p : 0.0,
                                                      /*is_causal=*/true);
}

// lm_head: a bias-free Linear whose weight is another module's parameter (weight tying). The
// module lists the same tensor under "weight", so the parameter walks count it once, under the
// name met first (transformer.wte.weight), as PyTorch's named_parameters.
class TiedLinearImpl : public nn::LinearImpl {
 public:
  explicit TiedLinearImpl(const Tensor& tied)
      : nn::LinearImpl(nn::LinearOptions(tied.size(1), tied.size(0)).bias(false)) {
    parameters_["weight"] = tied;
    weight = tied;
  }
};

// The smallest value of each row of x [B, V] that is among its k largest (ties counted, as
// torch.topk(x, k).values[:, -1]).
Tensor kth_largest(const Tensor& x, int64_t k) {
  return std::get<0>(topk(x, k, -1)).narrow(-1, k - 1, 1);
}

}  // namespace

LayerNormImpl::LayerNormImpl(int64_t ndim, bool bias) {
  KILN_CHECK_VALUE(ndim > 0, "LayerNorm: ndim must be positive (got ", ndim, ")");
  weight = register_parameter("weight", ones({ndim}));
  if (bias) this->bias = register_parameter("bias", zeros({ndim}));
}

Tensor LayerNormImpl::forward(const Tensor& x) {
  return nn::functional::layer_norm(x, {weight.size(0)}, weight, bias, 1e-5);
}

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::models::LayerNorm(" << weight.size(0)
         << ", bias=" << (bias.defined() ? "true" : "false") << ")";
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GPTConfig& config) : config(config) {
  KILN_CHECK_VALUE(config.n_head() > 0 && config.n_embd() % config.n_head() == 0,
                   "CausalSelfAttention: n_embd (", config.n_embd(),
                   ") must be a multiple of n_head (", config.n_head(), ")");
  int64_t c = config.n_embd();
  c_attn = register_module("c_attn", linear(c, 3 * c, config.bias()));
  c_proj = register_module("c_proj", linear(c, c, config.bias()));
  attn_dropout = register_module("attn_dropout", nn::Dropout(config.dropout()));
  resid_dropout = register_module("resid_dropout", nn::Dropout(config.dropout()));
}

Tensor CausalSelfAttentionImpl::forward(const Tensor& x) {
  KILN_CHECK_VALUE(x.dim() == 3 && x.size(2) == config.n_embd(), "CausalSelfAttention: expected ",
                   "input [B, T, ", config.n_embd(), "], got ", x.sizes());
  KILN_CHECK_VALUE(x.size(1) <= config.block_size(), "CausalSelfAttention: sequence length ",
                   x.size(1), " exceeds block_size ", config.block_size());
  int64_t b = x.size(0), t = x.size(1), c = x.size(2), nh = config.n_head();
  std::vector<Tensor> qkv = c_attn(x).split(c, 2);
  auto heads = [&](const Tensor& y) { return y.view({b, t, nh, c / nh}).transpose(1, 2); };
  Tensor y = causal_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), config.dropout(),
                              is_training());
  y = y.transpose(1, 2).contiguous().view({b, t, c});
  return resid_dropout(c_proj(y));
}

MLPImpl::MLPImpl(const GPTConfig& config) {
  c_fc = register_module("c_fc", linear(config.n_embd(), 4 * config.n_embd(), config.bias()));
  gelu = register_module("gelu", nn::GELU());
  c_proj = register_module("c_proj", linear(4 * config.n_embd(), config.n_embd(), config.bias()));
  dropout = register_module("dropout", nn::Dropout(config.dropout()));
}

Tensor MLPImpl::forward(const Tensor& x) { return dropout(c_proj(gelu(c_fc(x)))); }

BlockImpl::BlockImpl(const GPTConfig& config) {
  ln_1 = register_module("ln_1", LayerNorm(config.n_embd(), config.bias()));
  attn = register_module("attn", CausalSelfAttention(config));
  ln_2 = register_module("ln_2", LayerNorm(config.n_embd(), config.bias()));
  mlp = register_module("mlp", MLP(config));
}

Tensor BlockImpl::forward(const Tensor& x) {
  Tensor y = x + attn(ln_1(x));
  return y + mlp(ln_2(y));
}

GPTImpl::GPTImpl(const GPTConfig& config) : config(config) {
  for (auto [name, value] : {std::pair{"block_size", config.block_size()},
                             {"vocab_size", config.vocab_size()},
                             {"n_layer", config.n_layer()},
                             {"n_head", config.n_head()},
                             {"n_embd", config.n_embd()}}) {
    KILN_CHECK_VALUE(value > 0, "GPT: ", name, " must be positive (got ", value, ")");
  }
  KILN_CHECK_VALUE(config.dropout() >= 0 && config.dropout() <= 1, "GPT: dropout must be in ",
                   "[0, 1] (got ", config.dropout(), ")");
  int64_t product = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(config.vocab_size(), 4 * config.n_embd(), &product) &&
                       !__builtin_mul_overflow(config.block_size(), config.block_size(), &product),
                   "GPT: sizes overflow int64 (vocab_size ", config.vocab_size(), ", n_embd ",
                   config.n_embd(), ", block_size ", config.block_size(), ")");
  int64_t c = config.n_embd();
  transformer = register_module("transformer", nn::ModuleDict());
  wte = nn::Embedding(config.vocab_size(), c);
  wpe = nn::Embedding(config.block_size(), c);
  drop = nn::Dropout(config.dropout());
  h = nn::ModuleList();
  for (int64_t i = 0; i < config.n_layer(); ++i) h->push_back(Block(config));
  ln_f = LayerNorm(c, config.bias());
  transformer->insert("wte", wte);
  transformer->insert("wpe", wpe);
  transformer->insert("drop", drop);
  transformer->insert("h", h);
  transformer->insert("ln_f", ln_f);
  std::shared_ptr<nn::LinearImpl> tied = std::make_shared<TiedLinearImpl>(wte->weight);
  lm_head = register_module("lm_head", nn::Linear(tied));

  // nanoGPT's _init_weights, then the scaled residual projections (GPT-2's)
  NoGradGuard no_grad;
  for (const auto& module : modules(/*include_self=*/false)) {
    if (auto* fc = module->as<nn::Linear>()) {
      nn::init::normal_(fc->weight, 0.0, 0.02);
      if (fc->bias.defined()) nn::init::zeros_(fc->bias);
    } else if (auto* embedding = module->as<nn::Embedding>()) {
      nn::init::normal_(embedding->weight, 0.0, 0.02);
    }
  }
  double std_proj = 0.02 / std::sqrt(2.0 * static_cast<double>(config.n_layer()));
  for (const auto& item : named_parameters()) {
    const std::string& name = item.key();
    if (name.size() >= 13 && name.compare(name.size() - 13, 13, "c_proj.weight") == 0) {
      nn::init::normal_(item.value(), 0.0, std_proj);
    }
  }
}

Tensor GPTImpl::hidden(const Tensor& idx) {
  KILN_CHECK_VALUE(idx.dim() == 2, "GPT: expected token indices [B, T], got shape ", idx.sizes());
  KILN_CHECK_TYPE(idx.dtype() == kLong, "GPT: expected int64 token indices, got ",
                  dtype_name(idx.dtype()));
  int64_t t = idx.size(1);
  KILN_CHECK_VALUE(t <= config.block_size(), "GPT: Cannot forward sequence of length ", t,
                   ", block size is only ", config.block_size());
  Tensor pos = arange(t, TensorOptions().dtype(kLong).device(idx.device()));
  Tensor x = drop(wte(idx) + wpe(pos));
  for (const auto& block : *h) x = block->as<Block>()->forward(x);
  return ln_f(x);
}

std::tuple<Tensor, Tensor> GPTImpl::forward(const Tensor& idx, const Tensor& targets) {
  Tensor x = hidden(idx);
  if (!targets.defined()) {
    // the last position only: generation needs no more
    return {lm_head(x.narrow(1, x.size(1) - 1, 1)), Tensor()};
  }
  KILN_CHECK_VALUE(targets.sizes() == idx.sizes(), "GPT: targets of shape ", targets.sizes(),
                   " do not match idx of shape ", idx.sizes());
  Tensor logits = lm_head(x);
  Tensor loss =
      nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}), targets.reshape({-1}),
                                    nn::functional::CrossEntropyFuncOptions().ignore_index(-1));
  return {logits, loss};
}

Tensor GPTImpl::generate(const Tensor& idx, int64_t max_new_tokens, double temperature,
                         std::optional<int64_t> top_k) {
  KILN_CHECK_VALUE(max_new_tokens >= 0, "GPT::generate: max_new_tokens must be non-negative ",
                   "(got ", max_new_tokens, ")");
  KILN_CHECK_VALUE(temperature > 0 && std::isfinite(temperature), "GPT::generate: temperature ",
                   "must be positive and finite (got ", temperature, ")");
  KILN_CHECK_VALUE(!top_k || *top_k > 0, "GPT::generate: top_k must be positive (got ",
                   top_k.value_or(0), ")");
  KILN_CHECK_VALUE(idx.dim() == 2 && idx.size(1) > 0, "GPT::generate: expected a prompt of ",
                   "token indices [B, T] with T >= 1, got shape ", idx.sizes());
  NoGradGuard no_grad;
  Tensor out = idx;
  for (int64_t i = 0; i < max_new_tokens; ++i) {
    int64_t t = out.size(1);
    Tensor cond = t <= config.block_size()
                      ? out
                      : out.narrow(1, t - config.block_size(), config.block_size());
    Tensor logits = std::get<0>(forward(cond)).select(1, 0).to(kFloat) / temperature;
    if (top_k) {
      Tensor v = kth_largest(logits, std::min(*top_k, logits.size(-1)));
      logits = logits.masked_fill(lt(logits, v), -kInf);
    }
    Tensor probs = nn::functional::softmax(logits, -1);
    out = cat({out, multinomial(probs, 1)}, 1);
  }
  return out;
}

std::shared_ptr<optim::AdamW> GPTImpl::configure_optimizers(double weight_decay,
                                                            double learning_rate,
                                                            std::tuple<double, double> betas) {
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  auto options = [&](double wd) {
    return std::make_unique<optim::AdamWOptions>(
        optim::AdamWOptions(learning_rate).betas(betas).weight_decay(wd));
  };
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(weight_decay));
  groups.emplace_back(no_decay, options(0.0));
  return std::make_shared<optim::AdamW>(std::move(groups),
                                        optim::AdamWOptions(learning_rate).betas(betas));
}

int64_t GPTImpl::get_num_params(bool non_embedding) const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  if (non_embedding) n -= wpe->weight.numel();
  return n;
}

}  // namespace kiln::models
