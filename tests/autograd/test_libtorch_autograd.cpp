// libtorch's autograd API shapes: hooks that return nothing, backward with `inputs`, grad's
// signature, anomaly mode, key_set() and the dispatch TLS queries, and the leaf/grad_fn/
// retain_grad shapes, each behaving as PyTorch 1.13 (the case says what torch gives).
#include "check_error.h"

#include <kiln/amp.h>
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using kiln::Tensor;
namespace ag = kiln::autograd;

namespace {
// A custom function that passes its input through and records how its gradient arrived.
struct Identity : ag::Function<Identity> {
  static Tensor forward(ag::AutogradContext*, Tensor x) { return x; }
  static ag::variable_list backward(ag::AutogradContext*, ag::variable_list grads) {
    seen = grads[0].defined() ? "zeros" : "undefined";
    if (grads[0].defined()) BOOST_TEST(grads[0].equal(kiln::zeros({1})));
    return grads;
  }
  static inline std::string seen;
};
// Collects the warnings of this thread while it lives.
struct WarningCollector : kiln::WarningHandler {
  WarningCollector() : guard(this) {}
  void process(const kiln::Warning& w) override { text += w.msg() + "\n"; }
  std::string text;
  kiln::WarningUtils::WarningHandlerGuard guard;
};
}  // namespace

BOOST_AUTO_TEST_SUITE(libtorch_autograd)

BOOST_AUTO_TEST_CASE(hooks_may_return_nothing) {
  Tensor x = kiln::tensor({1.0, 2.0}, kiln::requires_grad());
  Tensor y = x * 3;
  Tensor seen_leaf, seen_y;
  x.register_hook([&](const Tensor& g) { seen_leaf = g.clone(); });
  y.register_hook([&](Tensor g) { seen_y = g.clone(); });
  y.register_hook([](const Tensor& g) { return g * 2; });  // a hook with a result still replaces
  (y * y).sum().backward();
  // torch: y = 3x = [3, 6]; d(sum y^2)/dy = 2y = [6, 12], doubled by the second hook
  BOOST_TEST(seen_y.allclose(kiln::tensor({6.0, 12.0})));
  BOOST_TEST(seen_leaf.allclose(kiln::tensor({36.0, 72.0})));
  BOOST_TEST(x.grad().allclose(kiln::tensor({36.0, 72.0})));
}

BOOST_AUTO_TEST_CASE(backward_with_inputs_accumulates_only_into_them) {
  Tensor x = kiln::tensor({1.0, 2.0}, kiln::requires_grad());
  Tensor w = kiln::tensor({3.0, 4.0}, kiln::requires_grad());
  Tensor h = x * w;
  Tensor z = (h * h).sum();
  z.backward({}, /*retain_graph=*/true, /*create_graph=*/false, {x});
  // torch: dz/dx = 2 x w^2 = [18, 64]; w untouched
  BOOST_TEST(x.grad().allclose(kiln::tensor({18.0, 64.0})));
  BOOST_TEST(!w.grad().defined());
  z.backward({}, true, false, {{h, w}});  // a non-leaf input gets its .grad() too
  BOOST_TEST(h.grad().allclose(kiln::tensor({6.0, 16.0})));
  BOOST_TEST(w.grad().allclose(kiln::tensor({6.0, 32.0})));
  BOOST_TEST(x.grad().allclose(kiln::tensor({18.0, 64.0})));
  CHECK_ERROR(kiln::ValueError, z.backward({}, true, false, std::vector<Tensor>{}),
              "'inputs' argument to backward() cannot be empty");
  // torch::autograd::grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)
  Tensor unused = kiln::ones({1}, kiln::requires_grad());
  std::vector<Tensor> g = ag::grad({z}, {x, unused}, {}, true, false, /*allow_unused=*/true);
  BOOST_TEST(g[0].allclose(kiln::tensor({18.0, 64.0})));
  BOOST_TEST(!g[1].defined());
}

BOOST_AUTO_TEST_CASE(anomaly_mode_names_the_node_that_made_nan) {
  Tensor x = kiln::zeros({2}, kiln::requires_grad());
  BOOST_TEST(!ag::AnomalyMode::is_enabled());
  (kiln::sqrt(x) * 0).sum().backward();  // 0 / (2 sqrt(0)): NaN, unchecked
  BOOST_TEST(kiln::isnan(x.grad()).all().item<bool>());
  {
    ag::DetectAnomalyGuard detect;
    BOOST_TEST(ag::AnomalyMode::is_enabled());
    // torch: RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    CHECK_ERROR(kiln::Error, (kiln::sqrt(x) * 0).sum().backward(),
                "Function 'SqrtBackward0' returned nan values in its 0th output.");
    (kiln::sqrt(x + 1) * 0).sum().backward();  // finite gradients pass
    ag::AnomalyMode::set_enabled(true, /*check_nan=*/false);
    (kiln::sqrt(x) * 0).sum().backward();
  }
  BOOST_TEST(!ag::AnomalyMode::is_enabled());
  BOOST_TEST(ag::AnomalyMode::should_check_nan());
}

