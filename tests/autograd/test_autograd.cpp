// The autograd engine: backward, grad, their errors, higher-order gradients, hooks, grad modes,
// and memory over many steps.
#define BOOST_TEST_MODULE autograd
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <limits>
#include <string>
#include <unistd.h>

using kiln::Tensor;
namespace ag = kiln::autograd;

namespace {

bool message_has(const std::exception& e, const std::string& text) {
  bool found = std::string(e.what()).find(text) != std::string::npos;
  if (!found) BOOST_TEST_MESSAGE("message was: " << e.what());
  return found;
}

bool close(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  bool ok = a.sizes().equals(b.sizes()) && a.allclose(b.to(a.dtype()), tol, tol);
  if (!ok) BOOST_TEST_MESSAGE("got " << a << "\nexpected " << b);
  return ok;
}

long resident_kib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

}  // namespace

BOOST_AUTO_TEST_CASE(seed_derivative_of_minus_x_squared) {
  Tensor x = kiln::tensor(1.0, kiln::requires_grad(true));
  Tensor g = ag::grad({-(x * x)}, {x})[0];
  BOOST_TEST(g.item<double>() == -2.0);
  BOOST_TEST(g.str() == "tensor(-2.)");
}

BOOST_AUTO_TEST_CASE(backward_accumulates_into_leaves) {
  Tensor x = kiln::tensor({1.0, 2.0, 3.0}).requires_grad_();
  (x * x).sum().backward();
  BOOST_TEST(close(x.grad(), kiln::tensor({2.0, 4.0, 6.0})));
  (x * 3).sum().backward();
  BOOST_TEST(close(x.grad(), kiln::tensor({5.0, 7.0, 9.0})));
  x.mutable_grad().zero_();
  BOOST_TEST(close(x.grad(), kiln::zeros({3})));
}

BOOST_AUTO_TEST_CASE(broadcast_inputs_get_gradients_of_their_own_shape) {
  Tensor a = kiln::tensor({{1.}, {2.}}).requires_grad_();
  Tensor b = kiln::tensor({1., 2.}).requires_grad_();
  Tensor c = kiln::sum(a + b);
  BOOST_TEST(c.item<float>() == 12.0f);
  c.backward();
  BOOST_TEST(close(a.grad(), kiln::tensor({{2.}, {2.}})));
  BOOST_TEST(close(b.grad(), kiln::tensor({2., 2.})));
}

// mm's gradient of a column-major operand (w.t() in linear) has that operand's layout, so the
// weight's own gradient comes out contiguous, as in PyTorch.
BOOST_AUTO_TEST_CASE(mm_gradient_keeps_the_layout_of_a_transposed_operand) {
  kiln::manual_seed(5);
  Tensor w = kiln::randn({4, 3}).requires_grad_(), x = kiln::randn({2, 3}).requires_grad_();
  Tensor g = kiln::randn({2, 4});
  std::vector<Tensor> grads = ag::grad({kiln::mm(x, w.t())}, {w, x}, {g});
  BOOST_CHECK(grads[0].is_contiguous());
  BOOST_CHECK(kiln::allclose(grads[0], kiln::mm(g.t(), x), 1e-6, 1e-6));
  BOOST_CHECK(kiln::allclose(grads[1], kiln::mm(g, w), 1e-6, 1e-6));
  // and a column-major first operand: the gradient of a.t() is contiguous in a's layout
  Tensor a = kiln::randn({3, 2}).requires_grad_();
  Tensor ga = ag::grad({kiln::mm(a.t(), w.t())}, {a}, {g})[0];
  BOOST_CHECK(ga.is_contiguous());
  BOOST_CHECK(kiln::allclose(ga, kiln::mm(g, w).t(), 1e-6, 1e-6));
}

BOOST_AUTO_TEST_CASE(grad_does_not_touch_dot_grad) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor y = (x * x).sum();
  Tensor g = ag::grad({y}, {x})[0];
  BOOST_TEST(close(g, kiln::tensor({2.0, 4.0})));
  BOOST_TEST(!x.grad().defined());
}

BOOST_AUTO_TEST_CASE(unused_input_needs_allow_unused) {
  Tensor x = kiln::tensor({1.0}).requires_grad_();
  Tensor unused = kiln::tensor({1.0}).requires_grad_();
  Tensor y = (x * 2).sum();
  BOOST_CHECK_EXCEPTION(ag::grad({y}, {x, unused}, {}, true), kiln::Error,
                        [](const kiln::Error& e) {
                          return message_has(e, "Set allow_unused=True");
                        });
  std::vector<Tensor> g = ag::grad({y}, {x, unused}, {}, std::nullopt, false, true);
  BOOST_TEST(g[0].defined());
  BOOST_TEST(!g[1].defined());
}

