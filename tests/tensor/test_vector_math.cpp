// The float kernels of exp, expm1, tanh, erf, atan2, sigmoid, silu, gelu and elu on the CPU
// (branch-free polynomials that the loops vectorize, plugins/cpu/vecmath.hpp): their error against
// the same operator in float64 over a sweep of float inputs, in units in the last place of the
// float result; special values; and the same bits from a strided view as from contiguous memory,
// and from bfloat16 as from float rounded once.
#include "tensor_test.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>

using namespace kiln;

namespace {

// The spacing of floats at |ref| (the smallest subnormal for 0 and the subnormal range).
double ulp_at(double ref) {
  const float r = std::fabs(static_cast<float>(ref));
  if (!std::isfinite(r)) return std::numeric_limits<double>::infinity();
  const float up = std::nextafter(r, std::numeric_limits<float>::infinity());
  return static_cast<double>(up) - static_cast<double>(r);
}

// The largest error of f over n floats evenly spread on [lo, hi], in ULP of the float result,
// where the float64 result is finite as a float (both give the same infinity otherwise).
double max_ulp(const std::function<Tensor(const Tensor&)>& f, double lo, double hi,
               int64_t n = 1 << 20) {
  Tensor x = linspace(lo, hi, n, TensorOptions().dtype(kFloat));
  Tensor got = f(x).to(kDouble);
  Tensor want = f(x.to(kDouble));
  const double* g = got.data_ptr<double>();
  const double* w = want.data_ptr<double>();
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(static_cast<float>(w[i]))) {
      BOOST_TEST(g[i] == static_cast<double>(static_cast<float>(w[i])));
      continue;
    }
    worst = std::max(worst, std::fabs(g[i] - w[i]) / ulp_at(w[i]));
  }
  return worst;
}

Tensor gelu_erf(const Tensor& x) { return gelu(x); }
Tensor gelu_tanh(const Tensor& x) { return gelu(x, "tanh"); }
Tensor elu_default(const Tensor& x) { return elu(x); }

}  // namespace

BOOST_AUTO_TEST_SUITE(vector_math)

BOOST_AUTO_TEST_CASE(float_exp_expm1_tanh_erf_are_within_their_stated_ulp) {
  auto exp_f = [](const Tensor& x) { return exp(x); };
  auto expm1_f = [](const Tensor& x) { return expm1(x); };
  auto tanh_f = [](const Tensor& x) { return tanh(x); };
  auto erf_f = [](const Tensor& x) { return erf(x); };
  BOOST_TEST(max_ulp(exp_f, -104.0, 89.0) <= 1.0);
  BOOST_TEST(max_ulp(exp_f, -1.0, 1.0) <= 1.0);
  BOOST_TEST(max_ulp(expm1_f, -30.0, 89.0) <= 1.6);
  BOOST_TEST(max_ulp(expm1_f, -1e-3, 1e-3) <= 1.0);
  BOOST_TEST(max_ulp(tanh_f, -20.0, 20.0) <= 1.3);
  BOOST_TEST(max_ulp(tanh_f, -1e-3, 1e-3) <= 1.0);
  BOOST_TEST(max_ulp(erf_f, -1.0, 1.0) <= 2.8);
  BOOST_TEST(max_ulp(erf_f, -1e-4, 1e-4) <= 1.5);
  BOOST_TEST(max_ulp(erf_f, -12.0, 12.0) <= 3.3);
}

BOOST_AUTO_TEST_CASE(float_sigmoid_silu_gelu_elu_are_within_a_few_ulp) {
  auto sigmoid_f = [](const Tensor& x) { return sigmoid(x); };
  auto silu_f = [](const Tensor& x) { return silu(x); };
  BOOST_TEST(max_ulp(sigmoid_f, -80.0, 80.0) <= 3.0);
  BOOST_TEST(max_ulp(silu_f, -80.0, 80.0) <= 3.0);
  BOOST_TEST(max_ulp(elu_default, -20.0, 20.0) <= 3.0);
  // x * (1 + erf(x / sqrt(2))) / 2 cancels for negative x (as PyTorch's and libm's): relative
  // error grows there, so this checks the range where the result is not cancelled
  BOOST_TEST(max_ulp(gelu_erf, -1.0, 10.0) <= 4.0);
  BOOST_TEST(max_ulp(gelu_tanh, -1.0, 10.0) <= 4.0);
}