// kiln's dispatcher has three keys; key_set() says which of them a call on the tensor visits.
BOOST_AUTO_TEST_CASE(key_set_and_tls_queries_report_kilns_dispatcher) {
  using kiln::DispatchKey;
  namespace impl = kiln::impl;
  Tensor plain = kiln::ones({2});
  Tensor tracked = kiln::ones({2}, kiln::requires_grad());
  BOOST_TEST(plain.key_set().has(DispatchKey::Backend));
  BOOST_TEST(!plain.key_set().has(DispatchKey::Autograd));
  BOOST_TEST(tracked.key_set().has(DispatchKey::Autograd));
  BOOST_TEST(!tracked.key_set().has(DispatchKey::Autocast));
  {
    kiln::amp::autocast region(kiln::kCPU);
    BOOST_TEST(plain.key_set().has(DispatchKey::Autocast));
  }
  BOOST_TEST(!impl::tls_is_dispatch_keyset_excluded(kiln::autograd_dispatch_keyset));
  {
    kiln::NoGradGuard no_grad;
    BOOST_TEST(impl::tls_is_dispatch_key_excluded(DispatchKey::Autograd));
  }
  {
    kiln::InferenceMode guard;
    BOOST_TEST(impl::tls_is_dispatch_keyset_excluded(kiln::autograd_dispatch_keyset));
    BOOST_TEST(!impl::tls_is_dispatch_keyset_included(kiln::autograd_dispatch_keyset));
    {
      kiln::InferenceMode off(false);
      BOOST_TEST(!impl::tls_is_dispatch_keyset_excluded(kiln::autograd_dispatch_keyset));
    }
  }
  {
    kiln::IncludeDispatchKeyGuard include(DispatchKey::Autocast);
    BOOST_TEST(impl::tls_is_dispatch_key_included(DispatchKey::Autocast));
  }
  BOOST_TEST(!impl::tls_is_dispatch_key_included(DispatchKey::Autocast));
}

BOOST_AUTO_TEST_CASE(leaf_grad_fn_and_retain_grad_shapes) {
  Tensor x = kiln::tensor({5.0}, kiln::requires_grad());
  Tensor y = x * x;
  BOOST_TEST(x.is_leaf());
  BOOST_TEST(!y.is_leaf());
  BOOST_TEST(y.grad_fn()->name() == "MulBackward0");
  BOOST_TEST(x.output_nr() == 0u);
  y.retain_grad();
  BOOST_TEST(y.retains_grad());
  y.backward();
  BOOST_TEST(y.grad().item<double>() == 1.0);
  BOOST_TEST(x.grad().item<double>() == 10.0);
  CHECK_ERROR(kiln::Error, y.requires_grad_(false),
              "you can only change requires_grad flags of leaf variables.");
  const Tensor z = kiln::tensor({5.0});
  BOOST_TEST(z.requires_grad_().requires_grad());
  const Tensor& detached = y.detach_();
  BOOST_TEST(detached.is_leaf());
  BOOST_TEST(!y.requires_grad());
}

BOOST_AUTO_TEST_CASE(remove_hook_disables_one_hook) {
  // torch: removing the first of two hooks on a leaf and on a non-leaf leaves the second
  Tensor x = kiln::tensor({1.0, 2.0}, kiln::requires_grad());
  unsigned doubled = x.register_hook([](const Tensor& g) { return g * 2; });
  int seen = 0;
  x.register_hook([&seen](const Tensor&) { ++seen; });
  Tensor y = x * 3;
  unsigned tripled = y.register_hook([](const Tensor& g) { return g * 3; });
  unsigned plus_one = y.register_hook([](const Tensor& g) { return g + 1; });
  x.remove_hook(doubled);
  y.remove_hook(tripled);
  y.sum().backward();
  BOOST_TEST(x.grad().equal(kiln::tensor({6.0, 6.0})));  // (1 + 1) * 3, no doubling or tripling
  BOOST_TEST(seen == 1);
  CHECK_ERROR(kiln::IndexError, x.remove_hook(doubled), "Invalid index, no hook at position 0");
  CHECK_ERROR(kiln::IndexError, y.remove_hook(7), "no hook at position 7");
  Tensor z = x * 2;  // another output of another node: y's index is not z's hook
  CHECK_ERROR(kiln::IndexError, z.remove_hook(plus_one), "no hook at position 1");
}