BOOST_AUTO_TEST_CASE(backward_twice_through_a_freed_graph) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward();
  BOOST_CHECK_EXCEPTION(y.backward(), kiln::Error, [](const kiln::Error& e) {
    return message_has(e, "Trying to backward through the graph a second time");
  });
  Tensor z = (x * x).sum();
  z.backward({}, /*retain_graph=*/true);
  z.backward();
  BOOST_TEST(close(x.grad(), kiln::tensor({6.0, 12.0})));
}

BOOST_AUTO_TEST_CASE(inplace_change_of_a_saved_tensor_is_detected) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor a = x * 2;
  Tensor b = a.sin();  // saves a
  a.add_(1);
  BOOST_CHECK_EXCEPTION(b.sum().backward(), kiln::Error, [](const kiln::Error& e) {
    return message_has(e, "modified by an inplace operation") &&
           message_has(e, "SinBackward0, is at version 1; expected version 0");
  });
}

BOOST_AUTO_TEST_CASE(inplace_on_a_leaf_that_requires_grad) {
  Tensor x = kiln::tensor({1.0}).requires_grad_();
  BOOST_CHECK_EXCEPTION(x.add_(1), kiln::Error, [](const kiln::Error& e) {
    return message_has(e, "a leaf Variable that requires grad is being used in an in-place");
  });
  {
    kiln::NoGradGuard no_grad;
    x.add_(1);  // allowed without grad mode, as optimizers do
  }
  BOOST_TEST(x.item<double>() == 2.0);
}

BOOST_AUTO_TEST_CASE(inplace_on_a_non_leaf_records_correctly) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 3;
  y.mul_(y);  // y = (3x)^2, dy/dx = 18x
  y.sum().backward();
  BOOST_TEST(close(x.grad(), kiln::tensor({18.0, 36.0})));
  BOOST_TEST(y.grad_fn()->name() == "MulBackward0");
}

BOOST_AUTO_TEST_CASE(gradient_penalty_through_create_graph) {
  // f = sum(x^3), g = 3x^2, penalty = sum(g^2) = 9 sum(x^4), d penalty/dx = 36 x^3
  Tensor x = kiln::tensor({1.0, -2.0, 0.5}).requires_grad_();
  Tensor f = kiln::pow(x, 3).sum();
  Tensor g = ag::grad({f}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  BOOST_TEST(g.requires_grad());
  Tensor penalty = (g * g).sum();
  penalty.backward();
  BOOST_TEST(close(x.grad(), 36 * kiln::pow(x.detach(), 3)));
}

BOOST_AUTO_TEST_CASE(hessian_vector_product) {
  // f = sum(x^2 y) + sum(x^3); H_xx = diag(2y + 6x); Hv = (2y + 6x) * v
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor y = kiln::tensor({3.0, -1.0});
  Tensor v = kiln::tensor({0.5, 2.0});
  Tensor f = (x * x * y).sum() + kiln::pow(x, 3).sum();
  Tensor g = ag::grad({f}, {x}, {}, std::nullopt, true)[0];
  Tensor hv = ag::grad({(g * v).sum()}, {x})[0];
  BOOST_TEST(close(hv, (2 * y + 6 * x.detach()) * v));
}

BOOST_AUTO_TEST_CASE(hooks_and_retain_grad) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  x.register_hook([](const Tensor& g) { return g * 10; });
  Tensor y = x * 2;
  y.retain_grad();
  Tensor seen;
  y.register_hook([&seen](const Tensor& g) {
    seen = g.clone();
    return Tensor();
  });
  (y * y).sum().backward();
  BOOST_TEST(close(seen, kiln::tensor({4.0, 8.0})));
  BOOST_TEST(close(y.grad(), kiln::tensor({4.0, 8.0})));
  BOOST_TEST(close(x.grad(), kiln::tensor({80.0, 160.0})));
  BOOST_CHECK_THROW(kiln::zeros({1}).register_hook([](const Tensor& g) { return g; }), kiln::Error);
}

BOOST_AUTO_TEST_CASE(grad_modes) {
  Tensor x = kiln::tensor({1.0}).requires_grad_();
  {
    kiln::NoGradGuard no_grad;
    BOOST_TEST(!ag::GradMode::is_enabled());
    BOOST_TEST(!(x * 2).requires_grad());
    {
      kiln::AutoGradMode enable(true);
      BOOST_TEST((x * 2).requires_grad());
    }
  }
  BOOST_TEST(ag::GradMode::is_enabled());
  {
    kiln::InferenceMode inference;
    BOOST_TEST(kiln::InferenceMode::is_enabled());
    Tensor y = x * 2;
    BOOST_TEST(!y.requires_grad());
    BOOST_TEST(y.impl().inference);
  }
  BOOST_TEST(!kiln::InferenceMode::is_enabled());
  try {
    kiln::NoGradGuard no_grad;
    throw std::runtime_error("leave the scope by exception");
  } catch (const std::runtime_error&) {
  }
  BOOST_TEST(ag::GradMode::is_enabled());
}

