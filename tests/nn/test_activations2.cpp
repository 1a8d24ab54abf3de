// Issue 15's remaining activations and pointwise math: input gradients against PyTorch 1.13's
// (tests/golden/grad_activation_cases.txt, make_activation_golden.py, float64), the modules
// (options, in place, pretty_print in libtorch's format), PReLU's learned weight, autocast
// policies and the error paths. Values are checked by the conformance suite
// (tools/conformance/cases_activation.cpp) and finite differences by test_gradcheck.
#include "golden.h"

#include <kiln/amp.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;
using Inputs = std::vector<Tensor>;

namespace {

auto f64() { return kiln::TensorOptions().dtype(kiln::kDouble); }

std::string repr(const nn::Module& m) {
  std::ostringstream s;
  m.pretty_print(s);
  return s.str();
}

// make_activation_golden.py's GRADS, under the same names.
const std::map<std::string, std::function<Tensor(const Inputs&)>>& grad_functions() {
  static const std::map<std::string, std::function<Tensor(const Inputs&)>> fns = {
      {"elu", [](const Inputs& x) { return F::elu(x[0], F::ELUFuncOptions().alpha(0.7)); }},
      {"elu_negative_alpha", [](const Inputs& x) { return kiln::elu(x[0], -0.5); }},
      {"selu", [](const Inputs& x) { return F::selu(x[0]); }},
      {"celu", [](const Inputs& x) { return F::celu(x[0], F::CELUFuncOptions().alpha(1.5)); }},
      {"hardtanh",
       [](const Inputs& x) {
         return F::hardtanh(x[0], F::HardtanhFuncOptions().min_val(-0.5).max_val(0.75));
       }},
      {"relu6", [](const Inputs& x) { return F::relu6(x[0] * 8 - 1); }},
      {"hardswish", [](const Inputs& x) { return F::hardswish(x[0] * 5); }},
      {"hardsigmoid", [](const Inputs& x) { return F::hardsigmoid(x[0] * 5); }},
      {"threshold",
       [](const Inputs& x) { return F::threshold(x[0], F::ThresholdFuncOptions(0.1, -3.0)); }},
      {"prelu", [](const Inputs& x) { return F::prelu(x[0], x[1]); }},
      {"glu", [](const Inputs& x) { return F::glu(x[0], 1); }},
      {"softmin", [](const Inputs& x) { return F::softmin(x[0], 1); }},
      {"atan2", [](const Inputs& x) { return kiln::atan2(x[0], x[1]); }},
      {"logaddexp", [](const Inputs& x) { return kiln::logaddexp(x[0], x[1]); }},
      {"logaddexp2", [](const Inputs& x) { return kiln::logaddexp2(x[0], x[1]); }},
      {"hypot", [](const Inputs& x) { return x[0].hypot(x[1]); }},
      {"copysign", [](const Inputs& x) { return x[0].copysign(x[1]); }},
      {"xlogy", [](const Inputs& x) { return kiln::xlogy(x[0], x[1] + 1.5); }},
      {"lerp", [](const Inputs& x) { return kiln::lerp(x[0], x[1], x[2]); }},
      {"lerp_scalar", [](const Inputs& x) { return x[0].lerp(x[1], 0.3); }},
      {"addcmul", [](const Inputs& x) { return kiln::addcmul(x[0], x[1], x[2], 0.5); }},
      {"addcdiv", [](const Inputs& x) { return x[0].addcdiv(x[1], x[2] + 2, -1.5); }},
      {"clamp_tensor", [](const Inputs& x) { return kiln::clamp(x[0], x[1], x[2] + 0.5); }},
      {"nan_to_num", [](const Inputs& x) { return kiln::nan_to_num(kiln::log(x[0])); }},
  };
  return fns;
}

// "<ndim> <sizes...> <values...>" as a float64 tensor.
Tensor parse_shaped(std::istringstream& in) {
  int64_t ndim = 0;
  in >> ndim;
  std::vector<int64_t> sizes(static_cast<size_t>(ndim));
  for (int64_t& s : sizes) in >> s;
  std::vector<double> v;
  std::string word;
  while (in >> word) v.push_back(std::stod(word));
  return kiln::tensor(v, f64()).reshape(sizes);
}

struct GradRecord {
  std::string name;
  Inputs inputs;
  Tensor gout, out;
  std::vector<Tensor> grads;  // undefined: none
};

std::vector<GradRecord> grad_records() {
  std::ifstream file(std::string(KILN_GOLDEN_DIR) + "/grad_activation_cases.txt");
  BOOST_REQUIRE_MESSAGE(file, "cannot open grad_activation_cases.txt");
  std::vector<GradRecord> records;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "case") {
      records.emplace_back();
      in >> records.back().name;
    } else if (key == "in") {
      records.back().inputs.push_back(parse_shaped(in));
    } else if (key == "gout") {
      records.back().gout = parse_shaped(in);
    } else if (key == "out") {
      records.back().out = parse_shaped(in);
    } else if (key == "grad") {
      size_t i = 0;
      in >> i;
      std::vector<double> v;
      std::string word;
      while (in >> word && word != "none") v.push_back(std::stod(word));
      const Tensor& like = records.back().inputs.at(i);
      records.back().grads.push_back(v.empty() ? Tensor()
                                               : kiln::tensor(v, f64()).reshape(like.sizes()));
    }
  }
  return records;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(activations2)

