// kiln::models::GPT against nanoGPT in PyTorch: the weights that tests/golden/make_gpt_weights.py
// writes (into the build directory, through the ctest fixture gpt_weights) load by name, and
// the logits, the loss, every parameter's gradient and the losses and parameters of 20 AdamW
// steps from configure_optimizers equal PyTorch's. Without the goldens: weight tying,
// initialisation, parameter groups, generate, multinomial and the errors.
//
// Tolerance (compare()): |kiln - pytorch| <= 8 e + 4 eps32 max|pytorch| at every element, where
// e = max |pytorch32 - pytorch64| is PyTorch's own float32 rounding error on that very result,
// measured by the script against the same computation in float64 (tests/models/test_models.cpp
// explains the factors).
#define BOOST_TEST_MODULE gpt
#include <boost/test/unit_test.hpp>

#include "check_error.h"

#include <kiln/kiln.h>
#include <kiln/models.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace {

using namespace kiln;

const std::string kDir = KILN_GPT_WEIGHTS_DIR;

// Skips the suite, with the script's reason, when it found no torch.
boost::test_tools::assertion_result weights_available(boost::unit_test::test_unit_id) {
  std::ifstream skipped(kDir + "/SKIPPED");
  if (!skipped) return true;
  std::stringstream reason;
  reason << skipped.rdbuf();
  boost::test_tools::assertion_result result(false);
  result.message() << reason.str();
  return result;
}

models::GPTConfig small_config(bool bias = true) {
  return models::GPTConfig().block_size(32).vocab_size(65).n_layer(2).n_head(2).n_embd(64).bias(
      bias);
}

// A case of the script: its golden tensors and a model holding PyTorch's weights.
struct Case {
  std::map<std::string, Tensor> golden;
  models::GPT model{nullptr};
  std::string weights;
  double worst = 0;
  std::string worst_key;

  explicit Case(const std::string& name) : weights(kDir + "/" + name + ".weights.safetensors") {
    std::string path = kDir + "/" + name + ".golden.safetensors";
    SafetensorsContents contents = load_safetensors(path);
    for (auto& [key, tensor] : contents.tensors) golden[key] = tensor;
    const auto& meta = contents.metadata;
    model = models::GPT(models::GPTConfig()
                            .block_size(std::stoll(meta.at("block_size")))
                            .vocab_size(std::stoll(meta.at("vocab_size")))
                            .n_layer(std::stoll(meta.at("n_layer")))
                            .n_head(std::stoll(meta.at("n_head")))
                            .n_embd(std::stoll(meta.at("n_embd")))
                            .dropout(std::stod(meta.at("dropout")))
                            .bias(meta.at("bias") == "true"));
    load(*model, weights);  // checks every name both ways, every shape and dtype
  }

  const Tensor& at(const std::string& key) const {
    auto it = golden.find(key);
    BOOST_REQUIRE_MESSAGE(it != golden.end(), "no golden tensor " << key);
    return it->second;
  }

  // kiln's `value` against PyTorch's result `key`, within the tolerance described at the top.
  void compare(const std::string& key, const Tensor& value) {
    const Tensor& expected = at(key);
    BOOST_REQUIRE_MESSAGE(value.sizes() == expected.sizes(), key << ": kiln's shape "
                                                                 << value.sizes() << ", PyTorch's "
                                                                 << expected.sizes());
    double scale = expected.abs().max().item<double>();
    double error = at("error." + key).item<double>();
    double tolerance = 8 * error + 4 * 1.1920929e-7 * scale;
    double max_diff = (value.detach().to(kFloat) - expected).abs().max().item<double>();
    BOOST_CHECK_MESSAGE(max_diff <= tolerance, key << ": max |kiln - pytorch| = " << max_diff
                                                   << " exceeds " << tolerance << " (8 * " << error
                                                   << " + 4 eps * " << scale << ")");
    if (max_diff / tolerance > worst) {
      worst = max_diff / tolerance;
      worst_key = key;
    }
  }

  void report(const std::string& what) const {
    BOOST_TEST_MESSAGE(what << ": worst |kiln - pytorch| / tolerance " << worst << " at "
                            << worst_key);
  }
};

