// MultiheadAttention and the Transformer modules against PyTorch 1.13's torch.nn modules
// (tests/golden/make_attention_golden.py): parameters copied by name, outputs, attention
// weights and the gradients of inputs and parameters, in float64; parameter names, options,
// printing and errors.
#include "golden.h"

#include <limits>
#include <sstream>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_close;
using nn_test::golden;

namespace {

bool has_field(const std::string& name, const std::string& field) {
  return nn_test::golden_case(name).tensors.count(field) > 0;
}

// Copies the "p:<name>" fields of case `name` into m's parameters (every one must be there,
// and m must have every one: the names are PyTorch's).
void load_parameters(nn::Module& m, const std::string& name) {
  kiln::NoGradGuard no_grad;
  m.to(kiln::kDouble);
  size_t count = 0;
  for (auto& item : m.named_parameters()) {
    BOOST_REQUIRE_MESSAGE(has_field(name, "p:" + item.key()),
                          name << ": PyTorch has no " << item.key());
    item.value().copy_(golden(name, "p:" + item.key()));
    ++count;
  }
  size_t theirs = 0;
  for (const auto& [field, t] : nn_test::golden_case(name).tensors) {
    if (field.rfind("p:", 0) == 0) ++theirs;
  }
  BOOST_TEST(count == theirs, name << ": kiln has " << count << " parameters, PyTorch " << theirs);
}

// An input of case `name`: float64 requiring grad, or a boolean mask (stored as int64).
Tensor input(const std::string& name, const std::string& field, bool grad = true) {
  if (!has_field(name, field)) return Tensor();
  if (nn_test::golden_case(name).tensors.at(field).is_int) {
    return golden(name, field).to(kiln::kBool);
  }
  return golden(name, field, kiln::kDouble, grad);
}

// Checks out against the case and the gradients of sum(out * gy) of `inputs` and of m's
// parameters.
void check_module(const std::string& name, nn::Module& m, const Tensor& out,
                  const std::vector<std::pair<std::string, Tensor>>& inputs, double tol = 1e-10) {
  check_close(out, golden(name, "out"), tol, tol, name + " out");
  (out * golden(name, "gy")).sum().backward();
  for (const auto& [field, t] : inputs) {
    check_close(t.grad(), golden(name, "grad_" + field), tol, tol, name + " grad_" + field);
  }
  for (auto& item : m.named_parameters()) {
    check_close(item.value().grad(), golden(name, "g:" + item.key()), tol, tol,
                name + " g:" + item.key());
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(transformer)

BOOST_AUTO_TEST_CASE(multihead_attention_matches_pytorch) {
  {
    const std::string name = "mha_masks";
    nn::MultiheadAttention m(8, 2);
    load_parameters(*m, name);
    Tensor q = input(name, "query"), k = input(name, "key"), v = input(name, "value");
    auto [out, w] = m(q, k, v, input(name, "key_padding_mask"), true, input(name, "attn_mask"));
    check_close(w, golden(name, "weights"), 1e-10, 1e-10, name + " weights");
    check_module(name, *m, out, {{"query", q}, {"key", k}, {"value", v}});
  }
  {
    const std::string name = "mha_kdim_bias_kv_zero_attn";
    nn::MultiheadAttention m(
        nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(7).add_bias_kv(true).add_zero_attn(true));
    load_parameters(*m, name);
    Tensor q = input(name, "query"), k = input(name, "key"), v = input(name, "value");
    auto [out, w] = m(q, k, v, Tensor(), true, input(name, "attn_mask", false), false);
    BOOST_TEST(w.dim() == 4);
    check_close(w, golden(name, "weights"), 1e-10, 1e-10, name + " weights");
    check_module(name, *m, out, {{"query", q}, {"key", k}, {"value", v}});
  }
  {
    const std::string name = "mha_batch_first_self";
    nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 4).bias(false).batch_first(true));
    load_parameters(*m, name);
    Tensor q = input(name, "query");
    auto [out, w] = m(q, q, q, Tensor(), false);
    BOOST_TEST(!w.defined());
    check_module(name, *m, out, {{"query", q}});
  }
  {
    const std::string name = "mha_unbatched";
    nn::MultiheadAttention m(8, 2);
    load_parameters(*m, name);
    Tensor q = input(name, "query"), k = input(name, "key");
    auto [out, w] = m(q, k, k);
    check_close(w, golden(name, "weights"), 1e-10, 1e-10, name + " weights");
    check_module(name, *m, out, {{"query", q}, {"key", k}});
  }
}

BOOST_AUTO_TEST_CASE(multihead_attention_parameters_and_print) {
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 2).kdim(5).add_bias_kv(true));
  std::vector<std::string> names;
  for (auto& item : m->named_parameters()) names.push_back(item.key());
  std::vector<std::string> want{"q_proj_weight",   "k_proj_weight", "v_proj_weight",
                                "in_proj_bias",    "bias_k",        "bias_v",
                                "out_proj.weight", "out_proj.bias"};
  std::sort(names.begin(), names.end());
  std::sort(want.begin(), want.end());
  BOOST_TEST(names == want, boost::test_tools::per_element());
  std::ostringstream s;
  s << nn::MultiheadAttention(8, 2);
  BOOST_TEST(s.str() == "kiln::nn::MultiheadAttention(\n"
                        "  (out_proj): kiln::nn::Linear(in_features=8, out_features=8, bias=true)\n"
                        ")");
  CHECK_ERROR(kiln::ValueError, nn::MultiheadAttention(10, 3), "MultiheadAttention", "embed_dim 10",
              "num_heads 3");
  nn::MultiheadAttention ok(8, 2);
  Tensor x = kiln::randn({5, 3, 8});
  CHECK_ERROR(kiln::ValueError, ok(x, x, x, Tensor(), true, kiln::zeros({4, 5})),
              "multi_head_attention_forward", "[4, 5]", "[5, 5]");
  CHECK_ERROR(kiln::ValueError, ok(x, x, x, kiln::zeros({3, 4}, kiln::kBool)),
              "multi_head_attention_forward", "key_padding_mask", "[3, 5]", "[3, 4]");
  CHECK_ERROR(kiln::ValueError, ok(kiln::randn({5, 3, 6}), x, x), "multi_head_attention_forward",
              "embedding dimension of 8", "6");
}