BOOST_AUTO_TEST_CASE(float_atan2_is_within_its_stated_ulp_and_gives_cs_special_values) {
  // y and x over many binades: uniform in [-1, 1] times 2^k, k in [-30, 30]
  const int64_t n = 1 << 20;
  Tensor scale = pow(2.0, randint(-30, 31, {2, n}).to(kFloat));
  Tensor yx = (rand({2, n}) * 2 - 1) * scale;
  Tensor y = yx[0], x = yx[1];
  Tensor got = atan2(y, x).to(kDouble), want = atan2(y.to(kDouble), x.to(kDouble));
  const double* g = got.data_ptr<double>();
  const double* w = want.data_ptr<double>();
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(g[i] - w[i]) / ulp_at(w[i]));
  BOOST_TEST(worst <= 3.2);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> special = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, nan};
  for (float a : special) {
    for (float b : special) {
      const double r =
          tensor_test::vals(atan2(tensor(std::vector<float>{a}), tensor(std::vector<float>{b})))[0];
      const float c = std::atan2(a, b);
      BOOST_TEST_CONTEXT("atan2(" << a << ", " << b << ")") {
        BOOST_TEST(((std::isnan(r) && std::isnan(c)) ||
                    (r == c && std::signbit(r) == std::signbit(c))));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(special_values_are_those_of_libm) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = tensor(std::vector<float>{nan, inf, -inf, 0.0f, -0.0f, 100.0f, -200.0f});
  auto v = [](const Tensor& t) { return tensor_test::vals(t); };
  std::vector<double> e = v(exp(x)), m = v(expm1(x)), t = v(tanh(x)), r = v(erf(x));
  BOOST_TEST(std::isnan(e[0]));
  BOOST_TEST(std::isnan(m[0]));
  BOOST_TEST(std::isnan(t[0]));
  BOOST_TEST(std::isnan(r[0]));
  BOOST_TEST((e[1] == inf && e[2] == 0.0 && e[3] == 1.0 && e[4] == 1.0));
  BOOST_TEST((e[5] == inf && e[6] == 0.0));
  BOOST_TEST((m[1] == inf && m[2] == -1.0 && m[5] == inf && m[6] == -1.0));
  BOOST_TEST((t[1] == 1.0 && t[2] == -1.0 && t[5] == 1.0 && t[6] == -1.0));
  BOOST_TEST((r[1] == 1.0 && r[2] == -1.0 && r[5] == 1.0 && r[6] == -1.0));
  BOOST_TEST((std::signbit(m[4]) && std::signbit(t[4]) && std::signbit(r[4])));
}

BOOST_AUTO_TEST_CASE(strided_and_bfloat16_inputs_give_the_bits_of_contiguous_float) {
  Tensor wide = linspace(-12.0, 12.0, 2 * 4099, TensorOptions().dtype(kFloat));
  Tensor strided = wide.slice(0, 0, wide.numel(), 2);  // every other element
  Tensor packed = strided.contiguous();
  Tensor b = packed.to(kBFloat16);
  using Fn = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<std::string, Fn>> ops = {
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"expm1", [](const Tensor& x) { return expm1(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"gelu", gelu_erf},
      {"gelu_tanh", gelu_tanh},
      {"elu", elu_default}};
  for (const auto& op : ops) {
    BOOST_TEST_CONTEXT(op.first) {
      BOOST_TEST(equal(op.second(strided), op.second(packed)));
      BOOST_TEST(equal(op.second(b), op.second(b.to(kFloat)).to(kBFloat16)));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
