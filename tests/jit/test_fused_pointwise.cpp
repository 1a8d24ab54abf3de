// Pointwise fusion (kiln::jit::fuse_pointwise and the optional primitive fused_pointwise): a
// traced chain fused equals the same chain unfused and eager, bit for bit, over dtypes,
// broadcasting, strided and transposed inputs, 0-size tensors, a value used outside the group,
// NaN and inf; the program's validation errors; grad mode runs the unfused nodes; the checkerboard
// net's forward traced with fusion equals eager.
#define BOOST_TEST_MODULE fused_pointwise
#include "../check_error.h"

#include <kiln/jit/fused_pointwise.h>
#include <kiln/kiln.h>
#include <kiln/sdk/pointwise_program.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using kiln::Tensor;
namespace jit = kiln::jit;
namespace pg = kiln::sdk::program;

namespace {

int count_op(const jit::Graph& g, const std::string& name) {
  int n = 0;
  for (const auto& node : g.nodes) n += std::string(node.call->op().name()) == name;
  return n;
}

// Bit-for-bit equality (NaN where the other has NaN), same sizes and dtype.
void check_same(const Tensor& got, const Tensor& want, const std::string& what) {
  BOOST_REQUIRE_MESSAGE(got.defined() && want.defined(), what);
  BOOST_REQUIRE_MESSAGE(got.sizes() == want.sizes(),
                        what << ": sizes " << got.sizes() << " vs " << want.sizes());
  BOOST_REQUIRE_MESSAGE(got.dtype() == want.dtype(), what << ": dtypes differ");
  if (got.numel() == 0) return;
  Tensor eq = kiln::eq(got, want);
  if (kiln::is_floating_point(got.dtype())) eq = eq | (kiln::isnan(got) & kiln::isnan(want));
  BOOST_CHECK_MESSAGE(eq.all().item<bool>(), what << ": values differ");
}

// Traces fn twice (fused, and with optimize off: unfused), runs both and eager on inputs, and
// checks they agree; returns the fused graph.
jit::Graph check_fused(const jit::TraceableFunction& fn, const std::vector<Tensor>& inputs,
                       const std::string& what, int want_fused = 1) {  // -1: at least one
  auto fused = jit::trace(fn, inputs);
  jit::TraceOptions off;
  off.optimize = false;
  auto unfused = jit::trace(fn, inputs, off);
  std::vector<Tensor> eager = fn(inputs);
  std::vector<Tensor> a = fused(inputs), b = unfused(inputs);
  BOOST_REQUIRE_EQUAL(a.size(), eager.size());
  for (size_t i = 0; i < a.size(); ++i) {
    check_same(a[i], eager[i], what + " (fused vs eager, output " + std::to_string(i) + ")");
    check_same(b[i], eager[i], what + " (unfused vs eager, output " + std::to_string(i) + ")");
  }
  const int got = count_op(fused.graph(), "fused_pointwise");
  BOOST_CHECK_MESSAGE(want_fused < 0 ? got >= 1 : got == want_fused,
                      what << ": " << count_op(fused.graph(), "fused_pointwise")
                           << " fused nodes, want " << want_fused << "\n"
                           << fused.graph().str());
  return std::move(const_cast<jit::Graph&>(fused.graph()));
}

std::vector<Tensor> chain(const std::vector<Tensor>& in) {
  Tensor x = in[0], y = in[1];
  Tensor t = (x * y + 1.5).sigmoid();
  t = kiln::tanh(t - x) * 2;
  t = kiln::relu(t) + kiln::exp(y * 0.25);
  return {t / (y.abs() + 1)};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fused_pointwise)

BOOST_AUTO_TEST_CASE(fused_chain_equals_unfused_for_each_floating_dtype) {
  kiln::manual_seed(1);
  for (kiln::ScalarType t : {kiln::kFloat, kiln::kDouble, kiln::kHalf, kiln::kBFloat16}) {
    Tensor x = kiln::randn({37, 19}).to(t), y = kiln::randn({37, 19}).to(t);
    check_fused(chain, {x, y}, std::string("chain ") + kiln::dtype_name(t));
  }
  // large enough to run on several threads, in several blocks
  Tensor x = kiln::randn({300, 1000}), y = kiln::randn({300, 1000});
  check_fused(chain, {x, y}, "chain 300x1000");
}

BOOST_AUTO_TEST_CASE(the_graph_prints_the_fused_group_with_its_steps) {
  Tensor x = kiln::randn({4, 5}), y = kiln::randn({4, 5});
  auto traced = jit::trace(chain, {x, y});
  const std::string s = traced.graph().str();
  BOOST_TEST_MESSAGE(s);
  BOOST_CHECK(s.find("kiln::fused_pointwise(group=0; r0=%input0, r1=%input1; ") !=
              std::string::npos);
  BOOST_CHECK(s.find("sigmoid(r") != std::string::npos);
  BOOST_CHECK(s.find("-> (r") != std::string::npos);
  BOOST_CHECK_EQUAL(count_op(traced.graph(), "mul"), 0);
}

BOOST_AUTO_TEST_CASE(broadcasting_strided_and_transposed_inputs) {
  kiln::manual_seed(2);
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {kiln::silu(in[0] * in[1] - in[2]) + kiln::maximum(in[0], in[2])};
  };
  Tensor a = kiln::randn({6, 7}), row = kiln::randn({7}), col = kiln::randn({6, 1});
  check_fused(fn, {a, row, col}, "broadcast row and column");
  Tensor t = kiln::randn({7, 6}).t();                  // transposed
  Tensor s = kiln::randn({6, 14}).slice(1, 0, 14, 2);  // strided
  check_fused(fn, {t, s, col}, "transposed and strided");
  Tensor scalar = kiln::randn({});
  check_fused(fn, {a, scalar, row}, "0-dim input");
  Tensor big = kiln::randn({3, 4, 5, 6}), small = kiln::randn({4, 1, 6});
  check_fused(fn, {big, small, big.permute({0, 2, 1, 3}).contiguous().permute({0, 2, 1, 3})},
              "4-d with permuted strides");
}