BOOST_AUTO_TEST_CASE(encoder_and_decoder_layers_match_pytorch) {
  {
    const std::string name = "encoder_layer";
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.0));
    load_parameters(*layer, name);
    Tensor src = input(name, "src");
    Tensor out = layer(src, input(name, "src_mask", false), input(name, "kpm"));
    check_module(name, *layer, out, {{"src", src}});
  }
  {
    const std::string name = "encoder_layer_gelu_norm_first_batch_first";
    nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2)
                                          .dim_feedforward(12)
                                          .dropout(0.0)
                                          .activation(kiln::kGELU)
                                          .norm_first(true)
                                          .batch_first(true)
                                          .layer_norm_eps(1e-6));
    load_parameters(*layer, name);
    Tensor src = input(name, "src");
    check_module(name, *layer, layer(src), {{"src", src}});
  }
  {
    const std::string name = "decoder_layer";
    nn::TransformerDecoderLayer layer(
        nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.0));
    load_parameters(*layer, name);
    Tensor tgt = input(name, "tgt"), memory = input(name, "memory");
    Tensor out =
        layer(tgt, memory, input(name, "tgt_mask", false), Tensor(), Tensor(), input(name, "mkpm"));
    check_module(name, *layer, out, {{"tgt", tgt}, {"memory", memory}});
  }
  {
    const std::string name = "decoder_layer_gelu_norm_first";
    nn::TransformerDecoderLayer layer(nn::TransformerDecoderLayerOptions(8, 2)
                                          .dim_feedforward(12)
                                          .dropout(0.0)
                                          .activation(kiln::kGELU)
                                          .norm_first(true));
    load_parameters(*layer, name);
    Tensor tgt = input(name, "tgt"), memory = input(name, "memory");
    check_module(name, *layer, layer(tgt, memory), {{"tgt", tgt}, {"memory", memory}});
  }
}