BOOST_AUTO_TEST_CASE(post_accumulate_grad_hook_sees_the_accumulated_grad) {
  // PyTorch's Tensor.register_post_accumulate_grad_hook: the hook gets the leaf after its grad
  // was accumulated (pre-hooks first), once per accumulation, in registration order.
  Tensor x = kiln::tensor({1.0, 2.0}, kiln::requires_grad());
  x.register_hook([](const Tensor& g) { return g * 2; });  // runs before accumulation
  std::vector<std::string> seen;
  unsigned first = ag::register_post_accumulate_grad_hook(x, [&seen](const Tensor& p) {
    seen.push_back("first " + std::to_string(p.grad().sum().item<double>()));
  });
  ag::register_post_accumulate_grad_hook(x, [&seen](const Tensor& p) {
    seen.push_back("second " + std::to_string(p.grad().sum().item<double>()));
    p.grad().mul_(10);  // may change the accumulated gradient in place
  });
  (x * 3).sum().backward();
  BOOST_TEST(seen.size() == 2u);
  BOOST_TEST(seen[0] == "first 12.000000");  // 2 * 3 per element
  BOOST_TEST(seen[1] == "second 12.000000");
  BOOST_TEST(x.grad().equal(kiln::tensor({60.0, 60.0})));
  ag::remove_post_accumulate_grad_hook(x, first);
  (x * 1).sum().backward();  // accumulates 2 into 60, then the second hook multiplies by 10
  BOOST_TEST(seen.size() == 3u);
  BOOST_TEST(seen[2] == "second 124.000000");
  BOOST_TEST(x.grad().equal(kiln::tensor({620.0, 620.0})));
  // backward(inputs=...) accumulates too, and runs the hooks
  x.mutable_grad() = Tensor();
  kiln::autograd::backward({(x * 1).sum()}, {}, std::nullopt, false, {x});
  BOOST_TEST(seen.size() == 4u);
  // the hook does not run when no gradient reaches the leaf
  Tensor unused = kiln::ones({2}, kiln::requires_grad());
  int calls = 0;
  ag::register_post_accumulate_grad_hook(unused, [&calls](const Tensor&) { ++calls; });
  (x * 2).sum().backward();
  BOOST_TEST(calls == 0);

  CHECK_ERROR(kiln::IndexError, ag::remove_post_accumulate_grad_hook(x, first),
              "no hook at position 0");
  CHECK_ERROR(kiln::Error, ag::register_post_accumulate_grad_hook(x * 2, [](const Tensor&) {}),
              "cannot be registered on non-leaf tensors (this one was made by MulBackward0)");
  CHECK_ERROR(kiln::Error,
              ag::register_post_accumulate_grad_hook(kiln::ones({2}), [](const Tensor&) {}),
              "doesn't require gradient");
}

BOOST_AUTO_TEST_CASE(undefined_grad_and_make_variable) {
  // torch (CustomAutogradTest.MaterializeGrads): a custom function under UndefinedGrad sees a
  // zero gradient (materialized by default).
  Tensor x = kiln::ones({1}, kiln::requires_grad());
  std::vector<Tensor> out = ag::UndefinedGrad().apply({Identity::apply(x)});
  BOOST_TEST(out[0].grad_fn()->name() == "UndefinedGradBackward");
  out[0].backward();
  BOOST_TEST(Identity::seen == "zeros");
  BOOST_TEST(x.grad().equal(kiln::zeros({1})));
  std::vector<Tensor> none = ag::UndefinedGrad().apply({kiln::ones({2}), Tensor()});
  BOOST_TEST((none[0].grad_fn() == nullptr && !none[1].defined()));

  Tensor data = kiln::ones({3});
  Tensor v = ag::make_variable(data, /*requires_grad=*/true);
  BOOST_TEST((v.requires_grad() && v.is_leaf() && v.is_same_storage(data)));
  BOOST_TEST(!ag::make_variable(data).requires_grad());
}

