// Autocast regions: the dtype table of PyTorch's "Automatic Mixed Precision examples", policies,
// nesting, the weight cache, autograd through casts, threads, and the errors.
#include "amp_test.h"

#include <kiln/nn.h>

#include <stdexcept>
#include <thread>

using namespace kiln;
using amp::autocast;

BOOST_AUTO_TEST_SUITE(autocast_regions)

// PyTorch's "Automatic Mixed Precision examples", its table: x + y stays float32, x @ y is the
// lower dtype, mixed inputs promote.
BOOST_AUTO_TEST_CASE(seed_dtype_table) {
  manual_seed(0);
  Tensor x = randn({4, 4}), y = randn({4, 4});
  autocast region(kCPU);
  BOOST_TEST(amp::is_autocast_enabled(kCPU));
  BOOST_TEST(amp::get_autocast_dtype(kCPU) == kBFloat16);
  BOOST_TEST((x + y).dtype() == kFloat);
  BOOST_TEST(matmul(x, y).dtype() == kBFloat16);
  BOOST_TEST(mm(x, y).dtype() == kBFloat16);
  BOOST_TEST(bmm(x.unsqueeze(0), y.unsqueeze(0)).dtype() == kBFloat16);
  BOOST_TEST(addmm(x, x, y).dtype() == kBFloat16);
  BOOST_TEST(nn::functional::linear(x, y, Tensor()).dtype() == kBFloat16);
  Tensor low = matmul(x, y);
  BOOST_TEST((low + y).dtype() == kFloat);  // ordinary promotion, not autocast
  BOOST_TEST(cat({low, y}).dtype() == kFloat);
  BOOST_TEST(stack({low, low}).dtype() == kBFloat16);
  BOOST_TEST(nn::functional::mse_loss(low, y).dtype() == kFloat);
  BOOST_TEST(prod(low).dtype() == kFloat);
  BOOST_TEST(exp(low).dtype() == kBFloat16);  // not listed for the CPU
  // nor are these (PyTorch's CUDA list has them, its CPU list does not)
  BOOST_TEST(nn::functional::layer_norm(low, {4}).dtype() == kBFloat16);
  BOOST_TEST(logsumexp(low, {1}).dtype() == kBFloat16);
  BOOST_TEST(nn::functional::softplus(low).dtype() == kBFloat16);
  // the product itself is close to float32's (bfloat16 inputs, float32 accumulation)
  Tensor want;
  {
    autocast off(kCPU, std::nullopt, false);
    want = matmul(x, y);
  }
  BOOST_TEST(want.dtype() == kFloat);
  BOOST_TEST(allclose(low.to(kFloat), want, 3e-2, 3e-2));
}

BOOST_AUTO_TEST_CASE(conv_runs_in_the_lower_dtype) {
  manual_seed(1);
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 1));
  Tensor x = randn({1, 2, 4, 4});
  Tensor want = conv->forward(x);
  autocast region(kCPU);
  Tensor got = conv->forward(x);
  BOOST_TEST(got.dtype() == kBFloat16);
  BOOST_TEST(allclose(got.to(kFloat), want, 3e-2, 3e-2));
}

// Batch norm on the bfloat16 output of a convolution stays bfloat16 (statistics in float32), so
// activations between layers stay 16-bit, and its gradients reach the float32 parameters.
BOOST_AUTO_TEST_CASE(batch_norm_keeps_the_lower_dtype) {
  manual_seed(7);
  nn::Conv2d conv(nn::Conv2dOptions(2, 4, 1));
  nn::BatchNorm2d bn(4), bn_ref(4);
  Tensor x = randn({2, 2, 3, 3});
  Tensor want = bn_ref->forward(conv->forward(x));
  Tensor got;
  {
    autocast region(kCPU);
    got = bn->forward(conv->forward(x));
  }
  BOOST_TEST(got.dtype() == kBFloat16);
  BOOST_TEST(allclose(got.to(kFloat), want, 5e-2, 5e-2));
  BOOST_TEST(bn->running_mean.dtype() == kFloat);
  BOOST_TEST(allclose(bn->running_mean, bn_ref->running_mean, 1e-2, 1e-2));
  BOOST_TEST(allclose(bn->running_var, bn_ref->running_var, 1e-2, 1e-2));
  got.to(kFloat).pow(2).sum().backward();
  BOOST_TEST(bn->weight.grad().dtype() == kFloat);
  BOOST_TEST(conv->weight.grad().dtype() == kFloat);
}

