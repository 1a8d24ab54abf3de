// Graph capture and replay: traced functions and modules equal eager forward and backward (an
// MLP, the checkerboard net of examples/checkerboard.h, the curve fit of examples/curve_fit.cpp),
// the graph's printing, guards (retrace per signature or raise), the value-read warning, the
// autocast decisions recorded, and the passes (dead code, common subexpressions, constant
// folding) removing what they should and nothing else.
#define BOOST_TEST_MODULE jit
#include "../check_error.h"

#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using kiln::Tensor;
namespace jit = kiln::jit;
namespace nn = kiln::nn;

namespace {

struct CollectWarnings : kiln::WarningHandler {
  std::vector<std::string> messages;
  void process(const kiln::Warning& w) override { messages.push_back(w.msg()); }
};

int count_op(const jit::Graph& g, const std::string& name) {
  int n = 0;
  for (const auto& node : g.nodes) n += std::string(node.call->op().name()) == name;
  return n;
}

void check_close(const Tensor& a, const Tensor& b, double tol = 1e-6) {
  BOOST_REQUIRE(a.defined() && b.defined());
  BOOST_REQUIRE_EQUAL(a.sizes(), b.sizes());
  BOOST_CHECK_EQUAL(a.dtype(), b.dtype());
  double diff = (a.to(kiln::kDouble) - b.to(kiln::kDouble)).abs().max().item<double>();
  BOOST_CHECK_MESSAGE(diff <= tol, "max difference " << diff);
}

// The MLP of the examples' benchmarks: 2 -> 64 -> 64 -> 1 with ReLU.
nn::Sequential make_mlp() {
  return nn::Sequential(nn::Linear(2, 64), nn::ReLU(), nn::Linear(64, 64), nn::ReLU(),
                        nn::Linear(64, 1));
}

// Checks a traced module against eager: forward, and the parameters' gradients of a loss.
void check_module_forward_backward(nn::Sequential net, const Tensor& example, const Tensor& x) {
  auto traced = jit::trace_module(net, {example});
  Tensor eager = net->forward(x);
  Tensor replayed = traced.forward(x);
  check_close(replayed, eager, 1e-5);
  auto params = net->parameters();
  net->zero_grad();
  eager.pow(2).mean().backward();
  std::vector<Tensor> eager_grads;
  for (const Tensor& p : params) eager_grads.push_back(p.grad().clone());
  net->zero_grad();
  replayed.pow(2).mean().backward();
  for (size_t i = 0; i < params.size(); ++i) {
    BOOST_REQUIRE(params[i].grad().defined());
    check_close(params[i].grad(), eager_grads[i], 1e-5);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_traced_function_replays_its_graph_on_new_values) {
  Tensor w = kiln::rand({3});
  auto fn = [w](const Tensor& x) { return kiln::relu(x * w + 1) - 0.5; };
  Tensor example = kiln::randn({2, 3});
  auto traced = jit::trace(fn, example);
  BOOST_CHECK_EQUAL(traced.num_traces(), 1u);
  const jit::Graph& g = traced.graph();
  // one relu node, or the chain fused into one program (kiln::jit::fuse_pointwise)
  BOOST_CHECK_EQUAL(count_op(g, "relu") + count_op(g, "fused_pointwise"), 1);
  BOOST_CHECK_EQUAL(g.inputs.size(), 1u);
  BOOST_CHECK_EQUAL(g.outputs.size(), 1u);
  std::string text = g.str();
  BOOST_CHECK_MESSAGE(text.find("graph(%input0 : Float(2, 3, device=cpu)") == 0, text);
  BOOST_CHECK_MESSAGE(text.find("relu(") != std::string::npos, text);
  BOOST_CHECK_MESSAGE(text.find("prim::Constant()") != std::string::npos, text);  // w
  BOOST_CHECK_MESSAGE(text.find("return (%") != std::string::npos, text);
  for (int i = 0; i < 3; ++i) {
    Tensor x = kiln::randn({2, 3});
    check_close(traced.forward(x), fn(x));
  }
  // the captured tensor is referenced: a change is seen by the next call
  w.mul_(2);
  Tensor x = kiln::randn({2, 3});
  check_close(traced.forward(x), fn(x));
}

BOOST_AUTO_TEST_CASE(functions_of_several_tensors_and_several_outputs) {
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor s = in[0] + in[1];
    return {s * in[0], kiln::sum(s, {1}, false, std::nullopt), in[1]};
  };
  std::vector<Tensor> example = {kiln::rand({4, 5}), kiln::rand({4, 5})};
  auto traced = jit::trace(fn, example);
  std::vector<Tensor> in = {kiln::rand({4, 5}), kiln::rand({4, 5})};
  auto got = traced(in);
  auto want = fn(in);
  BOOST_REQUIRE_EQUAL(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) check_close(got[i], want[i]);
  BOOST_CHECK(got[2].is_same(in[1]));  // an input returned as is
}

BOOST_AUTO_TEST_CASE(other_shapes_retrace_by_default_or_raise_when_asked) {
  auto fn = [](const Tensor& x) { return x.sum({0}, false, std::nullopt) * 2; };
  auto traced = jit::trace(fn, kiln::rand({3, 4}));
  check_close(traced.forward(kiln::ones({5, 2})), fn(kiln::ones({5, 2})));
  BOOST_CHECK_EQUAL(traced.num_traces(), 2u);
  check_close(traced.forward(kiln::ones({3, 4})), fn(kiln::ones({3, 4})));
  BOOST_CHECK_EQUAL(traced.num_traces(), 2u);  // cached
  Tensor d = kiln::ones({3, 4}, kiln::kDouble);
  check_close(traced.forward(d), fn(d));
  BOOST_CHECK_EQUAL(traced.num_traces(), 3u);

  jit::TraceOptions strict;
  strict.retrace = false;
  auto fixed = jit::trace(fn, kiln::rand({3, 4}), strict);
  CHECK_ERROR(kiln::ValueError, fixed.forward(kiln::rand({5, 4})), "traced for",
              "float32[3, 4] on cpu", "float32[5, 4] on cpu", "retrace");
  CHECK_ERROR(kiln::ValueError, fixed.forward(kiln::rand({3, 4}, kiln::kDouble)), "float64");
  check_close(fixed.forward(kiln::ones({3, 4})), fn(kiln::ones({3, 4})));
  CHECK_ERROR(kiln::Error, jit::TracedFunction().forward(kiln::ones({1})), "empty");
}

BOOST_AUTO_TEST_CASE(reading_a_value_warns_once_that_control_flow_is_frozen) {
  auto fn = [](const Tensor& x) {
    double s = x.sum().item<double>();
    Tensor y = s > 0 ? x * 2 : x * -1;
    if (x.max().item<double>() > 100) y = y + 1;
    return y;
  };
  CollectWarnings collect;
  jit::TracedFunction traced;
  {
    kiln::WarningUtils::WarningHandlerGuard guard(&collect);
    traced = jit::trace(fn, kiln::ones({3}));
  }
  int frozen = 0;
  for (const auto& m : collect.messages) frozen += m.find("frozen") != std::string::npos;
  BOOST_CHECK_EQUAL(frozen, 1);
  // frozen: a negative input replays the positive branch
  Tensor neg = -kiln::ones({3});
  check_close(traced.forward(neg), neg * 2);
  // a function that reads no value does not warn
  CollectWarnings quiet;
  {
    kiln::WarningUtils::WarningHandlerGuard guard(&quiet);
    jit::trace([](const Tensor& x) { return x + 1; }, kiln::ones({3}));
  }
  BOOST_CHECK(quiet.messages.empty());
}

BOOST_AUTO_TEST_CASE(mlp_traced_equals_eager_forward_and_backward) {
  kiln::manual_seed(1);
  nn::Sequential net = make_mlp();
  check_module_forward_backward(net, kiln::randn({16, 2}), kiln::randn({16, 2}));
  auto traced = jit::trace_module(net, {kiln::randn({16, 2})});
  std::string text = traced.graph().str();
  BOOST_CHECK_MESSAGE(text.find("[parameter]") != std::string::npos, text);
  BOOST_CHECK_MESSAGE(text.find("%0.weight") != std::string::npos, text);
  // parameters are referenced: an optimizer step is seen by the next replay
  kiln::optim::SGD opt(net->parameters(), kiln::optim::SGDOptions(0.1));
  Tensor x = kiln::randn({16, 2});
  opt.zero_grad();
  traced.forward(x).sum().backward();
  opt.step();
  check_close(traced.forward(x), net->forward(x), 1e-5);
}

BOOST_AUTO_TEST_CASE(checkerboard_net_traced_equals_eager_in_training_and_eval) {
  kiln::manual_seed(2);
  namespace nn = kiln::nn;
  auto make = [] {
    return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(2, 16, 1)), nn::BatchNorm2d(16), nn::ReLU(),
                          nn::Conv2d(nn::Conv2dOptions(16, 16, 1)), nn::BatchNorm2d(16), nn::ReLU(),
                          nn::Conv2d(nn::Conv2dOptions(16, 1, 1)));
  };
  kiln::manual_seed(2);
  nn::Sequential eager_net = make();
  kiln::manual_seed(2);
  nn::Sequential traced_net = make();  // the same weights
  Tensor example = kiln::rand({2, 2, 8, 8});
  auto traced = jit::trace_module(traced_net, {example});
  // the trace ran the net once in training mode: so does the eager copy, for equal statistics
  eager_net->forward(example);
  for (int step = 0; step < 3; ++step) {
    Tensor x = kiln::rand({2, 2, 8, 8});
    Tensor want = eager_net->forward(x), got = traced.forward(x);
    check_close(got, want, 1e-5);
    eager_net->zero_grad();
    traced_net->zero_grad();
    want.square().mean().backward();
    got.square().mean().backward();
    auto pe = eager_net->parameters(), pt = traced_net->parameters();
    for (size_t i = 0; i < pe.size(); ++i) check_close(pt[i].grad(), pe[i].grad(), 1e-5);
  }
  // batch norm's running statistics were updated in place by the replays, as eagerly
  auto be = eager_net->buffers(), bt = traced_net->buffers();
  for (size_t i = 0; i < be.size(); ++i) check_close(bt[i], be[i], 1e-5);
  // eval mode is another signature: a retrace, using the running statistics
  eager_net->eval();
  traced_net->eval();
  Tensor x = kiln::rand({2, 2, 8, 8});
  check_close(traced.forward(x), eager_net->forward(x), 1e-5);
  BOOST_CHECK_EQUAL(traced.num_traces(), 2u);
}

