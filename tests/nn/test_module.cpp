// kiln::nn::Module: registration and its errors, dotted names, traversal, printing (libtorch's
// format, see kiln/nn/module.h), holders, containers, train/eval, to(), zero_grad.
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

std::string joined_names(const kiln::OrderedDict<std::string, Tensor>& named) {
  std::string s;
  for (const auto& [name, t] : named) s += (s.empty() ? "" : " ") + name;
  return s;
}

}  // namespace

namespace names_test {
struct AGIUnit : nn::Module {};
struct Renamed : nn::Module {
  Renamed() : nn::Module("Foo") {}
};
}  // namespace names_test

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
  kiln::OrderedDict<std::string, Tensor> named = net.named_parameters();
  BOOST_REQUIRE_EQUAL(named.size(), 2u);
  BOOST_CHECK_EQUAL(named[0].key(), "a");
  BOOST_CHECK_EQUAL(named[1].key(), "b");
  BOOST_CHECK(named[0].value().is_same(net.a));
  BOOST_CHECK(named["b"].is_same(net.b));
  BOOST_CHECK(named.contains("a") && !named.contains("c"));
  BOOST_CHECK_EQUAL(named.key_description(), "Parameter");
  CHECK_ERROR(kiln::IndexError, named["c"], "Parameter 'c' is not defined");
  BOOST_CHECK(net.a.requires_grad() && net.a.is_leaf());
  BOOST_CHECK_EQUAL(net.parameters().size(), 2u);
  BOOST_CHECK_EQUAL(net.named_buffers()[0].key(), "c");
  BOOST_CHECK(!net.c.requires_grad());
  // the name is the demangled class name, and a module without pretty_print prints it
  BOOST_CHECK_EQUAL(printed(net), net.name());
  BOOST_CHECK_EQUAL(names_test::AGIUnit().name(), "names_test::AGIUnit");
  BOOST_CHECK_EQUAL(names_test::Renamed().name(), "Foo");
  BOOST_CHECK_EQUAL(printed(names_test::AGIUnit()), "names_test::AGIUnit");
  BOOST_CHECK_EQUAL(nn::Linear(1, 1)->name(), "kiln::nn::LinearImpl");
  // structured bindings on the items, with the value by reference
  auto params = net.named_parameters();
  for (auto& [name, t] : params) t = kiln::zeros({1});
  BOOST_CHECK(!params["a"].is_same(net.a));
}

BOOST_AUTO_TEST_CASE(registration_errors) {
  nn::Module m("M");
  m.register_parameter("w", kiln::zeros({1}));
  CHECK_ERROR(kiln::ValueError, m.register_parameter("w", kiln::zeros({1})),
              "M: Parameter 'w' already defined");
  CHECK_ERROR(kiln::ValueError, m.register_buffer("w", kiln::zeros({1})),
              "M: Buffer 'w' already defined (as a Parameter)");
  CHECK_ERROR(kiln::ValueError, m.register_module("w", nn::ReLU()),
              "Submodule 'w' already defined (as a Parameter)");
  m.register_buffer("buf", kiln::zeros({1}));
  CHECK_ERROR(kiln::ValueError, m.register_buffer("buf", kiln::zeros({1})),
              "M: Buffer 'buf' already defined");
  m.register_module("sub", nn::ReLU());
  CHECK_ERROR(kiln::ValueError, m.register_module("sub", nn::ReLU()),
              "M: Submodule 'sub' already defined");
  CHECK_ERROR(kiln::ValueError, m.register_parameter("a.b", kiln::zeros({1})),
              "Parameter name must not contain a dot (got 'a.b')");
  CHECK_ERROR(kiln::ValueError, m.register_parameter("", kiln::zeros({1})),
              "Parameter name must not be empty");
  CHECK_ERROR(kiln::ValueError, m.register_buffer("", kiln::zeros({1})),
              "Buffer name must not be empty");
  CHECK_ERROR(kiln::ValueError, m.register_module("x.y", nn::ReLU()),
              "Submodule name must not contain a dot (got 'x.y')");
  CHECK_ERROR(kiln::TypeError, m.register_parameter("i", kiln::zeros({1}, kiln::kLong)),
              "parameter 'i' must be a floating point tensor to require grad (got int64)");
  CHECK_ERROR(kiln::ValueError, m.register_module("n", nn::Linear(nullptr)),
              "cannot register an empty submodule 'n'");
  CHECK_ERROR(kiln::IndexError, m.replace_module("nope", std::make_shared<nn::ReLUImpl>()),
              "M: Submodule 'nope' is not defined");
  auto tanh = m.replace_module("sub", nn::Tanh());
  BOOST_CHECK(m.named_children()["sub"].get() == tanh.get());
  m.unregister_module("sub");
  BOOST_CHECK(m.children().empty());
  CHECK_ERROR(kiln::IndexError, m.unregister_module("sub"), "No Module with name `sub`");
  nn::Linear empty(nullptr);
  CHECK_ERROR(kiln::Error, (void)empty->weight, "Accessing empty ModuleHolder");
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
  BOOST_CHECK_EQUAL(printed(*outer), "(anonymous namespace)::OuterImpl(\n"
                                     "  (merge): (anonymous namespace)::MergeImpl(\n"
                                     "    (linear1): kiln::nn::Linear(in_features=5, "
                                     "out_features=10, bias=true)\n"
                                     "    (linear2): kiln::nn::Linear(in_features=6, "
                                     "out_features=10, bias=true)\n"
                                     "  )\n"
                                     "  (head): kiln::nn::Sequential(\n"
                                     "    (0): kiln::nn::ReLU()\n"
                                     "    (1): kiln::nn::Linear(in_features=10, out_features=1, "
                                     "bias=false)\n"
                                     "  )\n"
                                     ")");
  BOOST_CHECK_EQUAL(outer->children().size(), 2u);
  BOOST_CHECK_EQUAL(outer->modules().size(), 7u);
  BOOST_CHECK_EQUAL(outer->named_modules("net", false).front().key(), "net.merge");
  BOOST_CHECK_EQUAL(outer->named_modules("net")["net.head.1"]->name(), "kiln::nn::LinearImpl");
  BOOST_CHECK_EQUAL(outer->named_parameters(/*recurse=*/false).size(), 0u);
  // apply: parents first, with dotted paths after the prefix
  std::string applied;
  outer->apply([&](const std::string& path, nn::Module&) { applied += path + " "; }, "p");
  BOOST_CHECK_EQUAL(applied, "p p.merge p.merge.linear1 p.merge.linear2 p.head p.head.0 "
                             "p.head.1 ");
  int count = 0;
  std::as_const(*outer).apply([&](const nn::Module&) { ++count; });
  outer->apply([&](const std::shared_ptr<nn::Module>& m) { count += m != nullptr; });
  BOOST_CHECK_EQUAL(count, 14);
  // a module object not held by a shared_ptr cannot list itself
  OuterImpl plain;
  CHECK_ERROR(kiln::Error, plain.modules(),
              "It looks like you attempted to retrieve your top-level module as a shared_ptr");
  BOOST_CHECK_EQUAL(plain.modules(/*include_self=*/false).size(), 6u);
}

