// The activations of issue 15 (GELU, SiLU, Mish, LeakyReLU, Hardshrink, Softshrink, LogSigmoid,
// Softsign, Tanhshrink): functional forms, modules and pretty_print. The operators themselves are
// checked by the conformance suite (tools/conformance/cases_unary.cpp) and test_gradcheck.
#include "golden.h"

#include <sstream>
#include <utility>
#include <vector>

namespace nn = kiln::nn;
namespace F = kiln::nn::functional;
using kiln::Tensor;

BOOST_AUTO_TEST_SUITE(activations)

// Issue 15's activations: the functional forms against PyTorch 1.13 (torch.nn.functional, float64),
// the modules against the functional forms, and libtorch's pretty_print format.
BOOST_AUTO_TEST_CASE(issue15_activations_match_pytorch) {
  auto options = kiln::TensorOptions().dtype(kiln::kDouble);
  Tensor x = kiln::tensor({-3.0, -0.5, 0.0, 0.25, 2.0}, options);
  const std::vector<std::pair<Tensor, std::vector<double>>> cases = {
      {F::gelu(x),
       {-0.0040496940948903104, -0.15426876936299344, 0, 0.14967658142073093, 1.9544997361036416}},
      {F::gelu(x, F::GELUFuncOptions().approximate("tanh")),
       {-0.0036373920817729943, -0.15428599017485606, 0, 0.149675350701685, 1.954597694087775}},
      {F::silu(x),
       {-0.14227761953270035, -0.1887703343990727, 0, 0.14054412522144952, 1.7615941559557646}},
      {F::mish(x),
       {-0.14564746127562461, -0.22074377465173001, 0, 0.16957240966381759, 1.9439589595339946}},
      {F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)),
       {-0.60000000000000009, -0.10000000000000001, 0, 0.25, 2}},
      {F::hardshrink(x, F::HardshrinkFuncOptions(0.5)), {-3, 0, 0, 0, 2}},
      {F::softshrink(x, F::SoftshrinkFuncOptions(0.3)),
       {-2.7000000000000002, -0.20000000000000001, 0, 0, 1.7}},
      {F::logsigmoid(x),
       {-3.0485873515737421, -0.97407698418010669, -0.69314718055994529, -0.57593941987884356,
        -0.12692801104297249}},
      {F::softsign(x), {-0.75, -0.33333333333333331, 0, 0.20000000000000001, 0.66666666666666663}},
      {F::tanhshrink(x),
       {-2.0049452463132695, -0.037882842739990263, 0, 0.0050813375962908691, 1.0359724199241831}},
  };
  for (const auto& [got, want] : cases) {
    BOOST_CHECK(got.allclose(kiln::tensor(want, options), 1e-12, 1e-15));
  }
  BOOST_CHECK(nn::GELU()(x).equal(F::gelu(x)));
  BOOST_CHECK(nn::GELU(nn::GELUOptions().approximate("tanh"))(x).equal(
      F::gelu(x, F::GELUFuncOptions().approximate("tanh"))));
  BOOST_CHECK(nn::SiLU()(x).equal(F::silu(x)));
  BOOST_CHECK(nn::Mish()(x).equal(F::mish(x)));
  BOOST_CHECK(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(x).equal(
      F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2))));
  BOOST_CHECK(nn::Hardshrink(0.5)(x).equal(F::hardshrink(x, 0.5)));
  BOOST_CHECK(nn::Softshrink(0.3)(x).equal(F::softshrink(x, 0.3)));
  BOOST_CHECK(nn::LogSigmoid()(x).equal(F::logsigmoid(x)));
  BOOST_CHECK(nn::Softsign()(x).equal(F::softsign(x)));
  BOOST_CHECK(nn::Tanhshrink()(x).equal(F::tanhshrink(x)));
  // leaky_relu in place: the input itself
  Tensor y = x.clone();
  Tensor z = F::leaky_relu(y, F::LeakyReLUFuncOptions().negative_slope(0.2).inplace(true));
  BOOST_CHECK(z.is_same(y));
  BOOST_CHECK(y.equal(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2))));
  CHECK_ERROR(kiln::ValueError, F::gelu(x, F::GELUFuncOptions().approximate("fast")),
              "approximate 'fast'");
  CHECK_ERROR(kiln::TypeError, F::silu(kiln::ones({2}, kiln::TensorOptions().dtype(kiln::kInt))),
              "silu");

  auto repr = [](const nn::Module& m) {
    std::ostringstream s;
    m.pretty_print(s);
    return s.str();
  };
  BOOST_CHECK_EQUAL(repr(*nn::LeakyReLU()), "kiln::nn::LeakyReLU(negative_slope=0.01)");
  BOOST_CHECK_EQUAL(repr(*nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true))),
                    "kiln::nn::LeakyReLU(negative_slope=0.2, inplace=true)");
  BOOST_CHECK_EQUAL(repr(*nn::Hardshrink()), "kiln::nn::Hardshrink(0.5)");
  BOOST_CHECK_EQUAL(repr(*nn::Softshrink(0.25)), "kiln::nn::Softshrink(0.25)");
  BOOST_CHECK_EQUAL(repr(*nn::GELU()), "kiln::nn::GELU()");
  BOOST_CHECK_EQUAL(repr(*nn::SiLU()), "kiln::nn::SiLU()");
  BOOST_CHECK_EQUAL(repr(*nn::Tanhshrink()), "kiln::nn::Tanhshrink()");
}

BOOST_AUTO_TEST_SUITE_END()
