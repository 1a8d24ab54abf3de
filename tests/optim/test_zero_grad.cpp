// zero_grad, step with a closure, param groups added later, and parameters without gradients.
#include "optim_test.h"

#include <kiln/optim.h>

using namespace kiln;
using namespace kiln::optim;

BOOST_AUTO_TEST_SUITE(zero_grad_and_step)

BOOST_AUTO_TEST_CASE(set_to_none_by_default) {
  Tensor a = ones({2}).requires_grad_();
  Tensor b = ones({3}).requires_grad_();
  SGD opt({a, b}, SGDOptions(0.1));
  (a.sum() * 2 + b.sum()).backward();
  BOOST_REQUIRE(a.grad().defined() && b.grad().defined());
  opt.zero_grad();
  BOOST_CHECK(!a.grad().defined());
  BOOST_CHECK(!b.grad().defined());
  opt.zero_grad();  // nothing to clear: no error
}

BOOST_AUTO_TEST_CASE(zeroed_in_place_when_not_set_to_none) {
  Tensor a = ones({2}).requires_grad_();
  Tensor b = ones({3}).requires_grad_();  // never gets a gradient
  SGD opt({a, b}, SGDOptions(0.1));
  (a * 3).sum().backward();
  Tensor grad = a.grad();
  opt.zero_grad(/*set_to_none=*/false);
  BOOST_CHECK(a.grad().is_same(grad));  // the same tensor, zeroed
  BOOST_CHECK(a.grad().equal(zeros({2})));
  BOOST_CHECK(!b.grad().defined());
  // The next backward accumulates into the zeroed gradient.
  (a * 5).sum().backward();
  BOOST_CHECK(a.grad().equal(full({2}, 5.0f)));
}

BOOST_AUTO_TEST_CASE(gradient_with_history_is_detached_then_zeroed) {
  Tensor a = full({2}, 3.0f).requires_grad_();
  SGD opt({a}, SGDOptions(0.1));
  (a * a).sum().backward({}, /*retain_graph=*/true, /*create_graph=*/true);
  BOOST_REQUIRE(a.grad().grad_fn() != nullptr);
  opt.zero_grad(false);
  BOOST_CHECK(a.grad().grad_fn() == nullptr);
  BOOST_CHECK(!a.grad().requires_grad());
  BOOST_CHECK(a.grad().equal(zeros({2})));
}

BOOST_AUTO_TEST_CASE(step_skips_parameters_without_gradient) {
  Tensor a = ones({2}).requires_grad_();
  Tensor b = ones({2}).requires_grad_();
  Adam opt({a, b}, AdamOptions(0.1));
  a.mutable_grad() = ones({2});
  opt.step();
  BOOST_CHECK(!a.equal(ones({2})));
  BOOST_CHECK(b.equal(ones({2})));
  OptimizerStateDict dict = opt.state_dict();
  BOOST_CHECK_EQUAL(dict.state.size(), 1u);  // only a has state
  BOOST_CHECK(dict.state.count(0));
}

BOOST_AUTO_TEST_CASE(step_runs_the_closure_with_grad_enabled) {
  Tensor w = full({1}, 2.0f).requires_grad_();
  SGD opt({w}, SGDOptions(0.25));
  int calls = 0;
  NoGradGuard no_grad;  // the closure still records its graph
  Tensor loss = opt.step([&] {
    ++calls;
    opt.zero_grad();
    Tensor l = (w * w).sum();
    l.backward();
    return l;
  });
  BOOST_CHECK_EQUAL(calls, 1);
  BOOST_CHECK_EQUAL(loss.item<float>(), 4.0f);
  BOOST_CHECK_EQUAL(w.item<float>(), 1.0f);  // 2 - 0.25 * 4
  BOOST_CHECK(!opt.step().defined());        // no closure, no loss
}

BOOST_AUTO_TEST_CASE(step_does_not_record_a_graph) {
  Tensor w = ones({2}).requires_grad_();
  SGD opt({w}, SGDOptions(0.1).momentum(0.9));
  w.mutable_grad() = ones({2});
  opt.step();
  BOOST_CHECK(w.is_leaf());
  BOOST_CHECK(w.grad_fn() == nullptr);
  BOOST_CHECK(!opt.state_dict().state.at(0).at("momentum_buffer").requires_grad());
}

BOOST_AUTO_TEST_CASE(added_group_takes_defaults_or_its_options) {
  Tensor a = ones({1}).requires_grad_();
  Tensor b = ones({1}).requires_grad_();
  Tensor c = ones({1}).requires_grad_();
  SGD opt({a}, SGDOptions(0.5).momentum(0.9));
  opt.add_param_group(OptimizerParamGroup({b}));
  opt.add_param_group(OptimizerParamGroup({c}, std::make_unique<SGDOptions>(0.25)));
  BOOST_REQUIRE_EQUAL(opt.param_groups().size(), 3u);
  auto& second = static_cast<SGDOptions&>(opt.param_groups()[1].options());
  auto& third = static_cast<SGDOptions&>(opt.param_groups()[2].options());
  BOOST_CHECK_EQUAL(second.lr(), 0.5);
  BOOST_CHECK_EQUAL(second.momentum(), 0.9);
  BOOST_CHECK_EQUAL(third.lr(), 0.25);
  BOOST_CHECK_EQUAL(third.momentum(), 0.0);
  BOOST_CHECK_EQUAL(opt.size(), 3u);
  BOOST_CHECK_EQUAL(opt.parameters().size(), 3u);
  // Changing a group's options does not change the defaults.
  second.lr(1.0);
  BOOST_CHECK_EQUAL(opt.defaults().get_lr(), 0.5);
  for (Tensor* p : {&a, &b, &c}) p->mutable_grad() = ones({1});
  opt.step();
  BOOST_CHECK_EQUAL(a.item<float>(), 0.5f);
  BOOST_CHECK_EQUAL(b.item<float>(), 0.0f);
  BOOST_CHECK_EQUAL(c.item<float>(), 0.75f);
}

BOOST_AUTO_TEST_CASE(libtorch_style_options) {
  Tensor w = ones({3}).requires_grad_();
  Adam adam({w}, AdamOptions(1e-3).betas({0.9, 0.999}).eps(1e-8).weight_decay(0).amsgrad(false));
  SGD sgd({w.detach().clone().requires_grad_()},
          SGDOptions(0.1).momentum(0.9).dampening(0).nesterov(true).weight_decay(1e-4));
  AdamW adamw({w.detach().clone().requires_grad_()}, AdamWOptions(1e-3));
  BOOST_CHECK_EQUAL(static_cast<AdamWOptions&>(adamw.defaults()).weight_decay(), 1e-2);
  BOOST_CHECK_EQUAL(static_cast<AdamOptions&>(adam.defaults()).weight_decay(), 0.0);
  BOOST_CHECK_EQUAL(std::get<1>(static_cast<AdamOptions&>(adam.defaults()).betas()), 0.999);
  BOOST_CHECK(static_cast<SGDOptions&>(sgd.defaults()).nesterov());
}

BOOST_AUTO_TEST_SUITE_END()