// PyTorch 1.13 moves the retained gradient to the tensor's newest version on an in-place change;
// hooks registered before the change stay with the old version.
BOOST_AUTO_TEST_CASE(retain_grad_follows_in_place_changes) {
  for (int changes : {1, 2}) {
    Tensor a = kiln::ones({2, 2}, kiln::requires_grad()).clone();
    Tensor before, after;
    a.register_hook([&](const Tensor& g) { before = g.clone(); });
    a.retain_grad();
    for (int i = 0; i < changes; ++i) a.mul_(2);
    a.register_hook([&](const Tensor& g) { after = g.clone(); });
    (a + 1).sum().backward();
    // torch: a.grad is ones (the newest version's); the old version's hook saw 2^changes
    BOOST_TEST(a.retains_grad());
    BOOST_TEST(a.grad().equal(kiln::ones({2, 2})));
    BOOST_TEST(after.equal(kiln::ones({2, 2})));
    BOOST_TEST(before.equal(kiln::full({2, 2}, changes == 1 ? 2.0 : 4.0)));
  }
}

BOOST_AUTO_TEST_CASE(grad_needs_inputs_and_names_allow_unused_as_pytorch) {
  Tensor x = kiln::ones({1}, kiln::requires_grad());
  // torch: RuntimeError: grad requires non-empty inputs.
  CHECK_ERROR(kiln::ValueError, ag::grad({x * 2}, {}, {x}), "grad requires non-empty inputs.");
  Tensor unused = kiln::ones({1}, kiln::requires_grad());
  CHECK_ERROR(kiln::Error, ag::grad({x * 2}, {x, unused}, {}, std::nullopt, false, false),
              "Set allow_unused=True");
}

BOOST_AUTO_TEST_CASE(reading_grad_of_a_non_leaf_warns) {
  Tensor x = kiln::rand({1, 3}, kiln::requires_grad());
  Tensor h = x * 3;
  {
    WarningCollector warnings;
    BOOST_TEST(!h.grad().defined());
    BOOST_TEST(warnings.text.find("is not a leaf") != std::string::npos);
  }
  {
    WarningCollector warnings;  // leaves and tensors that retain their gradient: no warning
    BOOST_TEST(!x.grad().defined());
    h.retain_grad();
    BOOST_TEST(!h.grad().defined());
    BOOST_TEST(warnings.text.empty());
  }
}

BOOST_AUTO_TEST_CASE(backward_with_create_graph_warns_of_the_cycle) {
  kiln::WarningUtils::WarnAlways always;
  Tensor x = kiln::randn({3}).set_requires_grad(true);
  Tensor z = x * x;
  {
    WarningCollector warnings;
    z.backward(kiln::ones({3}), std::nullopt, /*create_graph=*/true);
    BOOST_TEST(warnings.text.find("Using backward() with create_graph=True") != std::string::npos);
  }
  {
    WarningCollector warnings;  // grad() accumulates nothing: no cycle, no warning
    ag::grad({z}, {x}, {kiln::ones({3})}, true, /*create_graph=*/true);
    BOOST_TEST(warnings.text.empty());
  }
}

BOOST_AUTO_TEST_CASE(anomaly_mode_shows_where_the_failing_node_was_made) {
  ag::DetectAnomalyGuard detect;
  Tensor x = kiln::tensor({5.0}, kiln::requires_grad());
  Tensor y = x * x;
  Tensor z = y * y;
  y += 1;
  WarningCollector warnings;
  CHECK_ERROR(kiln::Error, z.backward(), "modified by an inplace operation");
  // torch warns "Error detected in MulBackward0. Traceback of forward call that caused the
  // error:" followed by the stack of the call that made the node
  BOOST_TEST(warnings.text.find("Error detected in MulBackward0. Traceback of forward call") !=
             std::string::npos);
  BOOST_TEST(warnings.text.find("#0 ") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_custom_function_takes_a_tensor_list) {
  struct Combine : ag::Function<Combine> {
    static Tensor forward(ag::AutogradContext* ctx, kiln::TensorList tensors) {
      ctx->save_for_backward(tensors.vec());
      return tensors[0] + tensors[1] + tensors[0] * tensors[1];
    }
    static ag::variable_list backward(ag::AutogradContext* ctx, ag::variable_list g) {
      auto saved = ctx->get_saved_variables();
      return {g[0] + g[0] * saved[1], g[0] + g[0] * saved[0]};
    }
  };
  Tensor x = kiln::randn({2, 2}, kiln::requires_grad());
  Tensor y = kiln::randn({2, 2}, kiln::requires_grad());
  std::vector<Tensor> both = {x, y};
  Tensor r = Combine::apply(kiln::TensorList(both));
  BOOST_TEST(r.requires_grad());
  r.sum().backward();
  BOOST_TEST(x.grad().allclose(y + 1));
  BOOST_TEST(y.grad().allclose(x + 1));
}

BOOST_AUTO_TEST_SUITE_END()