BOOST_AUTO_TEST_CASE(curve_fit_traced_equals_eager_forward_and_backward) {
  kiln::manual_seed(3);
  Tensor w = kiln::randn({3, 1}).requires_grad_();
  auto model = [&w](const Tensor& x) {
    Tensor f = kiln::stack({x * x, x, kiln::ones_like(x)}, 1);
    return kiln::squeeze(f.matmul(w), 1);
  };
  auto loss_fn = [&](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {kiln::nn::functional::mse_loss(model(in[0]), in[1])};
  };
  Tensor x0 = kiln::rand({100}) * 20 - 10;
  auto traced = jit::trace(loss_fn, {x0, 5 * x0 * x0 + 3});
  for (int i = 0; i < 3; ++i) {
    Tensor x = kiln::rand({100}) * 20 - 10;
    Tensor y = 5 * x * x + 3;
    Tensor want = loss_fn({x, y})[0];
    Tensor eager_grad = kiln::autograd::grad({want}, {w})[0];
    Tensor got = traced({x, y})[0];
    check_close(got, want, 1e-3);
    Tensor traced_grad = kiln::autograd::grad({got}, {w})[0];
    check_close(traced_grad, eager_grad, 1e-3);
  }
}

BOOST_AUTO_TEST_CASE(autocast_decisions_are_recorded_at_trace_time) {
  Tensor a = kiln::rand({4, 8}), b = kiln::rand({8, 3});
  auto fn = [b](const Tensor& x) { return kiln::mm(x, b); };
  jit::TracedFunction traced;
  Tensor want;
  {
    kiln::amp::autocast region(kiln::kCPU);
    traced = jit::trace(fn, a);
    want = fn(a);
  }
  BOOST_CHECK_EQUAL(want.dtype(), kiln::kBFloat16);
  std::string text = traced.graph().str();
  BOOST_CHECK_MESSAGE(text.find("BFloat16") != std::string::npos, text);
  {
    // replayed under the same autocast state: the recorded casts, no second autocast
    kiln::amp::autocast region(kiln::kCPU);
    check_close(traced.forward(a), want, 0);
  }
  // outside the region: another signature, traced without autocast
  BOOST_CHECK_EQUAL(traced.forward(a).dtype(), kiln::kFloat);
}