// Forward values and every input's gradient equal PyTorch's in float64 (elu's negative alpha,
// hardtanh's zero gradient at the bounds, prelu's weight, lerp's weight, clamp's bounds, ...).
BOOST_AUTO_TEST_CASE(gradients_match_pytorch) {
  int checked = 0;
  for (GradRecord& r : grad_records()) {
    BOOST_TEST_CONTEXT(r.name) {
      auto fn = grad_functions().find(r.name);
      BOOST_REQUIRE_MESSAGE(fn != grad_functions().end(), "no function for " << r.name);
      for (Tensor& t : r.inputs) t.requires_grad_(true);
      Tensor out = fn->second(r.inputs);
      BOOST_CHECK(out.allclose(r.out, 1e-10, 1e-12));
      std::vector<Tensor> grads =
          kiln::autograd::grad({out}, r.inputs, {r.gout}, std::nullopt, false, true);
      for (size_t i = 0; i < r.grads.size(); ++i) {
        BOOST_TEST_CONTEXT("gradient of input " << i) {
          BOOST_CHECK_EQUAL(grads[i].defined(), r.grads[i].defined());
          if (grads[i].defined() && r.grads[i].defined()) {
            BOOST_CHECK(grads[i].allclose(r.grads[i], 1e-10, 1e-12));
          }
        }
      }
      ++checked;
    }
  }
  BOOST_TEST(checked == 25);
}

BOOST_AUTO_TEST_CASE(modules_print_as_libtorch) {
  BOOST_CHECK_EQUAL(repr(*nn::ELU()), "kiln::nn::ELU(alpha=1)");
  BOOST_CHECK_EQUAL(repr(*nn::ELU(nn::ELUOptions().alpha(0.5).inplace(true))),
                    "kiln::nn::ELU(alpha=0.5, inplace=true)");
  BOOST_CHECK_EQUAL(repr(*nn::SELU()), "kiln::nn::SELU()");
  BOOST_CHECK_EQUAL(repr(*nn::SELU(true)), "kiln::nn::SELU(inplace=true)");
  BOOST_CHECK_EQUAL(repr(*nn::CELU(nn::CELUOptions().alpha(2))), "kiln::nn::CELU(alpha=2)");
  BOOST_CHECK_EQUAL(repr(*nn::Hardtanh()), "kiln::nn::Hardtanh(min_val=-1, max_val=1)");
  BOOST_CHECK_EQUAL(repr(*nn::Hardtanh(nn::HardtanhOptions().min_val(-2.5).inplace(true))),
                    "kiln::nn::Hardtanh(min_val=-2.5, max_val=1, inplace=true)");
  BOOST_CHECK_EQUAL(repr(*nn::ReLU6()), "kiln::nn::ReLU6()");
  BOOST_CHECK_EQUAL(repr(*nn::ReLU6(true)), "kiln::nn::ReLU6(inplace=true)");
  BOOST_CHECK_EQUAL(repr(*nn::Threshold(0.1, 20)), "kiln::nn::Threshold(threshold=0.1, value=20)");
  BOOST_CHECK_EQUAL(repr(*nn::Threshold(nn::ThresholdOptions(1, 2).inplace(true))),
                    "kiln::nn::Threshold(threshold=1, value=2, inplace=true)");
  BOOST_CHECK_EQUAL(repr(*nn::PReLU()), "kiln::nn::PReLU(num_parameters=1)");
  BOOST_CHECK_EQUAL(repr(*nn::PReLU(nn::PReLUOptions().num_parameters(3))),
                    "kiln::nn::PReLU(num_parameters=3)");
  BOOST_CHECK_EQUAL(repr(*nn::RReLU()), "kiln::nn::RReLU(lower=0.125, upper=0.333333)");
  BOOST_CHECK_EQUAL(repr(*nn::GLU()), "kiln::nn::GLU(dim=-1)");
  BOOST_CHECK_EQUAL(repr(*nn::Softmax(1)), "kiln::nn::Softmax(dim=1)");
  BOOST_CHECK_EQUAL(repr(*nn::Softmin(-1)), "kiln::nn::Softmin(dim=-1)");
  BOOST_CHECK_EQUAL(repr(*nn::LogSoftmax(0)), "kiln::nn::LogSoftmax(dim=0)");
  BOOST_CHECK_EQUAL(repr(*nn::Softmax2d()), "kiln::nn::Softmax2d()");
  BOOST_CHECK_EQUAL(repr(*nn::Hardswish()), "kiln::nn::Hardswish()");
  BOOST_CHECK_EQUAL(repr(*nn::Hardsigmoid()), "kiln::nn::Hardsigmoid()");
  nn::Sequential seq(nn::Linear(3, 4), nn::ELU(), nn::PReLU(nn::PReLUOptions().num_parameters(4)),
                     nn::Softmax(1));
  std::ostringstream s;
  s << *seq;
  BOOST_CHECK_EQUAL(s.str(), "kiln::nn::Sequential(\n"
                             "  (0): kiln::nn::Linear(in_features=3, out_features=4, bias=true)\n"
                             "  (1): kiln::nn::ELU(alpha=1)\n"
                             "  (2): kiln::nn::PReLU(num_parameters=4)\n"
                             "  (3): kiln::nn::Softmax(dim=1)\n"
                             ")");
}