BOOST_AUTO_TEST_CASE(float16_region) {
  Tensor x = ones({2, 2});
  autocast region(kCPU, kHalf);
  BOOST_TEST(amp::get_autocast_dtype(kCPU) == kHalf);
  Tensor y = mm(x, x);
  BOOST_TEST(y.dtype() == kHalf);
  BOOST_TEST(y.to(kFloat).sum().item<float>() == 8.0f);
}

BOOST_AUTO_TEST_CASE(regions_nest_and_restore) {
  Tensor x = ones({2, 2});
  BOOST_TEST(!amp::is_autocast_enabled(kCPU));
  {
    autocast outer(kCPU);
    {
      autocast inner(kCPU, std::nullopt, /*enabled=*/false);
      BOOST_TEST(!amp::is_autocast_enabled(kCPU));
      BOOST_TEST(mm(x, x).dtype() == kFloat);
      {
        autocast again(kCPU, kHalf);
        BOOST_TEST(mm(x, x).dtype() == kHalf);
      }
      BOOST_TEST(amp::get_autocast_dtype(kCPU) == kBFloat16);
    }
    BOOST_TEST(amp::is_autocast_enabled(kCPU));
    BOOST_TEST(mm(x, x).dtype() == kBFloat16);
    try {
      autocast inner(kCPU, kHalf, false, false);
      throw std::runtime_error("leaving by an exception");
    } catch (const std::runtime_error&) {
    }
    BOOST_TEST(amp::is_autocast_enabled(kCPU));
    BOOST_TEST(amp::get_autocast_dtype(kCPU) == kBFloat16);
    BOOST_TEST(amp::is_autocast_cache_enabled());
  }
  BOOST_TEST(!amp::is_autocast_enabled(kCPU));
  BOOST_TEST(mm(x, x).dtype() == kFloat);
}

BOOST_AUTO_TEST_CASE(region_for_another_device_type_leaves_cpu_alone) {
  Tensor x = ones({2, 2});
  autocast region(kCUDA);
  BOOST_TEST(amp::is_autocast_enabled(kCUDA));
  BOOST_TEST(!amp::is_autocast_enabled(kCPU));
  BOOST_TEST(amp::get_autocast_dtype(kCUDA) == kHalf);
  BOOST_TEST(mm(x, x).dtype() == kFloat);
}

BOOST_AUTO_TEST_CASE(region_by_name) {
  autocast region("cpu");
  BOOST_TEST(amp::is_autocast_enabled(kCPU));
}

BOOST_AUTO_TEST_CASE(unsupported_dtype_disables_the_region) {
  Tensor x = ones({2, 2});
  autocast region(kCPU, kFloat);  // warns, as PyTorch's CPU autocast
  BOOST_TEST(!amp::is_autocast_enabled(kCPU));
  BOOST_TEST(mm(x, x).dtype() == kFloat);
}

BOOST_AUTO_TEST_CASE(set_autocast_dtype_rejects_other_dtypes) {
  amp_test::check_error<TypeError>([] { amp::set_autocast_dtype(kCPU, kDouble); },
                                   {"set_autocast_dtype", "cpu", "float64"});
}

BOOST_AUTO_TEST_CASE(float64_and_integer_inputs_are_not_cast) {
  Tensor d = ones({2, 2}, TensorOptions().dtype(kDouble));
  Tensor i = ones({2, 2}, TensorOptions().dtype(kLong));
  autocast region(kCPU);
  BOOST_TEST(mm(d, d).dtype() == kDouble);
  BOOST_TEST(mm(i, i).dtype() == kLong);
  BOOST_TEST(cat({d, ones({2, 2})}).dtype() == kDouble);
}

BOOST_AUTO_TEST_CASE(in_place_and_explicit_dtype_calls_are_not_cast) {
  Tensor a = ones({2, 2}), b = full({2, 2}, 3.0);
  autocast region(kCPU);
  a.mul_(b);
  BOOST_TEST(a.dtype() == kFloat);
  BOOST_TEST(a.sum().item<float>() == 12.0f);
  Tensor low = mm(a, b);
  BOOST_TEST(sum(low, kDouble).dtype() == kDouble);
  BOOST_TEST(nn::functional::softmax(low, 1, kFloat).dtype() == kFloat);
}