BOOST_AUTO_TEST_CASE(dead_code_elimination_removes_unused_calls_only) {
  auto fn = [](const Tensor& x) {
    Tensor unused = kiln::exp(x) * 3;  // dead
    Tensor buffer = x * 1;
    buffer.add_(1);  // in place: kept, and what it reads
    return x + buffer;
  };
  jit::TraceOptions raw;
  raw.optimize = false;
  auto traced = jit::trace(fn, kiln::rand({5}), raw);
  jit::Graph& g = traced.mutable_graph();
  BOOST_CHECK_EQUAL(count_op(g, "exp"), 1);
  size_t before = g.nodes.size();
  BOOST_CHECK_EQUAL(jit::eliminate_dead_code(g), 2);  // exp and its mul
  BOOST_CHECK_EQUAL(g.nodes.size(), before - 2);
  BOOST_CHECK_EQUAL(count_op(g, "exp"), 0);
  BOOST_CHECK_EQUAL(count_op(g, "add_"), 1);
  BOOST_CHECK_EQUAL(jit::eliminate_dead_code(g), 0);
  Tensor x = kiln::rand({5});
  check_close(traced.forward(x), fn(x));
  // random calls stay even when unused
  auto noisy = jit::trace(
      [](const Tensor& x) {
        Tensor r = kiln::empty_like(x);
        r.uniform_(0, 1);
        return x * 2;
      },
      kiln::rand({5}), raw);
  jit::Graph& gn = noisy.mutable_graph();
  BOOST_CHECK_EQUAL(jit::eliminate_dead_code(gn), 0);
}