BOOST_AUTO_TEST_CASE(encoder_stack_and_transformer_match_pytorch) {
  {
    const std::string name = "encoder_stack";
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.0));
    nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(layer, 2).norm(
        nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
    load_parameters(*encoder, name);
    Tensor src = input(name, "src");
    check_module(name, *encoder, encoder(src, input(name, "src_mask", false)), {{"src", src}});
  }
  {
    const std::string name = "transformer";
    nn::Transformer model(nn::TransformerOptions(8, 2, 2, 2).dim_feedforward(12).dropout(0.0));
    load_parameters(*model, name);
    Tensor src = input(name, "src"), tgt = input(name, "tgt");
    Tensor kpm = input(name, "src_kpm");
    Tensor out = model(src, tgt, Tensor(), input(name, "tgt_mask", false), Tensor(), kpm,
                       input(name, "tgt_kpm"), kpm);
    check_module(name, *model, out, {{"src", src}, {"tgt", tgt}});
  }
  check_close(nn::TransformerImpl::generate_square_subsequent_mask(4).to(kiln::kDouble),
              golden("square_subsequent_mask", "out"), 0, 0, "square subsequent mask");
}

BOOST_AUTO_TEST_CASE(encoder_layers_start_as_copies) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(4));
  nn::TransformerEncoder encoder(layer, 3);
  BOOST_TEST(encoder->layers->size() == 3u);
  auto theirs = layer->named_parameters();
  for (auto& item : encoder->named_parameters()) {
    std::string inner = item.key().substr(item.key().find('.', 7) + 1);  // "layers.i."
    BOOST_TEST(kiln::equal(item.value(), theirs[inner]), item.key());
    BOOST_TEST(item.value().data_ptr() != theirs[inner].data_ptr());
  }
  nn::Transformer model(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(4));
  CHECK_ERROR(kiln::ValueError, model(kiln::randn({5, 2, 8}), kiln::randn({4, 3, 8})),
              "Transformer: src and tgt should have equal batch size (at dim 1), but got src "
              "[5, 2, 8] and tgt [4, 3, 8]");
  CHECK_ERROR(kiln::ValueError, model(kiln::randn({5, 2, 6}), kiln::randn({4, 2, 6})),
              "Transformer: src and tgt should have same feature size as d_model (at dim 2)",
              "while d_model is 8");
  CHECK_ERROR(kiln::ValueError, model(kiln::randn({2, 8}), kiln::randn({4, 2, 8})),
              "Transformer: src and tgt should have 3 dimensions (or both 2, unbatched), but got "
              "src [2, 8] and tgt [4, 2, 8]");
  // libtorch prints these four by their Impl names (its TransformerTest.PrettyPrint* cases)
  std::ostringstream text;
  text << *nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(4, 2));
  BOOST_TEST(text.str().rfind("kiln::nn::TransformerEncoderLayerImpl(\n", 0) == 0);
}

BOOST_AUTO_TEST_CASE(transformer_trains_on_the_fused_path) {
  // float32, no mask needing a gradient: self-attention runs flash_attention; one SGD step
  // lowers the loss
  kiln::manual_seed(1);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(16, 4).dim_feedforward(32).dropout(0.0));
  Tensor x = kiln::randn({10, 3, 16}), target = kiln::randn({10, 3, 16});
  auto loss_of = [&] {
    return F::mse_loss(layer(x, nn::TransformerImpl::generate_square_subsequent_mask(10)), target);
  };
  Tensor loss = loss_of();
  loss.backward();
  {
    kiln::NoGradGuard no_grad;
    for (auto& p : layer->parameters()) p.sub_(p.grad() * 0.05);
  }
  BOOST_TEST(loss_of().item<double>() < loss.item<double>());
}

BOOST_AUTO_TEST_SUITE_END()