BOOST_AUTO_TEST_CASE(zero_size_tensors) {
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {kiln::exp(in[0] + in[1]) * 3};
  };
  check_fused(fn, {kiln::randn({0, 5}), kiln::randn({5})}, "0 x 5");
  check_fused(fn, {kiln::randn({3, 0}), kiln::randn({3, 1})}, "3 x 0");
}

BOOST_AUTO_TEST_CASE(a_value_used_outside_the_group_is_an_extra_output) {
  Tensor x = kiln::randn({8, 9});
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor h = kiln::tanh(in[0] * 3);  // read by the sum below: an output of the group
    Tensor out = kiln::sigmoid(h) * h + 1;
    return {out, h.sum(), h};  // and returned
  };
  jit::Graph g = check_fused(fn, {x}, "extra output");
  for (const auto& node : g.nodes) {
    if (std::string(node.call->op().name()) == "fused_pointwise") {
      BOOST_CHECK_EQUAL(node.outputs.size(), 2u);
    }
  }
}

BOOST_AUTO_TEST_CASE(nan_and_inf_edge_cases) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = kiln::tensor({0.0, -0.0, inf, -inf, nan, 1e30, -1e30, 1e-40, 3.0, -3.0});
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor a = kiln::maximum(in[0], kiln::zeros({})) - kiln::minimum(in[0], in[0] * 0.5);
    Tensor b = kiln::sqrt(kiln::abs(in[0])) / in[0] + kiln::log(kiln::abs(in[0]));
    Tensor c = kiln::where(kiln::gt(in[0], in[0] * 0.5), kiln::rsqrt(a), kiln::exp(in[0]));
    return {a * b + c, kiln::gelu(in[0]) * kiln::sigmoid(in[0])};
  };
  for (kiln::ScalarType t : {kiln::kFloat, kiln::kDouble, kiln::kHalf, kiln::kBFloat16}) {
    check_fused(fn, {x.to(t)}, std::string("edge cases ") + kiln::dtype_name(t), -1);
  }
}