// forward, backward and every gradient against the case's goldens.
void check_forward_and_gradients(Case& c) {
  auto [logits, loss] = c.model(c.at("idx"), c.at("targets"));
  loss.backward();
  c.compare("logits", logits);
  c.compare("loss", loss);
  {
    NoGradGuard no_grad;
    c.compare("logits_last", std::get<0>(c.model(c.at("idx"))));
  }
  int checked = 0;
  for (const auto& item : c.model->named_parameters()) {
    BOOST_REQUIRE_MESSAGE(item.value().grad().defined(), item.key() << " has no gradient");
    c.compare("grad." + item.key(), item.value().grad());
    ++checked;
  }
  BOOST_TEST_MESSAGE(checked << " gradients compared");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pytorch_goldens, *boost::unit_test::precondition(weights_available))

BOOST_AUTO_TEST_CASE(state_dict_keys_are_nanogpts) {
  for (const char* name : {"gpt", "gpt_nobias"}) {
    Case c(name);
    std::set<std::string> ours, theirs;
    for (const auto& item : c.model->named_parameters()) ours.insert(item.key());
    for (const auto& item : c.model->named_buffers()) ours.insert(item.key());
    for (const auto& [key, tensor] : load(c.weights)) theirs.insert(key);
    BOOST_CHECK_MESSAGE(ours == theirs, name << ": key sets differ");
  }
}

BOOST_AUTO_TEST_CASE(forward_and_gradients_match_pytorch) {
  Case c("gpt");
  check_forward_and_gradients(c);
  c.report("gpt");
}

BOOST_AUTO_TEST_CASE(forward_and_gradients_without_bias_match_pytorch) {
  Case c("gpt_nobias");
  check_forward_and_gradients(c);
  c.report("gpt_nobias");
}

// Under autocast (bfloat16 on the CPU) the Linear layers give bfloat16 logits, as PyTorch's, and
// logits and loss equal PyTorch's autocast ones within bfloat16's rounding (their error scale is
// PyTorch's autocast result against its float64 forward).
BOOST_AUTO_TEST_CASE(autocast_forward_matches_pytorch) {
  Case c("gpt");
  NoGradGuard no_grad;
  amp::autocast region(kCPU, kBFloat16);
  auto [logits, loss] = c.model(c.at("idx"), c.at("targets"));
  BOOST_CHECK(logits.dtype() == kBFloat16);
  BOOST_CHECK(loss.dtype() == kFloat);
  c.compare("amp.logits", logits);
  c.compare("amp.loss", loss);
  c.report("gpt under autocast");
}

// 20 AdamW steps (decay for the 2-D weights only) give PyTorch's losses and parameters.
BOOST_AUTO_TEST_CASE(twenty_adamw_steps_match_pytorch) {
  Case c("gpt");
  auto opt = c.model->configure_optimizers(0.1, 1e-3, {0.9, 0.95});
  const Tensor& xs = c.at("batches.x");
  const Tensor& ys = c.at("batches.y");
  std::vector<Tensor> losses;
  for (int64_t i = 0; i < xs.size(0); ++i) {
    auto [logits, loss] = c.model(xs[i], ys[i]);
    opt->zero_grad();
    loss.backward();
    opt->step();
    losses.push_back(loss.detach());
  }
  Tensor ours = stack(losses);
  c.compare("train.losses", ours);
  BOOST_TEST_MESSAGE("losses: " << ours);
  for (const auto& item : c.model->named_parameters())
    c.compare("train." + item.key(), item.value());
  c.report("gpt, 20 AdamW steps");
}

BOOST_AUTO_TEST_SUITE_END()

// Without the goldens.

BOOST_AUTO_TEST_CASE(lm_head_is_tied_to_wte) {
  auto model = models::GPT(small_config());
  BOOST_CHECK(model->lm_head->weight.is_same(model->wte->weight));
  auto names = model->named_parameters();
  BOOST_CHECK(names.contains("transformer.wte.weight"));
  BOOST_CHECK(!names.contains("lm_head.weight"));
  // nanoGPT's count: 12 n_layer n_embd^2 + 13 n_layer n_embd (with biases) + 2 n_embd (ln_f)
  // + vocab n_embd (wte, tied) + block n_embd (wpe)
  int64_t c = 64, l = 2;
  int64_t expected = 12 * l * c * c + 13 * l * c + 2 * c + 65 * c + 32 * c;
  BOOST_CHECK_EQUAL(model->get_num_params(false), expected);
  BOOST_CHECK_EQUAL(model->get_num_params(), expected - 32 * c);
  // one gradient, from both uses
  Tensor idx = randint(65, {2, 8});
  auto [logits, loss] = model(idx, idx);
  loss.backward();
  BOOST_CHECK(model->lm_head->weight.grad().defined());
  BOOST_CHECK(model->lm_head->weight.grad().is_same(model->wte->weight.grad()));
}