// Backward runs in the dtypes forward chose; the casts are in the graph, so the float32 leaves
// get float32 gradients.
BOOST_AUTO_TEST_CASE(casts_are_recorded_by_autograd) {
  manual_seed(2);
  Tensor x = randn({3, 4});
  Tensor w = randn({4, 2}).requires_grad_();
  Tensor y;
  {
    autocast region(kCPU);
    y = mm(x, w);
  }
  BOOST_TEST(y.dtype() == kBFloat16);
  y.to(kFloat).sum().backward();
  BOOST_REQUIRE(w.grad().defined());
  BOOST_TEST(w.grad().dtype() == kFloat);
  // d/dw sum(x @ w) = x^T @ ones, with x rounded to bfloat16 by the cast
  Tensor want = mm(x.to(kBFloat16).to(kFloat).t(), ones({3, 2}));
  BOOST_TEST(allclose(w.grad(), want, 1e-2, 1e-2));
}

BOOST_AUTO_TEST_CASE(weight_cache_lives_for_the_outermost_region) {
  manual_seed(3);
  nn::Linear lin(4, 4);
  Tensor x = randn({2, 4});
  amp::clear_autocast_cache();
  {
    autocast outer(kCPU);
    lin->forward(x);
    BOOST_TEST(amp::autocast_cache_size() == 2u);  // the weight and the bias
    lin->forward(x);
    {
      autocast inner(kCPU);
      lin->forward(x);
    }
    BOOST_TEST(amp::autocast_cache_size() == 2u);  // reused; the inner exit keeps the cache
    // a non-leaf, a tensor without grad and a view are not cached
    size_t before = amp::autocast_cache_size();
    Tensor plain = randn({4, 4});
    mm(x, plain);
    mm(x, lin->weight.t());
    mm(x, lin->weight * 1.0);
    Tensor base = randn({4, 4});
    Tensor leaf_view = base.t().requires_grad_();  // a leaf that requires grad, but a view
    BOOST_TEST(leaf_view.is_leaf());
    mm(x, leaf_view);
    BOOST_TEST(amp::autocast_cache_size() == before);
    Tensor detached = base.detach().requires_grad_();  // detach() is not a view: cached
    mm(x, detached);
    BOOST_TEST(amp::autocast_cache_size() == before + 1);
  }
  BOOST_TEST(amp::autocast_cache_size() == 0u);
  {
    autocast off(kCPU, std::nullopt, true, /*cache_enabled=*/false);
    lin->forward(x);
    BOOST_TEST(amp::autocast_cache_size() == 0u);
  }
}

// PyTorch issue 112583: a no-grad forward before a forward with grad, in one region, must not
// leave the second without a gradient.
BOOST_AUTO_TEST_CASE(no_grad_forward_then_grad_forward) {
  manual_seed(4);
  nn::Linear lin(3, 2);
  Tensor x = randn({5, 3});
  Tensor loss;
  {
    autocast region(kCPU);
    {
      NoGradGuard no_grad;
      lin->forward(x);
    }
    loss = lin->forward(x).to(kFloat).sum();
  }
  BOOST_TEST(loss.requires_grad());
  loss.backward();
  BOOST_REQUIRE(lin->weight.grad().defined());
  Tensor want = x.to(kBFloat16).to(kFloat).sum(0).unsqueeze(0).expand({2, 3});
  BOOST_TEST(allclose(lin->weight.grad(), want, 1e-2, 1e-2));
}

// The DataParallel case of PyTorch's "Automatic Mixed Precision examples": a thread started in a
// region starts with autocast off, and a region opened in the thread's own work casts there.
BOOST_AUTO_TEST_CASE(threads_start_with_autocast_off) {
  Tensor x = ones({2, 2});
  autocast region(kCPU);
  bool enabled_in_thread = true;
  ScalarType plain = kBool, inside = kBool;
  std::thread worker([&] {
    enabled_in_thread = amp::is_autocast_enabled(kCPU);
    plain = mm(x, x).dtype();
    autocast own(kCPU);
    inside = mm(x, x).dtype();
  });
  worker.join();
  BOOST_TEST(!enabled_in_thread);
  BOOST_TEST(plain == kFloat);
  BOOST_TEST(inside == kBFloat16);
  BOOST_TEST(mm(x, x).dtype() == kBFloat16);
}