BOOST_AUTO_TEST_CASE(integer_and_bool_programs) {
  Tensor a = kiln::randint(-100, 100, {5, 6}, kiln::kInt);
  Tensor b = kiln::randint(-100, 100, {6}, kiln::kInt);
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor m = kiln::maximum(in[0] * in[1] - in[1], kiln::neg(in[0]));
    return {kiln::where(kiln::lt(m, in[0]), m, kiln::abs(in[1]) + 7)};
  };
  // two groups: abs(b) + 7 has b's sizes, the rest a's
  check_fused(fn, {a, b}, "int32", 2);
  check_fused(fn, {a.to(kiln::kByte), b.to(kiln::kByte)}, "uint8 (wrapping)", 2);
  check_fused(fn, {a.to(kiln::kLong), b.to(kiln::kLong)}, "int64", 2);
}

BOOST_AUTO_TEST_CASE(mixed_dtypes_cast_as_the_unfused_operators) {
  Tensor h = kiln::randn({4, 5}).to(kiln::kHalf), f = kiln::randn({4, 5});
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor s = in[0] * in[0] + 1;        // float16
    return {kiln::tanh(s + in[1]) * 3};  // float32 (promotion)
  };
  check_fused(fn, {h, f}, "float16 with float32");
}

BOOST_AUTO_TEST_CASE(in_place_and_random_calls_are_not_fused_across) {
  Tensor x = kiln::randn({4, 4});
  auto fn = [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor a = in[0] * 2 + 1;
    a.mul_(3);  // in place: not fused, and a boundary
    Tensor b = kiln::exp(a) - 1;
    return {b + kiln::rand({4, 4}) * 0};
  };
  auto fused = jit::trace(fn, {x});
  const jit::Graph& g = fused.graph();
  BOOST_CHECK_EQUAL(count_op(g, "mul_"), 1);
  BOOST_CHECK_EQUAL(count_op(g, "rand"), count_op(g, "rand"));
  check_same(fused({x})[0], fn({x})[0], "in place");
}

BOOST_AUTO_TEST_CASE(a_group_of_one_node_stays_unfused) {
  Tensor x = kiln::randn({4, 4});
  auto traced = jit::trace([](const Tensor& t) { return kiln::exp(t).sum(); }, x);
  BOOST_CHECK_EQUAL(count_op(traced.graph(), "fused_pointwise"), 0);
  BOOST_CHECK_EQUAL(count_op(traced.graph(), "exp"), 1);
}

BOOST_AUTO_TEST_CASE(under_grad_the_unfused_nodes_run_and_autograd_records) {
  Tensor w = kiln::randn({3, 4}).requires_grad_();
  Tensor x = kiln::randn({3, 4});
  auto fn = [&w](const Tensor& t) { return (kiln::tanh(t * w) + 1).sigmoid(); };
  auto traced = jit::trace(fn, x);
  BOOST_CHECK_EQUAL(count_op(traced.graph(), "fused_pointwise"), 1);
  Tensor got = traced.forward(x);
  BOOST_REQUIRE(got.requires_grad());
  got.sum().backward();
  Tensor g1 = w.grad().clone();
  w.grad().zero_();
  fn(x).sum().backward();
  check_same(g1, w.grad(), "gradient through the fused node");
  // without grad, the program runs (and equals eager)
  kiln::NoGradGuard no_grad;
  check_same(traced.forward(x), fn(x), "no grad");
}