BOOST_AUTO_TEST_CASE(initialisation_is_nanogpts) {
  manual_seed(0);
  auto model = models::GPT(small_config().n_layer(4).n_embd(128).vocab_size(512));
  double proj = 0.02 / std::sqrt(8.0);
  for (const auto& item : model->named_parameters()) {
    const std::string& name = item.key();
    const Tensor& p = item.value();
    if (p.dim() == 2) {
      bool is_proj = name.find("c_proj.weight") != std::string::npos;
      double s = p.to(kDouble).std().item<double>();
      BOOST_CHECK_MESSAGE(std::abs(s / (is_proj ? proj : 0.02) - 1) < 0.1, name << ": std " << s);
      BOOST_CHECK_SMALL(p.to(kDouble).mean().item<double>(), 3e-3);
    } else if (name.find("ln") != std::string::npos && name.find("weight") != std::string::npos) {
      BOOST_CHECK_MESSAGE(equal(p, ones_like(p)), name << " is not 1");
    } else {
      BOOST_CHECK_MESSAGE(equal(p, zeros_like(p)), name << " is not 0");
    }
  }
}

// Dropout acts in training mode only: eval() gives the outputs of the same weights without it.
BOOST_AUTO_TEST_CASE(dropout_acts_in_training_only) {
  manual_seed(0);
  auto dropped = models::GPT(small_config().dropout(0.5));
  auto plain = models::GPT(small_config());
  auto from = dropped->named_parameters();
  {
    NoGradGuard no_grad;
    for (const auto& item : plain->named_parameters()) item.value().copy_(from[item.key()]);
  }
  Tensor idx = randint(65, {2, 16});
  NoGradGuard no_grad;
  Tensor reference = std::get<0>(plain(idx, idx));
  BOOST_CHECK(!equal(std::get<0>(dropped(idx, idx)), reference));
  dropped->eval();
  BOOST_CHECK(equal(std::get<0>(dropped(idx, idx)), reference));
}

BOOST_AUTO_TEST_CASE(configure_optimizers_decays_matrices_only) {
  auto model = models::GPT(small_config());
  auto opt = model->configure_optimizers(0.1, 6e-4, {0.9, 0.95});
  auto& groups = opt->param_groups();
  BOOST_REQUIRE_EQUAL(groups.size(), 2u);
  for (const Tensor& p : groups[0].params()) BOOST_CHECK_EQUAL(p.dim(), 2);
  for (const Tensor& p : groups[1].params()) BOOST_CHECK_EQUAL(p.dim(), 1);
  BOOST_CHECK_EQUAL(groups[0].params().size() + groups[1].params().size(),
                    model->parameters().size());
  auto& decay = static_cast<optim::AdamWOptions&>(groups[0].options());
  auto& no_decay = static_cast<optim::AdamWOptions&>(groups[1].options());
  BOOST_CHECK_EQUAL(decay.weight_decay(), 0.1);
  BOOST_CHECK_EQUAL(no_decay.weight_decay(), 0.0);
  BOOST_CHECK_EQUAL(decay.lr(), 6e-4);
  BOOST_CHECK_EQUAL(std::get<1>(no_decay.betas()), 0.95);
}