BOOST_AUTO_TEST_CASE(errors_inside_a_region_name_the_operator) {
  autocast region(kCPU);
  amp_test::check_error<ValueError>([] { mm(ones({2, 3}), ones({2, 3})); }, {"mm", "2x3", "2x3"});
  amp_test::check_error<ValueError>(
      [] {
        nn::functional::linear(ones({2, 3}), ones({4, 5}), Tensor());
      },
      {"linear", "[2, 3]", "[4, 5]"});
}

// The policy of every device type but the CPU (PyTorch's CUDA lists) on a host-memory test
// device, "testdev" of tests/plugins/good.cpp, which runs its kernels through CPU fallback and
// declares bfloat16 its default lower dtype: what a GPU gets (in float16), checked without one.
BOOST_AUTO_TEST_CASE(cuda_policy_on_a_test_device) {
  kiln::load_plugin(std::string(KILN_TEST_PLUGIN_DIR) + "/good.so");
  const Device dev("testdev:0");
  manual_seed(0);
  Tensor a = rand({3, 4}).to(dev), b = rand({4, 2}).to(dev);
  Tensor probabilities = rand({3}).to(dev) * 0.8 + 0.1, targets = rand({3}).to(dev);
  BOOST_CHECK_EQUAL(mm(a, b).dtype(), kFloat);  // no region
  {
    autocast by_default(dev.type());
    BOOST_CHECK_EQUAL(amp::get_autocast_dtype(dev.type()), kBFloat16);  // the plugin's choice
    BOOST_CHECK_EQUAL(mm(a, b).dtype(), kBFloat16);
  }
  autocast region(dev.type(), kHalf);
  BOOST_CHECK(amp::is_autocast_enabled(dev.type()));
  BOOST_CHECK(!amp::is_autocast_enabled(kCPU));
  Tensor product = mm(a, b);
  BOOST_CHECK_EQUAL(product.dtype(), kHalf);
  BOOST_CHECK_EQUAL(product.device(), dev);
  BOOST_CHECK(allclose(product.to(kCPU).to(kFloat), mm(a.to(kCPU), b.to(kCPU)), 1e-2, 1e-2));
  BOOST_CHECK_EQUAL((a + a).dtype(), kFloat);       // outside the lists
  BOOST_CHECK_EQUAL(exp(product).dtype(), kFloat);  // float32 list
  // composites of the float32 list run whole in float32, as PyTorch's do
  Tensor normed = nn::functional::layer_norm(product, {2});
  BOOST_CHECK_EQUAL(normed.dtype(), kFloat);
  BOOST_CHECK_EQUAL(logsumexp(product, {1}).dtype(), kFloat);
  BOOST_CHECK_EQUAL(nn::functional::softplus(product).dtype(), kFloat);
  {
    autocast off(dev.type(), std::nullopt, false);
    Tensor p32 = product.to(kFloat);
    BOOST_CHECK(allclose(normed.to(kCPU), nn::functional::layer_norm(p32, {2}).to(kCPU)));
    BOOST_CHECK(allclose(logsumexp(product, {1}).to(kCPU).to(kFloat), logsumexp(p32, {1}).to(kCPU),
                         1e-2, 1e-2));  // float16 without a region
  }
  BOOST_CHECK_EQUAL(sum(product).dtype(), kFloat);  // float32 unless given a dtype
  BOOST_CHECK_EQUAL(sum(product, {0}, false, kHalf).dtype(), kHalf);
  amp_test::check_error<TypeError>(
      [&] { nn::functional::binary_cross_entropy(probabilities, targets); },
      {"binary_cross_entropy", "unsafe to autocast", "binary_cross_entropy_with_logits",
       "on testdev:0", "testdev autocast region"});
  BOOST_CHECK_EQUAL(
      nn::functional::binary_cross_entropy_with_logits(probabilities, targets).dtype(), kFloat);
}

BOOST_AUTO_TEST_SUITE_END()
