// Attention against PyTorch's goldens (tests/golden/make_attention_golden.py):
// scaled_dot_product_attention on the composite (float64) and on the fused CPU kernels (float32
// and bfloat16), outputs and gradients; the errors; autocast; create_graph through the fused
// path.
#include "golden.h"

#include <deque>
#include <limits>
#include <set>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using nn_test::check_close;
using nn_test::golden;

namespace {

bool has_field(const std::string& name, const std::string& field) {
  return nn_test::golden_case(name).tensors.count(field) > 0;
}

// Whether the backward graph of t holds a node named `node`.
bool graph_has(const Tensor& t, const std::string& node) {
  std::deque<std::shared_ptr<kiln::autograd::Node>> todo{t.grad_fn()};
  std::set<kiln::autograd::Node*> seen;
  while (!todo.empty()) {
    auto n = todo.front();
    todo.pop_front();
    if (!n || !seen.insert(n.get()).second) continue;
    if (n->name() == node) return true;
    for (const auto& e : n->next_edges()) todo.push_back(e.function);
  }
  return false;
}

// The mask of case `name` (boolean when PyTorch's was), or undefined.
Tensor case_mask(const std::string& name, kiln::ScalarType dtype) {
  if (!has_field(name, "mask")) return Tensor();
  if (nn_test::golden_case(name).tensors.at("mask").is_int) {
    return golden(name, "mask").to(kiln::kBool);
  }
  return golden(name, "mask", dtype);
}

// Runs sdpa on case `name` in `dtype` and checks out and the input gradients.
void check_sdpa(const std::string& name, kiln::ScalarType dtype, double tol, bool fused) {
  Tensor q = golden(name, "q", dtype, true), k = golden(name, "k", dtype, true),
         v = golden(name, "v", dtype, true);
  const bool causal = golden(name, "causal").item<int64_t>() != 0;
  Tensor out = F::scaled_dot_product_attention(q, k, v, case_mask(name, dtype), 0.0, causal);
  BOOST_TEST(out.dtype() == dtype);
  BOOST_TEST_MESSAGE(name);
  BOOST_TEST(graph_has(out, "ScaledDotProductFlashAttentionBackward0") == fused);
  check_close(out.to(kiln::kDouble), golden(name, "out"), tol, tol, name + " out");
  (out.to(kiln::kDouble) * golden(name, "gy")).sum().backward();
  check_close(q.grad().to(kiln::kDouble), golden(name, "grad_q"), tol, tol, name + " grad_q");
  check_close(k.grad().to(kiln::kDouble), golden(name, "grad_k"), tol, tol, name + " grad_k");
  check_close(v.grad().to(kiln::kDouble), golden(name, "grad_v"), tol, tol, name + " grad_v");
}

const char* kSdpaCases[] = {"sdpa_basic",      "sdpa_bool_mask",    "sdpa_float_mask",
                            "sdpa_causal",     "sdpa_3d_causal",    "sdpa_2d",
                            "sdpa_tiles_mask", "sdpa_tiles_causal", "sdpa_tiles_float_mask"};

Tensor randn(std::vector<int64_t> sizes) { return kiln::randn(sizes); }

}  // namespace

BOOST_AUTO_TEST_SUITE(attention)

BOOST_AUTO_TEST_CASE(sdpa_composite_matches_pytorch_in_float64) {
  for (const char* name : kSdpaCases) check_sdpa(name, kiln::kDouble, 1e-10, false);
}

BOOST_AUTO_TEST_CASE(sdpa_fused_matches_pytorch_in_float32) {
  for (const char* name : kSdpaCases) check_sdpa(name, kiln::kFloat, 2e-5, true);
}

BOOST_AUTO_TEST_CASE(sdpa_fused_matches_pytorch_in_bfloat16) {
  // inputs rounded to bfloat16, products in float32, the output rounded once
  for (const char* name : kSdpaCases) check_sdpa(name, kiln::kBFloat16, 5e-2, true);
}

BOOST_AUTO_TEST_CASE(fused_gradients_equal_the_composite) {
  kiln::manual_seed(3);
  Tensor q = randn({2, 4, 100, 32}).requires_grad_(true);
  Tensor k = randn({2, 4, 130, 32}).requires_grad_(true);
  Tensor v = randn({2, 4, 130, 16}).requires_grad_(true);
  Tensor mask = randn({4, 1, 130});
  Tensor gy = randn({2, 4, 100, 16});
  for (bool causal : {false, true}) {
    Tensor m = causal ? Tensor() : mask;
    Tensor fused = F::scaled_dot_product_attention(q, k, v, m, 0.0, causal);
    Tensor comp = std::get<0>(F::scaled_dot_product_attention_with_weights(q, k, v, m, 0, causal));
    BOOST_TEST(graph_has(fused, "ScaledDotProductFlashAttentionBackward0"));
    BOOST_TEST(!graph_has(comp, "ScaledDotProductFlashAttentionBackward0"));
    check_close(fused, comp, 1e-5, 1e-5, "out");
    auto gf = kiln::autograd::grad({fused}, {q, k, v}, {gy});
    auto gc = kiln::autograd::grad({comp}, {q, k, v}, {gy});
    for (size_t i = 0; i < 3; ++i) check_close(gf[i], gc[i], 1e-4, 1e-4, "gradient");
  }
}