// generate draws from kiln's generator, so its tokens are not PyTorch's: the test checks what
// holds for any draw (shape, range, the prompt kept, repeatability with one seed) and what is
// certain (top_k = 1 is greedy decoding).
BOOST_AUTO_TEST_CASE(generate_gives_valid_tokens) {
  manual_seed(0);
  auto model = models::GPT(small_config());
  model->eval();
  Tensor prompt = randint(65, {2, 5});
  manual_seed(7);
  Tensor a = model->generate(prompt, 40, 0.9, 10);  // beyond block_size: the context is cropped
  manual_seed(7);
  Tensor b = model->generate(prompt, 40, 0.9, 10);
  BOOST_CHECK_EQUAL(a.sizes(), IntArrayRef({2, 45}));
  BOOST_CHECK(a.dtype() == kLong);
  BOOST_CHECK(equal(a, b));
  BOOST_CHECK(equal(a.narrow(1, 0, 5), prompt));
  BOOST_CHECK(a.min().item<int64_t>() >= 0 && a.max().item<int64_t>() < 65);

  Tensor greedy = prompt;
  {
    NoGradGuard no_grad;
    for (int i = 0; i < 6; ++i) {
      Tensor logits = std::get<0>(model(greedy));
      greedy = cat({greedy, logits.select(1, 0).argmax(-1, true)}, 1);
    }
  }
  BOOST_CHECK(equal(model->generate(prompt, 6, 1.0, 1), greedy));
}

// top_k keeps the k largest logits: 400 draws of one token from one prompt fall in the top 3 of
// the last position's logits (found by sorting them here), and reach more than one of them.
BOOST_AUTO_TEST_CASE(generate_top_k_keeps_the_k_largest_logits) {
  manual_seed(1);
  auto model = models::GPT(small_config());
  model->eval();
  Tensor prompt = randint(65, {1, 6});
  Tensor logits;
  {
    NoGradGuard no_grad;
    logits = std::get<0>(model(prompt)).flatten();
  }
  std::vector<std::pair<float, int64_t>> ranked;
  for (int64_t i = 0; i < 65; ++i) ranked.emplace_back(logits[i].item<float>(), i);
  std::sort(ranked.rbegin(), ranked.rend());
  std::set<int64_t> top3 = {ranked[0].second, ranked[1].second, ranked[2].second};
  Tensor drawn = model->generate(prompt.expand({400, 6}).contiguous(), 1, 2.0, 3).select(1, 6);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < 400; ++i) seen.insert(drawn[i].item<int64_t>());
  for (int64_t token : seen)
    BOOST_CHECK_MESSAGE(top3.count(token), token << " is not in the top 3");
  BOOST_CHECK_GT(seen.size(), 1u);
}

BOOST_AUTO_TEST_CASE(gpt_refuses_bad_arguments) {
  CHECK_ERROR(ValueError, models::GPT(small_config().n_head(3)),
              "n_embd (64) must be a multiple of n_head (3)");
  CHECK_ERROR(ValueError, models::GPT(small_config().vocab_size(0)), "vocab_size must be positive");
  CHECK_ERROR(ValueError, models::GPT(small_config().dropout(1.5)), "dropout must be in [0, 1]");
  auto model = models::GPT(small_config());
  CHECK_ERROR(ValueError, model(zeros({1, 33}, kLong)),
              "Cannot forward sequence of length 33, block size is only 32");
  CHECK_ERROR(TypeError, model(zeros({1, 4})), "expected int64 token indices, got float32");
  CHECK_ERROR(ValueError, model(zeros({4}, kLong)), "expected token indices [B, T]");
  CHECK_ERROR(ValueError, model(zeros({1, 4}, kLong), zeros({1, 5}, kLong)),
              "targets of shape [1, 5] do not match idx of shape [1, 4]");
  CHECK_ERROR(ValueError, model->generate(zeros({1, 4}, kLong), 3, 0.0), "temperature");
  CHECK_ERROR(ValueError, model->generate(zeros({1, 4}, kLong), 3, 1.0, 0), "top_k");
}

BOOST_AUTO_TEST_CASE(gpt_prints_as_nanogpt) {
  auto model = models::GPT(small_config().n_layer(1));
  std::ostringstream out;
  out << *model;
  std::string text = out.str();
  for (const char* part :
       {"(transformer): kiln::nn::ModuleDict(",
        "(wte): kiln::nn::Embedding(num_embeddings=65, "
        "embedding_dim=64)",
        "(ln_1): kiln::models::LayerNorm(64, bias=true)",
        "(c_attn): kiln::nn::Linear(in_features=64, out_features=192, bias=true)",
        "(lm_head): kiln::nn::Linear(in_features=64, out_features=65, bias=false)"}) {
    BOOST_CHECK_MESSAGE(text.find(part) != std::string::npos, "no \"" << part << "\" in\n" << text);
  }
}