// Modules equal their functional forms; the in-place ones write into (and return) the input.
BOOST_AUTO_TEST_CASE(modules_and_inplace_forms) {
  Tensor x = kiln::tensor({-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0}, f64());
  BOOST_CHECK(nn::ELU(nn::ELUOptions().alpha(0.5))(x).equal(kiln::elu(x, 0.5)));
  BOOST_CHECK(nn::SELU()(x).equal(kiln::selu(x)));
  BOOST_CHECK(nn::CELU(nn::CELUOptions().alpha(2))(x).equal(kiln::elu(x, 2, 1, 0.5)));
  BOOST_CHECK(nn::Hardtanh()(x).equal(kiln::clamp(x, -1, 1)));
  BOOST_CHECK(nn::ReLU6()(x).equal(kiln::clamp(x, 0, 6)));
  BOOST_CHECK(nn::Threshold(0.1, 20)(x).equal(kiln::where(kiln::le(x, 0.1), 20.0, x)));
  BOOST_CHECK(nn::Hardswish()(x).equal(kiln::hardswish(x)));
  BOOST_CHECK(nn::Hardsigmoid()(x).equal(kiln::hardsigmoid(x)));
  BOOST_CHECK(nn::Softmin(0)(x).allclose(F::softmax(-x, 0)));
  BOOST_CHECK(nn::LogSoftmax(0)(x).allclose(F::log_softmax(x, 0)));
  nn::RReLU rrelu;
  rrelu->eval();
  BOOST_CHECK(rrelu(x).equal(kiln::leaky_relu(x, (1.0 / 8 + 1.0 / 3) / 2)));
  // training: each negative element gets its own slope in [lower, upper]
  rrelu->train();
  Tensor big = kiln::full({1000}, -1.0, f64());
  Tensor slopes = -rrelu(big);
  BOOST_CHECK(kiln::ge(slopes, 1.0 / 8).all().item<bool>());
  BOOST_CHECK(kiln::le(slopes, 1.0 / 3).all().item<bool>());
  BOOST_CHECK(slopes.max().item<double>() > slopes.min().item<double>());
  Tensor img = kiln::randn({2, 3, 4, 5}, f64());
  BOOST_CHECK(nn::Softmax2d()(img).allclose(F::softmax(img, 1)));
  BOOST_CHECK(nn::GLU(0)(kiln::ones({4, 2}, f64())).sizes().vec() == std::vector<int64_t>({2, 2}));

  struct InPlace {
    std::function<Tensor(Tensor)> inplace;
    std::function<Tensor(const Tensor&)> reference;
  };
  const std::vector<InPlace> forms = {
      {[](Tensor t) { return F::elu(t, F::ELUFuncOptions().alpha(0.5).inplace(true)); },
       [](const Tensor& t) { return kiln::elu(t, 0.5); }},
      {[](Tensor t) { return nn::ELU(nn::ELUOptions().inplace(true))(t); },
       [](const Tensor& t) { return kiln::elu(t); }},
      {[](Tensor t) { return F::selu(t, true); }, kiln::selu},
      {[](Tensor t) { return nn::CELU(nn::CELUOptions().alpha(2).inplace(true))(t); },
       [](const Tensor& t) { return kiln::celu(t, 2); }},
      {[](Tensor t) { return F::hardtanh(t, F::HardtanhFuncOptions().inplace(true)); },
       [](const Tensor& t) { return kiln::hardtanh(t); }},
      {[](Tensor t) { return nn::ReLU6(true)(t); }, kiln::relu6},
      {[](Tensor t) { return F::threshold(t, F::ThresholdFuncOptions(0.1, 5).inplace(true)); },
       [](const Tensor& t) { return kiln::threshold(t, 0.1, 5); }},
      {[](Tensor t) { return kiln::hardswish_(t); }, kiln::hardswish},
      {[](Tensor t) { return kiln::hardsigmoid_(t); }, kiln::hardsigmoid},
      {[](Tensor t) { return F::rrelu(t, F::RReLUFuncOptions().inplace(true)); },
       [](const Tensor& t) { return kiln::rrelu(t); }},
      {[](Tensor t) { return t.atan2_(kiln::full({7}, 2.0, f64())); },
       [](const Tensor& t) { return kiln::atan2(t, kiln::full({7}, 2.0, f64())); }},
      {[](Tensor t) { return t.lerp_(kiln::ones({7}, f64()), 0.25); },
       [](const Tensor& t) { return kiln::lerp(t, kiln::ones({7}, f64()), 0.25); }},
      {[](Tensor t) { return t.addcmul_(t, t, 2); }, [](const Tensor& t) { return t + t * t * 2; }},
      {[](Tensor t) { return t.addcdiv_(t, kiln::full({7}, 4.0, f64()), -1); },
       [](const Tensor& t) { return t - t / 4; }},
      {[](Tensor t) { return t.nan_to_num_(); }, [](const Tensor& t) { return t.clone(); }},
  };
  for (size_t i = 0; i < forms.size(); ++i) {
    BOOST_TEST_CONTEXT("in-place form " << i) {
      Tensor y = x.clone();
      Tensor r = forms[i].inplace(y);
      BOOST_CHECK(r.is_same(y));
      BOOST_CHECK(y.allclose(forms[i].reference(x), 1e-15, 1e-15));
    }
  }
}

