// Planned replay (Note [Replay plan], core/src/jit/plan.cpp): without grad, the second call of
// a traced function runs the plugin kernels its nodes called, into buffers shared by liveness.
// Its results equal eager ones, are the caller's (a later call writes other memory), survive
// views of intermediates and intermediates the graph also returns, inputs of other strides,
// kernel errors, and grad mode after a plan (which dispatches again).
#define BOOST_TEST_MODULE jit_replay
#include "../check_error.h"

#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <vector>

using kiln::Tensor;
namespace jit = kiln::jit;
namespace nn = kiln::nn;

namespace {

Tensor chain(const Tensor& x) {
  Tensor y = x * 1.5;
  y = y + 0.25;
  y = kiln::sin(y);
  y = y * y;
  y = y - x;
  y = kiln::exp(y);
  y = kiln::relu(y);
  return y / 3.0;
}

void check_equal(const Tensor& a, const Tensor& b) {
  BOOST_REQUIRE(a.defined() && b.defined());
  BOOST_REQUIRE_EQUAL(a.sizes(), b.sizes());
  BOOST_CHECK_EQUAL(a.dtype(), b.dtype());
  BOOST_CHECK_MESSAGE(kiln::equal(a, b), "replayed " << a << "\neager " << b);
}

}  // namespace

BOOST_AUTO_TEST_CASE(planned_replay_equals_eager_and_returns_fresh_results) {
  kiln::manual_seed(3);
  jit::TraceOptions unfused;
  unfused.fuse = false;  // one node per operator (the fused chain is the next case)
  auto traced = jit::trace(chain, kiln::rand({1024}), unfused);
  kiln::autograd::NoGradGuard no_grad;
  BOOST_CHECK(!traced.replay_stats().planned);
  Tensor x1 = kiln::rand({1024}), x2 = kiln::rand({1024}), x3 = kiln::rand({1024});
  Tensor r1 = traced.forward(x1);  // plans
  jit::ReplayStats stats = traced.replay_stats();
  BOOST_CHECK(stats.planned);
  BOOST_CHECK_EQUAL(stats.fast_nodes, stats.nodes);
  BOOST_CHECK_EQUAL(stats.nodes, 8u);
  // a chain needs two storages for its intermediates, whatever its length (the result is the
  // caller's, allocated per call)
  BOOST_CHECK_EQUAL(stats.shared_bytes, 2u * 1024u * sizeof(float));
  Tensor r2 = traced.forward(x2);
  Tensor r3 = traced.forward(x3);
  check_equal(r1, chain(x1));
  check_equal(r2, chain(x2));
  check_equal(r3, chain(x3));
  BOOST_CHECK(r2.data_ptr() != r3.data_ptr());
}

// Fused (the default where the device has fused_pointwise), the chain is one node whose kernel
// the plan captures like any other (run_kernel_list: See Note [Kernel capture]).
BOOST_AUTO_TEST_CASE(a_fused_chain_is_planned) {
  auto traced = jit::trace(chain, kiln::rand({1024}));
  kiln::autograd::NoGradGuard no_grad;
  Tensor x1 = kiln::rand({1024}), x2 = kiln::rand({1024});
  Tensor r1 = traced.forward(x1);  // plans
  jit::ReplayStats stats = traced.replay_stats();
  BOOST_CHECK(stats.planned);
  BOOST_CHECK_EQUAL(stats.nodes, 1u);
  BOOST_CHECK_EQUAL(stats.fast_nodes, 1u);
  Tensor r2 = traced.forward(x2);
  check_equal(r1, chain(x1));
  check_equal(r2, chain(x2));
  BOOST_CHECK(r1.data_ptr() != r2.data_ptr());
}

BOOST_AUTO_TEST_CASE(plan_false_runs_each_backend_kernel) {
  jit::TraceOptions options;
  options.plan = false;
  auto traced = jit::trace(chain, kiln::rand({16}), options);
  kiln::autograd::NoGradGuard no_grad;
  Tensor x = kiln::rand({16});
  traced.forward(x);
  check_equal(traced.forward(x), chain(x));
  BOOST_CHECK(!traced.replay_stats().planned);
}

