// kiln::nn::Module: registration and its errors, dotted names, traversal, printing (against
// PyTorch's reprs), holders, containers, train/eval, to(), zero_grad.
#include "golden.h"

#include <sstream>

namespace nn = kiln::nn;
using kiln::Tensor;
using nn_test::golden_case;

namespace {

std::string printed(const nn::Module& m) {
  std::ostringstream out;
  out << m;
  return out.str();
}

struct MergeImpl : nn::Module {
  MergeImpl()
      : linear1(register_module("linear1", nn::Linear(5, 10))),
        linear2(register_module("linear2", nn::Linear(6, 10))) {}
  Tensor forward(const Tensor& a, const Tensor& b) { return linear1(a) + linear2(b); }
  nn::Linear linear1, linear2;
};
KILN_MODULE(Merge);

struct OuterImpl : nn::Module {
  OuterImpl()
      : merge(register_module("merge", Merge())),
        head(register_module(
            "head", nn::Sequential(nn::ReLU(), nn::Linear(nn::LinearOptions(10, 1).bias(false))))) {
  }
  Merge merge;
  nn::Sequential head;
};
KILN_MODULE(Outer);

std::string joined_names(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::string s;
  for (const auto& [name, t] : named) s += (s.empty() ? "" : " ") + name;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(module)

BOOST_AUTO_TEST_CASE(user_module_registers_parameters) {
  struct Net : nn::Module {
    Net() {
      a = register_parameter("a", kiln::rand({1}));
      b = register_parameter("b", kiln::rand({1}));
      c = register_buffer("c", kiln::zeros({2}));
    }
    Tensor a, b, c;
  } net;
  auto named = net.named_parameters();
  BOOST_REQUIRE_EQUAL(named.size(), 2u);
  BOOST_CHECK_EQUAL(named[0].first, "a");
  BOOST_CHECK_EQUAL(named[1].first, "b");
  BOOST_CHECK(named[0].second.is_same(net.a));
  BOOST_CHECK(net.a.requires_grad() && net.a.is_leaf());
  BOOST_CHECK_EQUAL(net.parameters().size(), 2u);
  BOOST_CHECK_EQUAL(net.named_buffers().at(0).first, "c");
  BOOST_CHECK(!net.c.requires_grad());
  BOOST_CHECK_EQUAL(printed(net), "Net()");
  BOOST_CHECK_EQUAL(net.name(), "Net");
}

BOOST_AUTO_TEST_CASE(registration_errors) {
  nn::Module m("M");
  m.register_parameter("w", kiln::zeros({1}));
  CHECK_ERROR(kiln::ValueError, m.register_parameter("w", kiln::zeros({1})),
              "M: cannot register parameter \"w\": the name is already taken");
  CHECK_ERROR(kiln::ValueError, m.register_buffer("w", kiln::zeros({1})), "already taken");
  CHECK_ERROR(kiln::ValueError, m.register_module("w", nn::ReLU()), "already taken");
  CHECK_ERROR(kiln::ValueError, m.register_parameter("a.b", kiln::zeros({1})),
              "parameter name must not contain a dot (got \"a.b\")");
  CHECK_ERROR(kiln::ValueError, m.register_parameter("", kiln::zeros({1})),
              "parameter name must not be empty");
  CHECK_ERROR(kiln::TypeError, m.register_parameter("i", kiln::zeros({1}, kiln::kLong)),
              "parameter \"i\" must be a floating point tensor to require grad (got int64)");
  CHECK_ERROR(kiln::ValueError, m.register_module("n", nn::Linear(nullptr)),
              "cannot register an empty submodule \"n\"");
  CHECK_ERROR(kiln::IndexError, m.replace_module("nope", std::make_shared<nn::ReLUImpl>()),
              "no submodule named \"nope\"");
  nn::Linear empty(nullptr);
  CHECK_ERROR(kiln::Error, (void)empty->weight, "Accessing an empty ModuleHolder");
  // an integer buffer is fine; a parameter without grad too
  m.register_parameter("frozen", kiln::zeros({1}, kiln::kLong), /*requires_grad=*/false);
  BOOST_CHECK_EQUAL(m.parameters().size(), 2u);
}

BOOST_AUTO_TEST_CASE(dotted_names_and_printing_match_pytorch) {
  Outer outer;
  const auto& golden = golden_case("nested");
  BOOST_CHECK_EQUAL(joined_names(outer->named_parameters()), golden.strings.at("names"));
  std::string modules;
  for (const auto& [name, m] : outer->named_modules()) {
    modules += (modules.empty() ? "" : " ") + (name.empty() ? std::string("<root>") : name);
  }
  BOOST_CHECK_EQUAL(modules, golden.strings.at("modules"));
  BOOST_CHECK_EQUAL(printed(*outer), golden.repr);
  BOOST_CHECK_EQUAL(outer->children().size(), 2u);
  BOOST_CHECK_EQUAL(outer->modules().size(), 7u);
  BOOST_CHECK_EQUAL(outer->named_modules("net", false).front().first, "net.merge");
  BOOST_CHECK_EQUAL(outer->named_parameters(/*recurse=*/false).size(), 0u);
  // a module object not held by a shared_ptr cannot list itself
  OuterImpl plain;
  CHECK_ERROR(kiln::Error, plain.modules(), "need the module to be held by a std::shared_ptr");
  BOOST_CHECK_EQUAL(plain.modules(/*include_self=*/false).size(), 6u);
}

BOOST_AUTO_TEST_CASE(sequential_prints_and_names_like_pytorch) {
  nn::Sequential seq(nn::Linear(64, 32), nn::ReLU(), nn::Linear(32, 10));
  BOOST_CHECK_EQUAL(printed(*seq), golden_case("sequential").repr);
  BOOST_CHECK_EQUAL(joined_names(seq->named_parameters()), "0.weight 0.bias 2.weight 2.bias");
  nn::Sequential checker(nn::Conv2d(2, 256, 1), nn::BatchNorm2d(256), nn::ReLU(),
                         nn::Conv2d(256, 256, 1), nn::BatchNorm2d(256), nn::ReLU(),
                         nn::Conv2d(256, 256, 1), nn::BatchNorm2d(256), nn::ReLU(),
                         nn::Conv2d(256, 1, 1));
  const auto& golden = golden_case("checkerboard");
  BOOST_CHECK_EQUAL(printed(*checker), golden.repr);
  std::string names;
  for (const auto& [name, p] : checker->named_parameters()) {
    names += (names.empty() ? "" : " ") + name + ":";
    for (int64_t d = 0; d < p.dim(); ++d) names += (d ? "x" : "") + std::to_string(p.size(d));
  }
  BOOST_CHECK_EQUAL(names, golden.strings.at("names"));
  BOOST_CHECK_EQUAL(joined_names(checker->named_buffers()), golden.strings.at("buffers"));
}

BOOST_AUTO_TEST_CASE(module_reprs_match_pytorch) {
  nn::Conv2d conv(
      nn::Conv2dOptions(3, 8, {3, 5}).stride(2).padding({1, 2}).dilation(2).bias(false));
  BOOST_CHECK_EQUAL(printed(*conv), golden_case("conv_options").repr);
  BOOST_CHECK_EQUAL(printed(*nn::Conv2d(nn::Conv2dOptions(4, 8, 3).groups(2))),
                    golden_case("conv_groups").repr);
  nn::ModuleList list(
      nn::LayerNorm(std::vector<int64_t>{10}),
      nn::LayerNorm(nn::LayerNormOptions({3, 4}).eps(1e-3).elementwise_affine(false)),
      nn::Dropout(0.25), nn::Embedding(10, 3),
      nn::Embedding(nn::EmbeddingOptions(5, 2).padding_idx(0)), nn::Flatten(), nn::Sigmoid(),
      nn::Tanh(), nn::ReLU(true),
      nn::BatchNorm2d(
          nn::BatchNormOptions(4).momentum(std::nullopt).affine(false).track_running_stats(false)),
      nn::MSELoss(), nn::CrossEntropyLoss(), nn::BCELoss(), nn::BCEWithLogitsLoss(), nn::NLLLoss(),
      nn::Sequential());
  BOOST_CHECK_EQUAL(printed(*list), golden_case("misc").repr);
  nn::ModuleList softplus(nn::Softplus(),
                          nn::Softplus(nn::SoftplusOptions().beta(0.5).threshold(3)));
  BOOST_CHECK_EQUAL(printed(*softplus), golden_case("softplus").repr);
}

BOOST_AUTO_TEST_CASE(holders_and_containers) {
  nn::Linear lin(64, 32);
  BOOST_CHECK_EQUAL(lin->weight.sizes(), kiln::IntArrayRef({32, 64}));
  Tensor y = lin(kiln::ones({5, 64}));
  BOOST_CHECK_EQUAL(y.sizes(), kiln::IntArrayRef({5, 32}));
  BOOST_CHECK(lin->as<nn::Linear>() == lin.get());
  BOOST_CHECK(lin->as<nn::ReLU>() == nullptr);

  nn::Sequential seq(nn::Linear(4, 3), nn::ReLU());
  seq->push_back(nn::Linear(3, 2));
  seq->push_back("act", nn::Functional([](const Tensor& x) { return kiln::tanh(x); }));
  seq->push_back([](const Tensor& x) { return x * 2; });  // a callable becomes Functional
  BOOST_CHECK_EQUAL(seq->size(), 5u);
  BOOST_CHECK(seq[2]->as<nn::Linear>() != nullptr);
  BOOST_CHECK_EQUAL(seq->at<nn::LinearImpl>(0).options.out_features(), 3);
  BOOST_CHECK(seq->ptr<nn::ReLUImpl>(1) != nullptr);
  BOOST_CHECK_EQUAL(joined_names(seq->named_parameters()), "0.weight 0.bias 2.weight 2.bias");
  BOOST_CHECK_EQUAL(seq->named_children()[3].first, "act");
  Tensor x = kiln::randn({7, 4});
  Tensor manual = kiln::tanh(seq[2]->as<nn::Linear>()->forward(
                      kiln::relu(seq->at<nn::LinearImpl>(0).forward(x)))) *
                  2;
  BOOST_CHECK(seq(x).allclose(manual));
  CHECK_ERROR(kiln::IndexError, seq[9], "Sequential: index 9 is out of range");
  CHECK_ERROR(kiln::TypeError, seq->at<nn::ReLUImpl>(0), "module 0 is not of the requested type");
  CHECK_ERROR(kiln::Error, nn::Sequential()->forward(x), "cannot call forward() on an empty");

  nn::ModuleList list(nn::Linear(2, 2), nn::ReLU());
  list->push_back(nn::Linear(2, 1));
  nn::ModuleList more{nn::Tanh()};
  list->extend(*more);
  BOOST_CHECK_EQUAL(list->size(), 4u);
  BOOST_CHECK_EQUAL(list->named_children()[3].first, "3");
  int count = 0;
  for (const auto& m : *list) count += m->as<nn::Linear>() != nullptr;
  BOOST_CHECK_EQUAL(count, 2);
  CHECK_ERROR(kiln::IndexError, list[4], "ModuleList: index 4 is out of range");

  // a shared submodule is listed once
  nn::Linear shared(2, 2);
  nn::Sequential twice(shared, shared);
  BOOST_CHECK_EQUAL(twice->parameters().size(), 2u);
}

BOOST_AUTO_TEST_CASE(train_eval_and_zero_grad) {
  nn::Sequential seq(nn::Linear(3, 3), nn::Dropout(0.5), nn::BatchNorm2d(3));
  BOOST_CHECK(seq->is_training());
  seq->eval();
  for (const auto& m : seq->modules()) BOOST_CHECK(!m->is_training());
  seq->train();
  for (const auto& m : seq->modules()) BOOST_CHECK(m->is_training());

  nn::Linear lin(3, 2);
  kiln::sum(lin(kiln::ones({4, 3}))).backward();
  BOOST_CHECK(lin->weight.grad().defined());
  lin->zero_grad(/*set_to_none=*/false);
  BOOST_CHECK(lin->weight.grad().defined());
  BOOST_CHECK_EQUAL(kiln::sum(kiln::abs(lin->weight.grad())).item<double>(), 0.0);
  lin->zero_grad();
  BOOST_CHECK(!lin->weight.grad().defined() && !lin->bias.grad().defined());
}

BOOST_AUTO_TEST_CASE(to_converts_in_place_and_keeps_leaves) {
  nn::Sequential seq(nn::Linear(3, 2), nn::BatchNorm2d(2));
  Tensor w = seq[0]->as<nn::Linear>()->weight;  // a handle held outside the module
  std::vector<double> before = nn_test::values(w);
  kiln::sum(seq[0]->as<nn::Linear>()->forward(kiln::ones({1, 3}))).backward();
  seq->to(kiln::kDouble);
  BOOST_CHECK(w.dtype() == kiln::kDouble);
  BOOST_CHECK(w.requires_grad() && w.is_leaf());
  BOOST_CHECK(w.grad().dtype() == kiln::kDouble);
  BOOST_CHECK(nn_test::values(w) == before);
  auto* bn = seq[1]->as<nn::BatchNorm2d>();
  BOOST_CHECK(bn->running_mean.dtype() == kiln::kDouble);
  BOOST_CHECK(bn->num_batches_tracked.dtype() == kiln::kLong);  // integers keep their dtype
  Tensor y = seq[0]->as<nn::Linear>()->forward(kiln::ones({2, 3}, kiln::kDouble));
  BOOST_CHECK(y.dtype() == kiln::kDouble);
  kiln::sum(y).backward();  // gradients flow to the converted leaves
  BOOST_CHECK(w.grad().dtype() == kiln::kDouble);
  seq->to(kiln::Device("cpu"), kiln::kFloat);
  BOOST_CHECK(w.dtype() == kiln::kFloat);
  seq->to(kiln::Device("cpu"));
  BOOST_CHECK(w.device().is_cpu());
}

BOOST_AUTO_TEST_SUITE_END()