BOOST_AUTO_TEST_CASE(common_subexpressions_are_merged_once) {
  auto fn = [](const Tensor& x) {
    Tensor a = kiln::sin(x) + 1;
    Tensor b = kiln::sin(x) + 1;  // the same as a
    Tensor c = kiln::sin(x) + 2;  // another constant: kept
    return a * b + c;
  };
  jit::TraceOptions raw;
  raw.optimize = false;
  auto traced = jit::trace(fn, kiln::rand({5}), raw);
  jit::Graph& g = traced.mutable_graph();
  BOOST_CHECK_EQUAL(count_op(g, "sin"), 3);
  BOOST_CHECK_EQUAL(jit::eliminate_common_subexpressions(g), 3);  // two sins and an add
  BOOST_CHECK_EQUAL(count_op(g, "sin"), 1);
  BOOST_CHECK_EQUAL(jit::eliminate_common_subexpressions(g), 0);
  Tensor x = kiln::rand({5});
  check_close(traced.forward(x), fn(x));
  // no merging across an in-place call
  auto inplace = jit::trace(
      [](const Tensor& x) {
        Tensor a = x * 2;
        Tensor b = x * 2;
        a.add_(1);
        return a + b;
      },
      kiln::rand({5}), raw);
  jit::Graph& gi = inplace.mutable_graph();
  BOOST_CHECK_EQUAL(jit::eliminate_common_subexpressions(gi), 0);
  check_close(inplace.forward(x), (x * 2 + 1) + x * 2);
}

BOOST_AUTO_TEST_CASE(constant_folding_runs_what_depends_on_constants_only) {
  Tensor c = kiln::rand({5});
  Tensor p = kiln::rand({5}).requires_grad_();  // a parameter: never folded
  auto fn = [c, p](const Tensor& x) { return x * (kiln::exp(c) * 2) + p * 3; };
  jit::TraceOptions raw;
  raw.optimize = false;
  auto traced = jit::trace(fn, kiln::rand({5}), raw);
  jit::Graph& g = traced.mutable_graph();
  size_t before = g.nodes.size();
  BOOST_CHECK_EQUAL(jit::fold_constants(g), 2);  // exp(c) and its * 2
  BOOST_CHECK_EQUAL(g.nodes.size(), before - 2);
  BOOST_CHECK_EQUAL(count_op(g, "exp"), 0);
  BOOST_CHECK_EQUAL(jit::fold_constants(g), 0);
  Tensor x = kiln::rand({5});
  kiln::autograd::NoGradGuard no_grad;
  check_close(traced.forward(x), fn(x));
  // a constant an in-place call writes is not folded, and is fresh at each replay
  auto accumulate = jit::trace(
      [](const Tensor& x) {
        Tensor acc = kiln::zeros({5});
        acc.add_(x);
        return acc * 2;
      },
      kiln::rand({5}), raw);
  jit::Graph& ga = accumulate.mutable_graph();
  BOOST_CHECK_EQUAL(jit::fold_constants(ga), 0);
  check_close(accumulate.forward(x), x * 2);
  check_close(accumulate.forward(x), x * 2);
}