// multinomial (kiln/sampling.h).

BOOST_AUTO_TEST_CASE(multinomial_follows_the_weights) {
  manual_seed(3);
  Tensor w = kiln::tensor({0.0, 1.0, 3.0, 0.0, 4.0});  // unnormalised
  const int64_t n = 40000;
  Tensor draws = multinomial(w, n, /*replacement=*/true);
  BOOST_CHECK_EQUAL(draws.sizes(), IntArrayRef({n}));
  BOOST_CHECK(draws.dtype() == kLong);
  Tensor counts = one_hot(draws, 5).sum({0}).to(kDouble);
  BOOST_CHECK_EQUAL(counts[0].item<double>(), 0.0);
  BOOST_CHECK_EQUAL(counts[3].item<double>(), 0.0);
  for (int64_t i : {1, 2, 4}) {
    double p = w[i].item<double>() / 8.0;
    double sd = std::sqrt(n * p * (1 - p));
    BOOST_CHECK_MESSAGE(std::abs(counts[i].item<double>() - n * p) < 5 * sd,
                        "category " << i << ": " << counts[i].item<double>() << " draws, expected "
                                    << n * p);
  }
  // rows are independent distributions
  Tensor rows = kiln::tensor({1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f}).view({2, 3});
  Tensor picked = multinomial(rows, 4, true);
  BOOST_CHECK(equal(picked, kiln::tensor({0, 0, 0, 0, 2, 2, 2, 2}).to(kLong).view({2, 4})));
}

BOOST_AUTO_TEST_CASE(multinomial_without_replacement_draws_distinct_categories) {
  manual_seed(4);
  Tensor w = rand({3, 10}) + 0.01;
  Tensor draws = multinomial(w, 10);  // every category once, in some order
  BOOST_CHECK(equal(std::get<0>(draws.max(-1)), full({3}, 9, kLong)));
  BOOST_CHECK(equal(one_hot(draws, 10).sum({1}), ones({3, 10}, kLong)));
  // a heavy category comes first far more often than a light one
  Tensor skew = kiln::tensor({100.0, 1.0}).expand({2000, 2}).contiguous();
  double first = eq(multinomial(skew, 1).squeeze(1), 0).sum().item<double>();
  BOOST_CHECK_GT(first, 1900.0);
  // a zero weight is never drawn while positive ones remain
  Tensor zero = kiln::tensor({0.0, 1.0, 1.0}).expand({500, 3}).contiguous();
  BOOST_CHECK(!eq(multinomial(zero, 2), 0).any().item<bool>());
}

BOOST_AUTO_TEST_CASE(multinomial_refuses_bad_distributions) {
  CHECK_ERROR(ValueError, multinomial(kiln::tensor({0.5, -0.1}), 1),
              "multinomial: probability tensor contains either `inf`, `nan` or element < 0");
  CHECK_ERROR(ValueError, multinomial(kiln::tensor({0.5, std::nan("")}), 1), "`nan`");
  CHECK_ERROR(ValueError, multinomial(kiln::tensor({0.5, HUGE_VAL}), 1), "`inf`");
  CHECK_ERROR(ValueError, multinomial(zeros({2, 3}), 1),
              "invalid multinomial distribution (sum of probabilities <= 0)");
  CHECK_ERROR(ValueError, multinomial(kiln::tensor({0.0, 1.0, 1.0}), 4),
              "cannot sample n_sample > prob_dist.size(-1)");
  CHECK_ERROR(ValueError, multinomial(kiln::tensor({0.0, 1.0, 1.0}), 3),
              "not enough non-negative category to sample");
  CHECK_ERROR(ValueError, multinomial(kiln::tensor({1.0}), 0), "cannot sample n_sample <= 0");
  CHECK_ERROR(ValueError, multinomial(zeros({2, 2, 2}), 1), "prob_dist must be 1 or 2 dim");
  CHECK_ERROR(TypeError, multinomial(ones({3}, kLong), 1),
              "only supports floating-point dtypes for input, got: int64");
}