BOOST_AUTO_TEST_CASE(a_returned_view_of_an_intermediate_is_the_callers) {
  // the view is no kernel: its node runs its Backend kernel, and the buffer it views is the
  // caller's at each call; the intermediate also read later is not overwritten either
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor a = in[0] * 2;
    Tensor v = a.view({4, 4});
    Tensor b = kiln::relu(a) + 1;
    Tensor c = b * b;
    return {v, b, c};
  };
  jit::TraceOptions unfused;
  unfused.fuse = false;  // the intermediates stay nodes of their own
  auto traced = jit::trace(fn, {kiln::randn({16})}, unfused);
  kiln::autograd::NoGradGuard no_grad;
  Tensor x1 = kiln::randn({16}), x2 = kiln::randn({16});
  std::vector<Tensor> r1 = traced({x1});
  std::vector<Tensor> r2 = traced({x2});
  std::vector<Tensor> r3 = traced({x1 + 1});
  std::vector<Tensor> e1 = fn({x1}), e2 = fn({x2});
  for (size_t i = 0; i < 3; ++i) {
    check_equal(r1[i], e1[i]);
    check_equal(r2[i], e2[i]);
  }
  BOOST_CHECK(traced.replay_stats().fast_nodes >= 3u);
}

BOOST_AUTO_TEST_CASE(inputs_of_other_strides_replay_from_their_backend_kernels) {
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {kiln::exp(in[0]) * in[1] + 1};
  };
  Tensor a = kiln::randn({4, 5}), b = kiln::randn({4, 5});
  auto traced = jit::trace(fn, {a, b});
  kiln::autograd::NoGradGuard no_grad;
  traced({a, b});
  check_equal(traced({a, b})[0], fn({a, b})[0]);
  // the same sizes with other strides: the signature holds, the plan does not
  Tensor t = kiln::randn({5, 4}).t();
  check_equal(traced({t, b})[0], fn({t, b})[0]);
  check_equal(traced({b, t})[0], fn({b, t})[0]);
  check_equal(traced({a, b})[0], fn({a, b})[0]);
}

BOOST_AUTO_TEST_CASE(broadcasts_and_reductions_replay_planned) {
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor y = in[0] + in[1];  // [8, 3] + [3]
    Tensor s = y.sum(1, true);
    return {kiln::softmax(y - s, 1), y.max()};
  };
  Tensor x = kiln::randn({8, 3}), b = kiln::randn({3});
  auto traced = jit::trace(fn, {x, b});
  kiln::autograd::NoGradGuard no_grad;
  for (int i = 0; i < 3; ++i) {
    Tensor xi = kiln::randn({8, 3}), bi = kiln::randn({3});
    std::vector<Tensor> r = traced({xi, bi});
    std::vector<Tensor> e = fn({xi, bi});
    check_equal(r[0], e[0]);
    check_equal(r[1], e[1]);
  }
  BOOST_CHECK(traced.replay_stats().fast_nodes >= 3u);
}

BOOST_AUTO_TEST_CASE(a_kernel_error_in_a_planned_replay_raises_and_the_next_call_works) {
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {kiln::index_select(in[0] * 2, 0, in[1])};
  };
  Tensor x = kiln::randn({5, 2});
  Tensor good = kiln::tensor({0, 4, 2}, kiln::kLong);
  auto traced = jit::trace(fn, {x, good});
  kiln::autograd::NoGradGuard no_grad;
  traced({x, good});
  BOOST_REQUIRE(traced.replay_stats().planned);
  CHECK_ERROR(kiln::IndexError, traced({x, kiln::tensor({0, 7, 1}, kiln::kLong)}), "index_select",
              "7");
  check_equal(traced({x, good})[0], fn({x, good})[0]);
}