// PReLU learns a weight of num_parameters values, filled with init, that gets its gradient.
BOOST_AUTO_TEST_CASE(prelu_module_learns_its_weight) {
  nn::PReLU m(nn::PReLUOptions().num_parameters(3).init(0.1));
  BOOST_REQUIRE(m->weight.sizes().vec() == std::vector<int64_t>({3}));
  BOOST_CHECK(m->weight.equal(kiln::full({3}, 0.1)));
  BOOST_CHECK_EQUAL(m->named_parameters().size(), 1u);
  BOOST_CHECK(m->named_parameters().contains("weight"));
  Tensor x = kiln::tensor({-1.0f, 2.0f, -3.0f, -4.0f, 5.0f, 6.0f}).reshape({2, 3});
  m(x).sum().backward();
  // d/dweight[c] = sum of the negative inputs of channel c
  BOOST_CHECK(m->weight.grad().equal(kiln::tensor({-5.0f, 0.0f, -3.0f})));
  CHECK_ERROR(kiln::ValueError, m(kiln::ones({2, 4})), "prelu", "parameter numbers = 3",
              "channel size = 4", "[2, 4]");
}

// prelu runs in bfloat16 under CPU autocast (PyTorch's lower-precision list); the pointwise math
// is left alone on the CPU.
BOOST_AUTO_TEST_CASE(autocast_policies) {
  Tensor x = kiln::randn({2, 3});
  Tensor w = kiln::full({3}, 0.25);
  kiln::amp::autocast region(kiln::kCPU);
  BOOST_CHECK(kiln::prelu(x, w).dtype() == kiln::kBFloat16);
  BOOST_CHECK(kiln::addcmul(x, x, x).dtype() == kiln::kFloat);
  BOOST_CHECK(kiln::atan2(x, x).dtype() == kiln::kFloat);
  BOOST_CHECK(kiln::elu(x).dtype() == kiln::kFloat);
}

