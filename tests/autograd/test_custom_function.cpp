// Custom autograd functions (kiln::autograd::Function<T>).
#include <kiln/custom_function.h>
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

using kiln::Tensor;
using kiln::autograd::AutogradContext;
using kiln::autograd::variable_list;

namespace {

struct MulConstant : kiln::autograd::Function<MulConstant> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double c) {
    ctx->saved_data["c"] = c;
    return x * c;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0] * ctx->saved_data["c"].toDouble(), Tensor()};
  }
};

// y = x * w with both saved; checks needs_input_grad.
struct Product : kiln::autograd::Function<Product> {
  static Tensor forward(AutogradContext* ctx, Tensor x, Tensor w) {
    ctx->save_for_backward({x, w});
    return x * w;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    Tensor gx = ctx->needs_input_grad(0) ? grads[0] * saved[1] : Tensor();
    Tensor gw = ctx->needs_input_grad(1) ? grads[0] * saved[0] : Tensor();
    return {gx, gw};
  }
};

// Doubles x in place and returns it (mark_dirty), plus a non-differentiable mask.
struct DoubleInPlace : kiln::autograd::Function<DoubleInPlace> {
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2);
    Tensor mask = x > 2;
    ctx->mark_dirty({x});
    ctx->mark_non_differentiable({mask});
    return {x, mask};
  }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0] * 2}; }
};

struct WrongCount : kiln::autograd::Function<WrongCount> {
  static Tensor forward(AutogradContext*, Tensor x, Tensor y) { return x + y; }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0]}; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(custom_function)

BOOST_AUTO_TEST_CASE(saved_data_and_the_node_name) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor y = MulConstant::apply(x, 3.0);
  BOOST_TEST(y.grad_fn()->name() == "MulConstantBackward");
  y.sum().backward();
  BOOST_TEST(x.grad().allclose(kiln::tensor({3.0, 3.0})));
}

BOOST_AUTO_TEST_CASE(save_for_backward_and_needs_input_grad) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor w = kiln::tensor({5.0, 7.0});
  Product::apply(x, w).sum().backward();
  BOOST_TEST(x.grad().allclose(w));
  // the custom function composes with built-in operators, also for second derivatives
  Tensor z = kiln::tensor({3.0}).requires_grad_();
  Tensor g = kiln::autograd::grad({Product::apply(z, z * z).sum()}, {z}, {}, std::nullopt, true)[0];
  BOOST_TEST(g.item<double>() == 27.0);  // d(z^3)/dz
}

BOOST_AUTO_TEST_CASE(mark_dirty_and_non_differentiable_outputs) {
  Tensor leaf = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor x = leaf * 1;  // a non-leaf may be modified in place
  variable_list out = DoubleInPlace::apply(x);
  BOOST_TEST(out[0].is_same(x));
  BOOST_TEST(!out[1].requires_grad());
  out[0].sum().backward();
  BOOST_TEST(leaf.grad().allclose(kiln::tensor({2.0, 2.0})));
  BOOST_CHECK_THROW(DoubleInPlace::apply(leaf), kiln::Error);  // a leaf that requires grad
}

BOOST_AUTO_TEST_CASE(wrong_number_of_gradients) {
  Tensor x = kiln::tensor({1.0}).requires_grad_();
  BOOST_CHECK_EXCEPTION(WrongCount::apply(x, x).sum().backward(), kiln::Error,
                        [](const kiln::Error& e) {
                          return std::string(e.what()).find("incorrect number of gradients") !=
                                 std::string::npos;
                        });
}

BOOST_AUTO_TEST_CASE(no_graph_without_grad) {
  Tensor x = kiln::tensor({1.0});
  Tensor y = MulConstant::apply(x, 2.0);
  BOOST_TEST(!y.requires_grad());
  BOOST_TEST(y.item<double>() == 2.0);
}

BOOST_AUTO_TEST_SUITE_END()