BOOST_AUTO_TEST_CASE(detach_and_grad_fn) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x + x;
  BOOST_TEST(y.grad_fn()->name() == "AddBackward0");
  BOOST_TEST(!y.is_leaf());
  BOOST_TEST(x.is_leaf());
  Tensor d = y.detach();
  BOOST_TEST(!d.requires_grad());
  BOOST_TEST(d.is_same_storage(y));
  BOOST_TEST(y.str() == "tensor([2., 4.], grad_fn=<AddBackward0>)");
  BOOST_CHECK_EXCEPTION(kiln::tensor({1, 2}).requires_grad_(), kiln::Error,
                        [](const kiln::Error& e) { return message_has(e, "floating point"); });
  BOOST_CHECK_EXCEPTION(y.requires_grad_(false), kiln::Error,
                        [](const kiln::Error& e) { return message_has(e, "leaf variables"); });
}

BOOST_AUTO_TEST_CASE(errors_of_backward) {
  Tensor x = kiln::tensor({1.0, 2.0}).requires_grad_();
  BOOST_CHECK_EXCEPTION((x * 2).backward(), kiln::Error, [](const kiln::Error& e) {
    return message_has(e, "grad can be implicitly created only for scalar outputs");
  });
  BOOST_CHECK_EXCEPTION(kiln::zeros({1}).backward(), kiln::Error, [](const kiln::Error& e) {
    return message_has(e, "does not require grad and does not have a grad_fn");
  });
  BOOST_CHECK_EXCEPTION((x * 2).backward(kiln::ones({3})), kiln::Error,
                        [](const kiln::Error& e) { return message_has(e, "Mismatch in shape"); });
}

BOOST_AUTO_TEST_CASE(resident_memory_stays_flat_over_thousands_of_steps) {
  kiln::manual_seed(0);
  Tensor w1 = kiln::randn({16, 32}).requires_grad_();
  Tensor w2 = kiln::randn({32, 1}).requires_grad_();
  auto step = [&] {
    Tensor x = kiln::randn({64, 16});
    Tensor h = kiln::relu(x.matmul(w1));
    Tensor loss = (h.matmul(w2) - 1).pow(2).mean();
    loss.backward();
    kiln::NoGradGuard no_grad;
    w1.sub_(w1.grad() * 1e-3);
    w2.sub_(w2.grad() * 1e-3);
    w1.mutable_grad().zero_();
    w2.mutable_grad().zero_();
  };
  for (int i = 0; i < 300; ++i) step();
  long before = resident_kib();
  for (int i = 0; i < 3000; ++i) step();
  long after = resident_kib();
  BOOST_TEST_MESSAGE("resident before " << before << " KiB, after " << after << " KiB");
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed memory in its quarantine (256 MiB), so the resident size grows
  // by design; its leak checker covers this test at exit instead (a kept graph is a leak there).
  BOOST_TEST_MESSAGE("resident-size check skipped under AddressSanitizer");
#else
  BOOST_TEST(after - before < 2048);
#endif
}

// relu's and threshold's gradients are PyTorch's threshold_backward: 0 where the value is <= the
// threshold, the gradient elsewhere, a NaN included. PyTorch 1.13 gives [3, 0, 0, 6] for all three:
//   x = torch.tensor([nan, -1., 0., 2.], requires_grad=True); g = torch.tensor([3., 4., 5., 6.])
//   torch.relu(x).backward(g); (x * 1).relu_().backward(g); F.threshold(x, 0.5, 7.).backward(g)
BOOST_AUTO_TEST_CASE(relu_and_threshold_gradients_pass_a_nan_as_pytorch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor g = kiln::tensor({3.0f, 4.0f, 5.0f, 6.0f});
  Tensor expected = kiln::tensor({3.0f, 0.0f, 0.0f, 6.0f});
  for (int form = 0; form < 3; ++form) {
    Tensor x = kiln::tensor({nan, -1.0f, 0.0f, 2.0f}).requires_grad_();
    Tensor y =
        form == 0 ? kiln::relu(x)
        : form == 1
            ? (x * 1).relu_()
            : kiln::nn::functional::threshold(x,
                                              kiln::nn::functional::ThresholdFuncOptions(0.5, 7.0));
    y.backward(g);
    BOOST_TEST(kiln::equal(x.grad(), expected), "form " << form << ": " << x.grad());
  }
}