BOOST_AUTO_TEST_CASE(errors_name_the_operator_and_operands) {
  Tensor ints = kiln::ones({2, 3}, kiln::TensorOptions().dtype(kiln::kInt));
  Tensor x = kiln::ones({2, 3});
  CHECK_ERROR(kiln::TypeError, kiln::elu(ints), "elu", "int32");
  CHECK_ERROR(kiln::TypeError, kiln::hardswish(ints), "hardswish", "int32");
  CHECK_ERROR(kiln::TypeError, kiln::logaddexp(ints, ints), "logaddexp", "int32");
  CHECK_ERROR(kiln::TypeError,
              kiln::hardtanh(kiln::ones({2}, kiln::TensorOptions().dtype(kiln::kBool))), "hardtanh",
              "bool");
  CHECK_ERROR(kiln::ValueError,
              kiln::hardtanh(kiln::ones({2}, kiln::TensorOptions().dtype(kiln::kByte)), -1, 1),
              "hardtanh", "unsigned", "negative limits");
  CHECK_ERROR(kiln::ValueError, kiln::atan2(kiln::ones({2, 3}), kiln::ones({4})),
              "size of tensor a (3) must match the size of tensor b (4)");
  CHECK_ERROR(kiln::TypeError, kiln::lerp(x, x.to(kiln::kDouble), 0.5), "lerp", "for `end`",
              "float64", "[2, 3]");
  CHECK_ERROR(kiln::TypeError, kiln::lerp(x, x, kiln::ones({3}, f64())), "lerp", "for `weight`",
              "float64", "[3]");
  CHECK_ERROR(kiln::TypeError, kiln::lerp(ints, ints, 0.5), "lerp", "int32", "[2, 3]");
  CHECK_ERROR(kiln::TypeError, kiln::addcdiv(x, ints, ints), "addcdiv", "Integer division",
              "int32 [2, 3]");
  CHECK_ERROR(kiln::ValueError, kiln::addcmul(x, kiln::ones({4}), x),
              "size of tensor a (3) must match the size of tensor b (4)");
  CHECK_ERROR(kiln::ValueError, kiln::glu(kiln::ones({2, 5})), "glu", "must be even",
              "dimension 1 is size 5");
  CHECK_ERROR(kiln::ValueError, kiln::glu(kiln::ones({})), "glu", "scalars");
  CHECK_ERROR(kiln::ValueError, kiln::prelu(x, kiln::ones({2, 2})), "prelu", "ndim = 2");
  CHECK_ERROR(kiln::TypeError, kiln::prelu(x, kiln::ones({3}, f64())), "prelu", "float64");
  CHECK_ERROR(kiln::ValueError, kiln::celu(x, 0), "celu", "alpha cannot be 0");
  CHECK_ERROR(kiln::ValueError, nn::Hardtanh(nn::HardtanhOptions().min_val(2).max_val(1)),
              "max_val must be greater than min_val");
  CHECK_ERROR(kiln::ValueError, nn::Softmax2d()(kiln::ones({2, 3})), "Softmax2d", "[2, 3]");
  CHECK_ERROR(kiln::ValueError, kiln::clamp(x, Tensor(), Tensor()), "clamp", "at least one");
  CHECK_ERROR(kiln::TypeError, kiln::rrelu(ints), "rrelu", "int32");
  // an in-place result that needs a wider dtype than self's
  CHECK_ERROR(kiln::TypeError, ints.atan2_(ints), "atan2_", "Float", "Int");
  // elu_ with a negative alpha cannot be differentiated from its result, as PyTorch says
  Tensor leaf = kiln::randn({3}, kiln::TensorOptions().requires_grad(true));
  Tensor y = leaf * 1;
  CHECK_ERROR(kiln::ValueError, kiln::elu_(y, -0.5), "elu_", "negative slope",
              "out-of-place version");
  Tensor z = leaf * 1;
  kiln::elu_(z, 0.5);
  z.sum().backward();
  BOOST_CHECK(leaf.grad().allclose(kiln::where(kiln::gt(leaf, 0), 1.0,
                                               kiln::exp(leaf.detach()) * 0.5)));
}

BOOST_AUTO_TEST_CASE(libtorch_functional_option_forms) {
  Tensor x = kiln::tensor({-1.0, 0.5, 2.0});
  Tensor y = x.clone();
  BOOST_TEST(F::relu(y, F::ReLUFuncOptions().inplace(true)).is_same(y));
  BOOST_TEST(y.equal(kiln::tensor({0.0, 0.5, 2.0})));
  BOOST_TEST(F::relu(x, F::ReLUFuncOptions()).equal(y));
  BOOST_TEST(x.equal(kiln::tensor({-1.0, 0.5, 2.0})));  // not in place
  BOOST_TEST(kiln::allclose(F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(1)),
                            F::softplus(x, 2, 1)));
}

BOOST_AUTO_TEST_SUITE_END()
