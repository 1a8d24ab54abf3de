// Attention: scaled_dot_product_attention and the optional primitives behind it
// (flash_attention, flash_attention_backward; See Note [Fused attention]). In float32 a device
// with the primitives runs them; the reference is the composite in float64 on the CPU, and
// test_gradcheck checks the float64 gradients by finite differences. tests/nn/test_attention.cpp
// checks both paths against PyTorch.
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;
namespace F = kiln::nn::functional;

// q [2, 3, 5, 4], k [2, 3, 6, 4], v [2, 3, 6, 3] and an additive mask [3, 5, 6].
Args attention_inputs(ScalarType d) {
  return Args{sample({2, 3, 5, 4}, d, -1, 1, 301), sample({2, 3, 6, 4}, d, -1, 1, 302),
              sample({2, 3, 6, 3}, d, -1, 1, 303), sample({3, 5, 6}, d, -2, 2, 304)};
}

Outputs masked(const Args& a) {
  return Outputs{F::scaled_dot_product_attention(a.t(0), a.t(1), a.t(2), a.t(3))};
}

Outputs causal(const Args& a) {
  return Outputs{F::scaled_dot_product_attention(a.t(0), a.t(1), a.t(2), {}, 0.0, true)};
}

// The input gradients of sum(out * out * g) / 2 for out = sdpa(q, k, v, mask): their own
// gradients (create_graph) run the differentiable form of flash_attention_backward.
Outputs attention_grads(const Args& a) {
  std::vector<Tensor> in;
  for (size_t i = 0; i < 3; ++i) {
    in.push_back(a.t(i).requires_grad() ? a.t(i) : a.t(i).detach().requires_grad_(true));
  }
  Tensor out = F::scaled_dot_product_attention(in[0], in[1], in[2], a.t(3), 0.0, false);
  return kiln::autograd::grad({out}, in, {out * a.t(4)}, std::nullopt, true);
}

}  // namespace

void register_attention_cases() {
  add_case({.name = "scaled_dot_product_attention",
            .op = "scaled_dot_product_attention",
            .gradient = true,
            .dtypes = {kFloat, kDouble},
            .inputs = attention_inputs,
            .run = masked,
            .reference = ref_float64(masked, {0, 1, 2, 3})});
  add_case({.name = "flash_attention_causal",
            .op = "flash_attention",
            .gradient = true,
            .dtypes = {kFloat, kDouble},
            .inputs =
                [](ScalarType d) {
                  Args a = attention_inputs(d);
                  a.tensors.pop_back();  // no mask
                  return a;
                },
            .run = causal,
            .reference = ref_float64(causal, {0, 1, 2})});
  add_case({.name = "flash_attention_backward",
            .op = "flash_attention_backward",
            .gradient = true,
            .dtypes = {kFloat, kDouble},
            .inputs =
                [](ScalarType d) {
                  Args a = attention_inputs(d);
                  a.tensors.push_back(sample({2, 3, 5, 3}, d, -1, 1, 305));
                  return a;
                },
            .run = attention_grads,
            .reference = ref_float64(attention_grads, {0, 1, 2, 3, 4}),
            .tolerance_scale = 2});
}

}  // namespace conformance
