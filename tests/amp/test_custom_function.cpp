// custom_fwd / custom_bwd on Function<T>: MyMM and MyFloat32Func of PyTorch's "Automatic Mixed
// Precision examples".
#include "amp_test.h"

#include <kiln/custom_function.h>

using namespace kiln;
using autograd::AutogradContext;
using autograd::variable_list;

namespace {

struct Seen {
  bool forward_autocast = false;
  bool backward_autocast = false;
  ScalarType forward_input = kBool;
  ScalarType backward_grad = kBool;
};
Seen seen;

// MyMM of the AMP examples: runs under the caller's state; backward under forward's.
struct MyMM : autograd::Function<MyMM> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a, const Tensor& b) {
    amp::custom_fwd amp(ctx, kCPU);
    seen.forward_autocast = amp::is_autocast_enabled(kCPU);
    ctx->save_for_backward({a, b});
    return a.mm(b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    amp::custom_bwd amp(ctx);
    seen.backward_autocast = amp::is_autocast_enabled(kCPU);
    variable_list saved = ctx->get_saved_variables();
    Tensor a = saved[0], b = saved[1];
    seen.backward_grad = grads[0].mm(b.t()).dtype();
    return {grads[0].mm(b.t()), a.t().mm(grads[0])};
  }
};

// MyFloat32Func of the AMP examples: float32 inputs, autocast off in forward and backward.
struct MyFloat32Func : autograd::Function<MyFloat32Func> {
  static Tensor forward(AutogradContext* ctx, const Tensor& input) {
    amp::custom_fwd amp(ctx, kCPU, kFloat);
    Tensor x = amp.cast(input);
    seen.forward_autocast = amp::is_autocast_enabled(kCPU);
    seen.forward_input = x.dtype();
    ctx->save_for_backward({x});
    return x.mm(x.t());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    amp::custom_bwd amp(ctx);
    seen.backward_autocast = amp::is_autocast_enabled(kCPU);
    Tensor x = ctx->get_saved_variables()[0];
    Tensor g = grads[0].to(kFloat);
    seen.backward_grad = g.mm(x).dtype();
    return {g.mm(x) + g.t().mm(x)};
  }
};

struct NoDecorator : autograd::Function<NoDecorator> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return x * 2.0; }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    amp::custom_bwd amp(ctx);
    return {grads[0] * 2.0};
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(custom_functions)

BOOST_AUTO_TEST_CASE(custom_fwd_runs_under_the_callers_state) {
  manual_seed(5);
  Tensor a = randn({3, 4}).requires_grad_(), b = randn({4, 2}).requires_grad_();
  Tensor out;
  {
    amp::autocast region(kCPU);
    out = MyMM::apply(a.to(kBFloat16), b.to(kBFloat16));
  }
  BOOST_TEST(seen.forward_autocast);
  BOOST_TEST(out.dtype() == kBFloat16);
  out.to(kFloat).sum().backward();  // outside the region: custom_bwd re-enters forward's state
  BOOST_TEST(seen.backward_autocast);
  BOOST_TEST(seen.backward_grad == kBFloat16);
  BOOST_TEST(a.grad().dtype() == kFloat);
  Tensor want = ones({3, 2}).mm(b.to(kBFloat16).to(kFloat).t());
  BOOST_TEST(allclose(a.grad(), want, 2e-2, 2e-2));
}

BOOST_AUTO_TEST_CASE(custom_fwd_outside_a_region_records_autocast_off) {
  Tensor a = ones({2, 2}).requires_grad_();
  Tensor out = MyMM::apply(a, a);
  BOOST_TEST(!seen.forward_autocast);
  BOOST_TEST(out.dtype() == kFloat);
  out.sum().backward();
  BOOST_TEST(!seen.backward_autocast);
  BOOST_TEST(a.grad().sum().item<float>() == 16.0f);
}

BOOST_AUTO_TEST_CASE(cast_inputs_runs_forward_in_float32_without_autocast) {
  manual_seed(6);
  Tensor w = randn({3, 3}).requires_grad_();
  Tensor out;
  {
    amp::autocast region(kCPU);
    Tensor low = mm(w, w);  // bfloat16 activations reach the function
    BOOST_TEST(low.dtype() == kBFloat16);
    out = MyFloat32Func::apply(low);
    BOOST_TEST(amp::is_autocast_enabled(kCPU));  // restored after forward
  }
  BOOST_TEST(!seen.forward_autocast);
  BOOST_TEST(seen.forward_input == kFloat);
  BOOST_TEST(out.dtype() == kFloat);
  out.sum().backward();
  BOOST_TEST(!seen.backward_autocast);
  BOOST_TEST(seen.backward_grad == kFloat);
  BOOST_TEST(w.grad().dtype() == kFloat);
}

BOOST_AUTO_TEST_CASE(cast_inputs_outside_a_region_does_nothing) {
  Tensor x = ones({2, 2}, TensorOptions().dtype(kBFloat16));
  MyFloat32Func::apply(x);
  BOOST_TEST(seen.forward_input == kBFloat16);
}

BOOST_AUTO_TEST_CASE(custom_bwd_without_custom_fwd_is_an_error) {
  Tensor x = ones({2}).requires_grad_();
  Tensor y = NoDecorator::apply(x).sum();
  amp_test::check_error<Error>([&] { y.backward(); }, {"custom_bwd", "custom_fwd"});
}

BOOST_AUTO_TEST_SUITE_END()