BOOST_AUTO_TEST_CASE(sequential_prints_and_names_like_pytorch) {
  nn::Sequential seq(nn::Linear(64, 32), nn::ReLU(), nn::Linear(32, 10));
  BOOST_CHECK_EQUAL(printed(*seq),
                    "kiln::nn::Sequential(\n"
                    "  (0): kiln::nn::Linear(in_features=64, out_features=32, bias=true)\n"
                    "  (1): kiln::nn::ReLU()\n"
                    "  (2): kiln::nn::Linear(in_features=32, out_features=10, bias=true)\n"
                    ")");
  BOOST_CHECK_EQUAL(joined_names(seq->named_parameters()), "0.weight 0.bias 2.weight 2.bias");
  nn::Sequential checker(nn::Conv2d(2, 256, 1), nn::BatchNorm2d(256), nn::ReLU(),
                         nn::Conv2d(256, 256, 1), nn::BatchNorm2d(256), nn::ReLU(),
                         nn::Conv2d(256, 256, 1), nn::BatchNorm2d(256), nn::ReLU(),
                         nn::Conv2d(256, 1, 1));
  const auto& golden = golden_case("checkerboard");
  std::string checker_printed = printed(*checker);
  BOOST_CHECK(checker_printed.find("  (1): kiln::nn::BatchNorm2d(256, eps=1e-05, momentum=0.1, "
                                   "affine=true, track_running_stats=true)\n") !=
              std::string::npos);
  BOOST_CHECK(checker_printed.find("  (9): kiln::nn::Conv2d(256, 1, kernel_size=[1, 1], "
                                   "stride=[1, 1])\n)") != std::string::npos);
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
  BOOST_CHECK_EQUAL(printed(*conv), "kiln::nn::Conv2d(3, 8, kernel_size=[3, 5], stride=[2, 2], "
                                    "padding=[1, 2], dilation=[2, 2], bias=false)");
  BOOST_CHECK_EQUAL(printed(*nn::Conv2d(nn::Conv2dOptions(4, 8, 3).groups(2))),
                    "kiln::nn::Conv2d(4, 8, kernel_size=[3, 3], stride=[1, 1], groups=2)");
  // libtorch's own cases (PrettyPrintLinear, PrettyPrintConv, PrettyPrintLayerNorm, ...)
  BOOST_CHECK_EQUAL(printed(*nn::Linear(3, 4)),
                    "kiln::nn::Linear(in_features=3, out_features=4, bias=true)");
  BOOST_CHECK_EQUAL(printed(*nn::Conv2d(3, 4, 5)),
                    "kiln::nn::Conv2d(3, 4, kernel_size=[5, 5], stride=[1, 1])");
  BOOST_CHECK_EQUAL(printed(*nn::LayerNorm(nn::LayerNormOptions({2, 2}))),
                    "kiln::nn::LayerNorm([2, 2], eps=1e-05, elementwise_affine=true)");
  BOOST_CHECK_EQUAL(
      printed(*nn::BatchNorm2d(nn::BatchNormOptions(4).eps(0.5).momentum(0.1).affine(false))),
      "kiln::nn::BatchNorm2d(4, eps=0.5, momentum=0.1, affine=false, "
      "track_running_stats=true)");
  BOOST_CHECK_EQUAL(printed(*nn::Dropout(0.5)), "kiln::nn::Dropout(p=0.5, inplace=false)");
  BOOST_CHECK_EQUAL(printed(*nn::Embedding(10, 2)),
                    "kiln::nn::Embedding(num_embeddings=10, embedding_dim=2)");
  BOOST_CHECK_EQUAL(printed(*nn::Identity()), "kiln::nn::Identity()");
  BOOST_CHECK_EQUAL(printed(*nn::ReLU()), "kiln::nn::ReLU()");
  BOOST_CHECK_EQUAL(printed(*nn::Functional(kiln::relu)), "kiln::nn::Functional()");
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
  BOOST_CHECK_EQUAL(printed(*list),
                    "kiln::nn::ModuleList(\n"
                    "  (0): kiln::nn::LayerNorm([10], eps=1e-05, elementwise_affine=true)\n"
                    "  (1): kiln::nn::LayerNorm([3, 4], eps=0.001, elementwise_affine=false)\n"
                    "  (2): kiln::nn::Dropout(p=0.25, inplace=false)\n"
                    "  (3): kiln::nn::Embedding(num_embeddings=10, embedding_dim=3)\n"
                    "  (4): kiln::nn::Embedding(num_embeddings=5, embedding_dim=2, padding_idx=0)\n"
                    "  (5): kiln::nn::Flatten(start_dim=1, end_dim=-1)\n"
                    "  (6): kiln::nn::Sigmoid()\n"
                    "  (7): kiln::nn::Tanh()\n"
                    "  (8): kiln::nn::ReLU(inplace=true)\n"
                    "  (9): kiln::nn::BatchNorm2d(4, eps=1e-05, momentum=None, affine=false, "
                    "track_running_stats=false)\n"
                    "  (10): kiln::nn::MSELoss()\n"
                    "  (11): kiln::nn::CrossEntropyLoss()\n"
                    "  (12): kiln::nn::BCELoss()\n"
                    "  (13): kiln::nn::BCEWithLogitsLoss()\n"
                    "  (14): kiln::nn::NLLLoss()\n"
                    "  (15): kiln::nn::Sequential\n"
                    ")");
  nn::ModuleList softplus(nn::Softplus(),
                          nn::Softplus(nn::SoftplusOptions().beta(0.5).threshold(3)));
  BOOST_CHECK_EQUAL(printed(*softplus), "kiln::nn::ModuleList(\n"
                                        "  (0): kiln::nn::Softplus(beta=1, threshold=20)\n"
                                        "  (1): kiln::nn::Softplus(beta=0.5, threshold=3)\n"
                                        ")");
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
  BOOST_CHECK_EQUAL(seq->named_children()[3].key(), "act");
  Tensor x = kiln::randn({7, 4});
  Tensor manual = kiln::tanh(seq[2]->as<nn::Linear>()->forward(
                      kiln::relu(seq->at<nn::LinearImpl>(0).forward(x)))) *
                  2;
  BOOST_CHECK(seq(x).allclose(manual));
  CHECK_ERROR(kiln::IndexError, seq[9], "Index out of range");
  CHECK_ERROR(kiln::TypeError, seq->at<nn::ReLUImpl>(0),
              "Attempted to cast module of type kiln::nn::LinearImpl to type kiln::nn::ReLUImpl");
  CHECK_ERROR(kiln::Error, nn::Sequential()->forward(x),
              "Cannot call forward() on an empty Sequential");

  nn::ModuleList list(nn::Linear(2, 2), nn::ReLU());
  list->push_back(nn::Linear(2, 1));
  nn::ModuleList more{nn::Tanh()};
  list->extend(*more);
  BOOST_CHECK_EQUAL(list->size(), 4u);
  BOOST_CHECK_EQUAL(list->named_children()[3].key(), "3");
  int count = 0;
  for (const auto& m : *list) count += m->as<nn::Linear>() != nullptr;
  BOOST_CHECK_EQUAL(count, 2);
  CHECK_ERROR(kiln::IndexError, list[4], "Index out of range");

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