BOOST_AUTO_TEST_CASE(the_program_validates_every_field) {
  using jit::PointwiseProgram;
  Tensor x = kiln::randn({4});
  auto good = [] {
    PointwiseProgram p;
    p.compute = kiln::kFloat;
    p.n_inputs = 1;
    p.steps = {{pg::EXP, kiln::kFloat, 0}, {pg::MUL, kiln::kFloat, 1, 0}};
    p.outputs = {2};
    return p;
  };
  {
    kiln::NoGradGuard no_grad;
    auto out = jit::run_pointwise_program({x}, good());
    check_same(out[0], kiln::exp(x) * x, "a valid program");
  }
  auto refuses = [&](PointwiseProgram p, const std::string& needle) {
    CHECK_ERROR(kiln::ValueError, jit::run_pointwise_program({x}, p), needle);
  };
  PointwiseProgram p = good();
  p.steps[0].op = 999;
  refuses(p, "unknown op code 999");
  p = good();
  p.steps[1].b = 7;
  refuses(p, "operand register 7 is not written before it");
  p = good();
  p.steps[0].a = 1;  // reads its own register
  refuses(p, "operand register 1");
  p = good();
  p.steps[0].b = 0;  // exp takes one operand
  refuses(p, "unused operand 1 must be -1");
  p = good();
  p.outputs = {5};
  refuses(p, "output 0: register 5 out of range");
  p = good();
  p.steps[1].dtype = kiln::kDouble;
  refuses(p, "cannot be a register of a float32 program");
  p = good();
  p.compute = kiln::kLong;
  refuses(p, "float32, which a int64 program cannot load");
  p = good();
  p.version = 2;
  refuses(p, "program version 2 is not supported");
  p = good();
  p.steps.push_back({pg::CONST, kiln::kFloat, 3});
  p.outputs = {3};
  refuses(p, "constant index 3 out of range");
  p = good();
  p.n_inputs = 2;
  refuses(p, "the program reads 2 inputs, the call passes 1");
  p = good();
  p.outputs = {};
  refuses(p, "0 outputs");
  p = good();
  p.steps.assign(2000, {pg::NEG, kiln::kFloat, 0});
  refuses(p, "2000 steps");
  // a malformed flat list (what a loaded graph could hold)
  std::vector<int64_t> flat = good().encode();
  flat[3] = int64_t{1} << 62;  // n_steps: bounded before any product
  CHECK_ERROR(kiln::ValueError, PointwiseProgram::decode(flat), "steps");
  flat = good().encode();
  flat.pop_back();
  CHECK_ERROR(kiln::ValueError, PointwiseProgram::decode(flat), "entries where its header");
  // an input that requires grad under grad mode
  Tensor w = kiln::randn({4}).requires_grad_();
  CHECK_ERROR(kiln::ValueError, jit::run_pointwise_program({w}, good()), "has no backward");
}

BOOST_AUTO_TEST_CASE(checkerboard_net_forward_traced_with_fusion_equals_eager) {
  namespace nn = kiln::nn;
  kiln::manual_seed(5);
  nn::Sequential net(nn::Linear(2, 64), nn::Tanh(), nn::Linear(64, 64), nn::ReLU(),
                     nn::Linear(64, 1), nn::Sigmoid());
  net->eval();
  kiln::NoGradGuard no_grad;
  Tensor x = kiln::rand({256, 2}) * 2 - 1;
  auto traced = jit::trace_module(net, {x});
  check_same(traced.forward(x), net->forward(x), "checkerboard-style MLP");
  // the checkerboard net of tests/jit/test_jit.cpp (conv, batch norm, ReLU), in eval mode
  nn::Sequential conv(nn::Conv2d(nn::Conv2dOptions(2, 16, 1)), nn::BatchNorm2d(16), nn::ReLU(),
                      nn::Conv2d(nn::Conv2dOptions(16, 16, 1)), nn::BatchNorm2d(16), nn::ReLU(),
                      nn::Conv2d(nn::Conv2dOptions(16, 1, 1)));
  conv->eval();
  Tensor img = kiln::rand({2, 2, 16, 16});
  auto traced_conv = jit::trace_module(conv, {img});
  check_same(traced_conv.forward(img), conv->forward(img), "checkerboard conv net");
  // a pointwise tail on the output: fused
  auto tail =
      jit::trace([&](const Tensor& t) { return kiln::sigmoid(conv->forward(t)) * 2 - 1; }, img);
  // the tail, and the batch norms' per-channel arithmetic on their parameters
  BOOST_CHECK_GE(count_op(tail.graph(), "fused_pointwise"), 1);
  check_same(tail.forward(img), kiln::sigmoid(conv->forward(img)) * 2 - 1, "pointwise tail");
}

BOOST_AUTO_TEST_SUITE_END()