BOOST_AUTO_TEST_CASE(fused_second_derivatives_equal_the_composite) {
  kiln::manual_seed(4);
  Tensor q = randn({2, 7, 8}).requires_grad_(true);
  Tensor k = randn({2, 9, 8}).requires_grad_(true);
  Tensor v = randn({2, 9, 5}).requires_grad_(true);
  Tensor gy = randn({2, 7, 5});
  auto second = [&](bool fused) {
    Tensor out =
        fused ? F::scaled_dot_product_attention(q, k, v, {}, 0.0, true)
              : std::get<0>(F::scaled_dot_product_attention_with_weights(q, k, v, {}, 0.0, true));
    auto g = kiln::autograd::grad({out}, {q, k, v}, {gy}, std::nullopt, true);
    Tensor penalty = (g[0] * g[0]).sum() + (g[1] * g[2].sum()).sum();
    return kiln::autograd::grad({penalty}, {q, k, v});
  };
  auto gf = second(true), gc = second(false);
  for (size_t i = 0; i < 3; ++i) check_close(gf[i], gc[i], 1e-4, 1e-4, "second derivative");
}

BOOST_AUTO_TEST_CASE(fully_masked_query_gives_nan_as_pytorch) {
  Tensor q = randn({1, 2, 4}), k = randn({1, 3, 4}), v = randn({1, 3, 4});
  Tensor mask = kiln::ones({2, 3}, kiln::TensorOptions().dtype(kiln::kBool));
  mask.index_put_({1}, false);
  for (auto dtype : {kiln::kFloat, kiln::kDouble}) {
    Tensor out = F::scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), mask);
    BOOST_TEST(!kiln::isnan(out.select(1, 0)).any().item<bool>());
    BOOST_TEST(kiln::isnan(out.select(1, 1)).all().item<bool>());
  }
}

BOOST_AUTO_TEST_CASE(dropout_runs_the_composite) {
  Tensor q = randn({2, 5, 4}), k = randn({2, 6, 4}), v = randn({2, 6, 3});
  Tensor all_dropped = F::scaled_dot_product_attention(q, k, v, {}, 1.0);
  BOOST_TEST(kiln::equal(all_dropped, kiln::zeros({2, 5, 3})));
  kiln::manual_seed(7);
  Tensor a = F::scaled_dot_product_attention(q, k, v, {}, 0.5);
  kiln::manual_seed(7);
  Tensor b = F::scaled_dot_product_attention(q, k, v, {}, 0.5);
  BOOST_TEST(kiln::equal(a, b));
  BOOST_TEST(!kiln::equal(a, F::scaled_dot_product_attention(q, k, v)));
}

BOOST_AUTO_TEST_CASE(autocast_runs_in_bfloat16_on_the_cpu) {
  Tensor q = randn({2, 5, 8}), k = randn({2, 6, 8}), v = randn({2, 6, 4});
  Tensor out;
  {
    kiln::amp::autocast region(kiln::kCPU);
    out = F::scaled_dot_product_attention(q, k, v);
  }
  BOOST_TEST(out.dtype() == kiln::kBFloat16);
  check_close(out.to(kiln::kFloat), F::scaled_dot_product_attention(q, k, v), 3e-2, 3e-2,
              "autocast");
}

BOOST_AUTO_TEST_CASE(errors_name_the_shapes) {
  Tensor q = randn({2, 5, 8}), k = randn({2, 6, 8}), v = randn({2, 6, 4});
  CHECK_ERROR(kiln::ValueError,
              F::scaled_dot_product_attention(q, k, v, kiln::zeros({5, 6}), 0.0, true),
              "scaled_dot_product_attention", "is_causal and attn_mask");
  CHECK_ERROR(kiln::ValueError, F::scaled_dot_product_attention(q, randn({2, 6, 7}), v),
              "scaled_dot_product_attention", "[2, 5, 8]", "[2, 6, 7]", "embedding size");
  CHECK_ERROR(kiln::ValueError, F::scaled_dot_product_attention(q, k, randn({2, 4, 4})),
              "scaled_dot_product_attention", "[2, 4, 4]", "sequence length");
  CHECK_ERROR(kiln::ValueError, F::scaled_dot_product_attention(q, k, v, kiln::zeros({4, 6})),
              "scaled_dot_product_attention", "[4, 6]", "does not broadcast");
  CHECK_ERROR(kiln::TypeError,
              F::scaled_dot_product_attention(q, k, v, kiln::zeros({5, 6}, kiln::kLong)),
              "scaled_dot_product_attention", "int64");
  CHECK_ERROR(kiln::TypeError, F::scaled_dot_product_attention(q, k.to(kiln::kDouble), v),
              "scaled_dot_product_attention", "float32", "float64");
  CHECK_ERROR(kiln::ValueError, F::scaled_dot_product_attention(q, k, v, {}, 1.5),
              "scaled_dot_product_attention", "dropout_p");
  CHECK_ERROR(kiln::ValueError, F::scaled_dot_product_attention(randn({5}), k, v),
              "scaled_dot_product_attention", "at least 2 dimensions");
}

BOOST_AUTO_TEST_SUITE_END()