BOOST_AUTO_TEST_CASE(grad_mode_after_a_plan_dispatches_and_records) {
  kiln::manual_seed(4);
  nn::Sequential net(nn::Linear(2, 16), nn::ReLU(), nn::Linear(16, 1));
  auto traced = jit::trace_module(net, {kiln::randn({8, 2})});
  Tensor x = kiln::randn({8, 2});
  {
    kiln::autograd::NoGradGuard no_grad;
    traced.forward(x);
    check_equal(traced.forward(x), net->forward(x));
    BOOST_CHECK(traced.replay_stats().planned);
  }
  net->zero_grad();
  net->forward(x).pow(2).sum().backward();
  std::vector<Tensor> eager;
  for (const Tensor& p : net->parameters()) eager.push_back(p.grad().clone());
  net->zero_grad();
  Tensor y = traced.forward(x);
  BOOST_CHECK(y.requires_grad());
  y.pow(2).sum().backward();
  auto params = net->parameters();
  for (size_t i = 0; i < params.size(); ++i) check_equal(params[i].grad(), eager[i]);
}

// TraceOptions::dynamic: the batch dimension stays symbolic.
BOOST_AUTO_TEST_CASE(a_dynamic_trace_replays_other_batch_sizes_without_retracing) {
  kiln::manual_seed(5);
  nn::Sequential net(nn::Linear(2, 16), nn::ReLU(), nn::Linear(16, 3));
  jit::TraceOptions options;
  options.dynamic = true;
  auto traced = jit::trace_module(net, {kiln::randn({16, 2})}, options);
  for (int64_t batch : {5, 33, 16, 1, 5}) {
    Tensor x = kiln::randn({batch, 2});
    {
      kiln::autograd::NoGradGuard no_grad;
      check_equal(traced.forward(x), net->forward(x));
      check_equal(traced.forward(x), net->forward(x));  // planned for this batch
    }
    // under grad: the same gradients as eagerly
    net->zero_grad();
    net->forward(x).sum().backward();
    Tensor eager = net->parameters()[0].grad().clone();
    net->zero_grad();
    traced.forward(x).sum().backward();
    check_equal(net->parameters()[0].grad(), eager);
  }
  BOOST_CHECK_EQUAL(traced.num_traces(), 1u);
  // other trailing sizes are another signature: a retrace
  auto other = [&] { traced.forward(kiln::randn({4, 3})); };
  BOOST_CHECK_THROW(other(), kiln::Error);
}

BOOST_AUTO_TEST_CASE(a_dynamic_trace_is_refused_when_the_batch_is_written_in_an_argument) {
  jit::TraceOptions options;
  options.dynamic = true;
  auto folded = [](const Tensor& x) { return x.view({x.size(0) * 3}) * 2; };
  CHECK_ERROR(kiln::ValueError, jit::trace(folded, kiln::randn({4, 3}), options),
              "TraceOptions::dynamic", "depends on the batch size", "kiln::view", "[12]", "[15]",
              "-1");
  // with -1 the same function is batch-polymorphic
  auto symbolic = [](const Tensor& x) { return x.view({-1}) * 2; };
  auto traced = jit::trace(symbolic, kiln::randn({4, 3}), options);
  Tensor x = kiln::randn({7, 3});
  check_equal(traced.forward(x), symbolic(x));
}

BOOST_AUTO_TEST_CASE(a_dynamic_trace_needs_one_batch_for_every_input) {
  jit::TraceOptions options;
  options.dynamic = true;
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> { return {in[0] + in[1]}; };
  auto traced = jit::trace(fn, {kiln::randn({4, 3}), kiln::randn({4, 3})}, options);
  check_equal(traced({kiln::ones({6, 3}), kiln::ones({6, 3})})[0], kiln::full({6, 3}, 2.0));
  CHECK_ERROR(kiln::ValueError, traced({kiln::ones({6, 3}), kiln::ones({5, 3})}), "input 1",
              "5 rows", "6");
  CHECK_ERROR(kiln::ValueError, jit::trace(fn, {kiln::randn({4, 3}), kiln::randn({1, 3})}, options),
              "TraceOptions::dynamic");
}
