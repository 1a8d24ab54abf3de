// The rules every in-place operator and every view follows, as PyTorch's (Note [Every in-place
// operator has an Autograd kernel], Note [Views made without recording]): history rebased or the
// call refused, leaves protected, versions counted from 0, inference tensors read-only outside
// InferenceMode. The gradients of the in-place fills against PyTorch's numbers are the
// inplace_fill* cases of test_grad_golden.cpp (tests/golden/make_grad_golden.py).
#include <kiln/custom_function.h>
#include <kiln/dispatch.h>
#include <kiln/kiln.h>
#include <kiln/profiler.h>

#include "check_error.h"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

using kiln::Tensor;

namespace {

// Every element of t equals v.
bool all_equal(const Tensor& t, float v) { return (t - v).abs().sum().item<float>() == 0; }

Tensor backend_only(const kiln::Operator<Tensor(const Tensor&)>&, const Tensor& self) {
  return self;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inplace_rules)

BOOST_AUTO_TEST_CASE(every_inplace_operator_has_an_autograd_kernel) {
  int inplace = 0;
  for (const kiln::OperatorBase* op : kiln::all_operators()) {
    if (!op->is_inplace()) continue;
    ++inplace;
    BOOST_CHECK_MESSAGE(op->has_layer(kiln::DispatchKey::Autograd),
                        op->name() << " writes in place but has no Autograd kernel");
  }
  BOOST_CHECK_GT(inplace, 20);  // add_, mul_, exp_, ..., copy_, fill_, uniform_, ...
}

BOOST_AUTO_TEST_CASE(an_inplace_operator_without_formula_is_refused) {
  kiln::Operator<Tensor(const Tensor&)> op("test_touch_",
                                           "test_touch_(Tensor(a!) self) -> "
                                           "Tensor(a!)",
                                           backend_only);
  BOOST_CHECK(op.is_inplace());
  Tensor w = kiln::ones({3}).requires_grad_();
  Tensor y = w * 2;
  CHECK_ERROR(kiln::NotImplementedError, op(y),
              "test_touch_: this in-place operator has no "
              "derivative formula");
  kiln::NoGradGuard no_grad;
  BOOST_CHECK(op(y).is_same(y));  // nothing to record
}

BOOST_AUTO_TEST_CASE(fill_rebases_the_history) {
  // the example: PyTorch gives w.grad = 2.5 (the stale history gave w + 2.5)
  Tensor w = kiln::tensor({1.0f, -2.0f, 3.0f}).requires_grad_();
  Tensor y = w * 1;
  y.fill_(2.5);
  BOOST_CHECK(y.requires_grad());
  BOOST_CHECK_EQUAL(y.grad_fn()->name(), "FillBackward0");
  (y * w).sum().backward();
  BOOST_CHECK(all_equal(w.grad(), 2.5f));
}

BOOST_AUTO_TEST_CASE(zero_and_scalar_index_put_rebase_the_history) {
  Tensor w = kiln::tensor({1.0f, -2.0f, 3.0f}).requires_grad_();
  Tensor y = w * 3;
  y.zero_();
  (y + w).sum().backward();
  BOOST_CHECK(all_equal(w.grad(), 1.0f));

  Tensor v = kiln::tensor({1.0f, 2.0f, 3.0f, 4.0f}).requires_grad_();
  Tensor b = v * 2;
  b.index_put_({kiln::indexing::Slice(1, 3)}, 7.0);
  b.sum().backward();
  BOOST_CHECK(v.grad().equal(kiln::tensor({2.0f, 0.0f, 0.0f, 2.0f})));
}

BOOST_AUTO_TEST_CASE(random_fills_rebase_the_history) {
  for (int which = 0; which < 3; ++which) {
    Tensor w = kiln::tensor({1.0f, -2.0f, 3.0f, 0.5f}).requires_grad_();
    Tensor y = w * 1;
    if (which == 0) y.uniform_(-1, 1);
    if (which == 1) y.normal_();
    if (which == 2) y.random_(0, 5);
    (y * w).sum().backward();
    // d/dw of y * w with y no longer a function of w: y itself
    BOOST_CHECK_MESSAGE(w.grad().equal(y.detach()), "case " << which);
  }
}

BOOST_AUTO_TEST_CASE(fills_of_a_leaf_that_requires_grad_are_refused) {
  Tensor w = kiln::ones({3}).requires_grad_();
  CHECK_ERROR(kiln::Error, w.fill_(2), "fill_: a leaf Variable that requires grad");
  CHECK_ERROR(kiln::Error, w.zero_(), "fill_: a leaf Variable that requires grad");
  CHECK_ERROR(kiln::Error, w.uniform_(), "uniform_: a leaf Variable that requires grad");
  CHECK_ERROR(kiln::Error, w.narrow(0, 0, 2).fill_(1), "a view of a leaf Variable");
  BOOST_CHECK(all_equal(w, 1.0f));
  kiln::NoGradGuard no_grad;  // as PyTorch: allowed without grad mode (an initializer)
  w.fill_(2);
  BOOST_CHECK(all_equal(w, 2.0f));
}

BOOST_AUTO_TEST_CASE(a_view_made_without_grad_keeps_its_link_to_the_base) {
  Tensor w = kiln::ones({2, 3}).requires_grad_();
  Tensor v;
  {
    kiln::NoGradGuard no_grad;
    v = w[0];
  }
  BOOST_CHECK(v.requires_grad());  // PyTorch: True
  BOOST_CHECK(v.grad_fn() == nullptr);
  CHECK_ERROR(kiln::Error, v.add_(1),
              "add_: A view was created in no_grad mode and is being "
              "modified inplace with grad mode enabled",
              "both inside the no_grad block");
  BOOST_CHECK(all_equal(w, 1.0f));
  // no gradient flows through it into w
  (v * 2).sum().backward();
  BOOST_CHECK(!w.grad().defined());
  {
    kiln::NoGradGuard no_grad;
    v.add_(1);  // both inside no_grad: allowed, not tracked
  }
  BOOST_CHECK_EQUAL(w.sum().item<float>(), 9.0f);
  // its history after the base changed in place
  Tensor b = w * 1;
  Tensor bv;
  {
    kiln::NoGradGuard no_grad;
    bv = b[1];
  }
  b.mul_(2);
  CHECK_ERROR(kiln::Error, bv.grad_fn(),
              "A view was created in no_grad mode and its base or "
              "another view of its base has been modified inplace");
}

BOOST_AUTO_TEST_CASE(undefined_gradients_stay_undefined) {
  struct NoGrad : kiln::autograd::Function<NoGrad> {
    static Tensor forward(kiln::autograd::AutogradContext*, Tensor x) { return x * 2; }
    static kiln::autograd::variable_list backward(kiln::autograd::AutogradContext*,
                                                  kiln::autograd::variable_list) {
      return {Tensor()};
    }
  };
  Tensor x = kiln::ones({3}).requires_grad_();
  Tensor h = x * 3;  // a built-in node between the leaf and the function
  NoGrad::apply(h).sum().backward();
  BOOST_CHECK(!x.grad().defined());  // PyTorch: None (no zeros passed upstream)
}

BOOST_AUTO_TEST_CASE(new_tensors_start_at_version_0) {
  Tensor w = kiln::ones({3}).requires_grad_();
  for (const Tensor& t :
       {kiln::zeros({3}), kiln::ones({3}), kiln::full({3}, 2.0), kiln::rand({3}), kiln::randn({3}),
        kiln::randint(5, {3}), kiln::arange(3), kiln::tensor({1.0f, 2.0f}), kiln::eye(3),
        kiln::zeros({3}).clone(), kiln::ones({3}).to(kiln::kDouble), w * 2}) {
    BOOST_CHECK_EQUAL(t._version(), 0u);
  }
  Tensor t = kiln::zeros({3});
  t.add_(1);
  t[0].fill_(3);
  BOOST_CHECK_EQUAL(t._version(), 2u);
  // a saved tensor changed in place: the error names PyTorch's versions
  Tensor a = w * 1;
  Tensor out = a * w;  // saves a at version 0
  a.add_(1);
  CHECK_ERROR(kiln::Error, out.sum().backward(), "is at version 1; expected version 0 instead");
}

BOOST_AUTO_TEST_CASE(mark_dirty_bumps_the_version) {
  // changes x through its data pointer, so only mark_dirty tells autograd (PyTorch's MarkDirty)
  struct SetFirst : kiln::autograd::Function<SetFirst> {
    static Tensor forward(kiln::autograd::AutogradContext* ctx, Tensor x) {
      static_cast<float*>(x.data_ptr())[0] = 2;
      ctx->mark_dirty({x});
      return x;
    }
    static kiln::autograd::variable_list backward(kiln::autograd::AutogradContext*,
                                                  kiln::autograd::variable_list g) {
      return {g[0] * 2};
    }
  };
  Tensor x = kiln::randn({5, 5}).requires_grad_().clone();
  uint32_t before = x._version();
  Tensor out = SetFirst::apply(x);
  BOOST_CHECK_GE(x._version(), before + 1);
  out.sum().backward();
}

BOOST_AUTO_TEST_CASE(to_with_requires_grad_is_refused) {
  Tensor t = kiln::ones({2});
  CHECK_ERROR(kiln::Error, t.to(kiln::TensorOptions().requires_grad(true)),
              "to(options) expects unset requires_grad flag");
  BOOST_CHECK_EQUAL(t.to(kiln::TensorOptions().dtype(kiln::kDouble)).dtype(), kiln::kDouble);
}

BOOST_AUTO_TEST_CASE(inference_tensors_outside_inference_mode) {
  Tensor inf;
  Tensor w = kiln::ones({2, 2}).requires_grad_();
  Tensor base = w * 2;
  Tensor view_made_inside;
  {
    kiln::InferenceMode guard;
    inf = kiln::ones({2, 2});
    inf.add_(1);  // inside: allowed
    view_made_inside = base[0];
  }
  CHECK_ERROR(kiln::Error, inf.add_(1),
              "add_: Inplace update to inference tensor outside "
              "InferenceMode is not allowed");
  CHECK_ERROR(kiln::Error, inf.fill_(0), "fill_: Inplace update to inference tensor");
  CHECK_ERROR(kiln::Error, inf[0].mul_(2), "mul_: Inplace update to inference tensor");
  CHECK_ERROR(kiln::Error, inf.requires_grad_(),
              "Setting requires_grad=True on inference "
              "tensor outside InferenceMode is not allowed");
  BOOST_CHECK(all_equal(inf, 2.0f));
  BOOST_CHECK(inf[0].is_inference());             // a view of an inference tensor is one
  BOOST_CHECK(!view_made_inside.is_inference());  // a view of a normal tensor is normal
  BOOST_CHECK(view_made_inside.requires_grad());
  base.mul_(3);  // outside, with grad: the view made inside cannot follow
  CHECK_ERROR(kiln::Error, view_made_inside.grad_fn(),
              "A view was created in inference mode "
              "and its base or another view of its base has been modified inplace in normal "
              "mode");
  CHECK_ERROR(kiln::Error, view_made_inside.add_(1),
              "A view was created in inference mode "
              "and is being modified inplace in normal mode");
}

// Note [In-place without a copy]: relu_ and add_ on a non-leaf run in place (no clone of self,
// no copy back); their gradients are the golden inplace_* cases of test_grad_golden.cpp.
BOOST_AUTO_TEST_CASE(inplace_arithmetic_runs_in_place_under_grad) {
  Tensor x = kiln::randn({4, 5}).requires_grad_();
  Tensor s = kiln::randn({5});
  Tensor y = x * 2;
  const void* data = y.data_ptr();
  std::vector<std::string> calls;
  {
    kiln::profiler::Profile profile;
    y.add_(s);
    y.relu_();
    kiln::profiler::KeyAverages averages = profile.key_averages();
    for (const auto& row : averages.rows()) calls.push_back(row.key);
  }
  // the in-place calls themselves (add_ broadcasts s with expand), no copy of y and no
  // out-of-place add or relu
  for (const char* name : {"copy_", "clone", "add", "relu"}) {
    BOOST_TEST(std::count(calls.begin(), calls.end(), name) == 0, name << " was called");
  }
  BOOST_TEST(std::count(calls.begin(), calls.end(), "relu_") == 1);
  BOOST_TEST(y.data_ptr() == data);
  BOOST_TEST(y.grad_fn()->name() == "ReluBackward0");
  y.sum().backward();
  Tensor expected = ((x.detach() * 2 + s) > 0).to(kiln::kFloat) * 2;
  BOOST_TEST(kiln::equal(x.grad(), expected));
}

// The version rules hold on that path as PyTorch's: relu_ saves its result (self), so changing
// it again breaks the first node; sin saved its input, which relu_ then changes.
BOOST_AUTO_TEST_CASE(inplace_without_a_copy_keeps_the_version_rules) {
  Tensor x = kiln::randn({3}).requires_grad_();
  Tensor y = x * 1;
  y.relu_();
  y.add_(1);
  CHECK_ERROR(kiln::Error, y.sum().backward(), "modified by an inplace operation");
  Tensor z = x * 1;
  Tensor w = z.sin();
  z.relu_();
  CHECK_ERROR(kiln::Error, w.sum().backward(), "is at version 1; expected version 0");
  Tensor leaf = kiln::randn({3}).requires_grad_();
  CHECK_ERROR(kiln::Error, leaf.relu_(), "a leaf Variable that requires grad");
}

BOOST_AUTO_TEST_CASE(a_missing_gradient_says_why) {
  Tensor x = kiln::ones({2, 3});
  Tensor w = kiln::ones({2, 3}).requires_grad_();
  Tensor h = w * 2;
  CHECK_ERROR(kiln::Error, x.grad().sum(), "float32[2, 3]", "it does not require grad");
  CHECK_ERROR(kiln::Error, h.grad().sum(), "it is not a leaf", "retain_grad()");
  CHECK_ERROR(kiln::Error, w.grad().sum(), "no backward() has reached it yet");
}

BOOST_AUTO_TEST_SUITE_END()
