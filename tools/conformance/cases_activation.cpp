// Issue 15's remaining activations and pointwise math: elu selu celu hardtanh relu6 hardswish
// hardsigmoid threshold prelu rrelu glu softmin; atan2 logaddexp logaddexp2 hypot copysign xlogy;
// lerp addcmul addcdiv; nan_to_num sgn deg2rad rad2deg; clamp with tensor bounds. Values and
// gradients against float64 references (every floating dtype, half and bfloat16 included), and
// PyTorch's outputs from tests/golden/conformance_activation_cases.txt
// (make_activation_golden.py).
#include "conformance.h"

#include <cmath>
#include <limits>

namespace conformance {
namespace {

using namespace kiln;

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

double elu_ref(double x, double alpha, double scale, double input_scale) {
  return x > 0 ? x * scale : std::expm1(x * input_scale) * alpha * scale;
}
double relu6_shifted(double x) { return std::min(std::max(x + 3, 0.0), 6.0); }
double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }

// A case of one [3, 5] input with values in [lo, hi], against f.
void unary(const std::string& name, const std::string& op, std::vector<ScalarType> dtypes,
           double lo, double hi, uint64_t seed, std::function<Tensor(const Tensor&)> fn,
           std::function<double(double)> f, OutDtypeFn out = same_dtype) {
  add_case({.name = name,
            .op = op,
            .gradient = kGradient,
            .dtypes = std::move(dtypes),
            .inputs =
                [=](ScalarType d) {
                  return Args{sample({3, 5}, d, lo, hi, seed)};
                },
            .run = [fn](const Args& a) { return Outputs{fn(a.t(0))}; },
            .reference = ref_unary(std::move(f)),
            .out_dtype = std::move(out)});
}

// A case of [3, 4] and [4] inputs (broadcast) with values in [lo, hi] (b in [b_lo, b_hi]).
void binary(const std::string& name, const std::string& op, std::vector<ScalarType> dtypes,
            double lo, double hi, double b_lo, double b_hi, uint64_t seed,
            std::function<Tensor(const Tensor&, const Tensor&)> fn,
            std::function<double(double, double)> f, OutDtypeFn out = same_dtype) {
  add_case(
      {.name = name,
       .op = op,
       .gradient = kGradient,
       .dtypes = std::move(dtypes),
       .inputs =
           [=](ScalarType d) {
             return Args{sample({3, 4}, d, lo, hi, seed), sample({4}, d, b_lo, b_hi, seed + 1)};
           },
       .run = [fn](const Args& a) { return Outputs{fn(a.t(0), a.t(1))}; },
       .reference = ref_binary(std::move(f)),
       .out_dtype = std::move(out)});
}

// A case of [3, 4], [4] and [3, 1] inputs (broadcast).
void ternary(const std::string& name, const std::string& op, std::vector<ScalarType> dtypes,
             double c_lo, double c_hi, uint64_t seed,
             std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> fn,
             std::function<double(double, double, double)> f) {
  add_case({.name = name,
            .op = op,
            .gradient = kGradient,
            .dtypes = std::move(dtypes),
            .inputs =
                [=](ScalarType d) {
                  return Args{sample({3, 4}, d, -3, 3, seed), sample({4}, d, -3, 3, seed + 1),
                              sample({3, 1}, d, c_lo, c_hi, seed + 2)};
                },
            .run = [fn](const Args& a) { return Outputs{fn(a.t(0), a.t(1), a.t(2))}; },
            .reference = ref_ternary(std::move(f))});
}

void register_activation_reference_cases() {
  unary(
      "elu", "elu", kFloating, -3, 3, 301, [](const Tensor& x) { return elu(x); },
      [](double x) { return elu_ref(x, 1, 1, 1); });
  unary(
      "elu_alpha", "elu", kFloating, -3, 3, 302, [](const Tensor& x) { return elu(x, 0.5); },
      [](double x) { return elu_ref(x, 0.5, 1, 1); });
  unary(
      "elu_negative_alpha", "elu", kFloating, -3, 3, 303,
      [](const Tensor& x) { return elu(x, -0.7, 1.5, 2.0); },
      [](double x) { return elu_ref(x, -0.7, 1.5, 2.0); });
  unary("selu", "elu", kFloating, -3, 3, 304, selu,
        [](double x) { return elu_ref(x, kSeluAlpha, kSeluScale, 1); });
  unary(
      "celu", "elu", kFloating, -3, 3, 305, [](const Tensor& x) { return celu(x, 2.0); },
      [](double x) { return elu_ref(x, 2.0, 1, 0.5); });
  unary(
      "threshold", "threshold", kSigned, -5, 5, 306,
      [](const Tensor& x) { return threshold(x, 1, -4); },
      [](double x) { return x <= 1 ? -4.0 : x; });
  unary(
      "hardtanh", "hardtanh", kSigned, -3, 3, 307,
      [](const Tensor& x) { return hardtanh(x, -2, 1); },
      [](double x) { return std::min(std::max(x, -2.0), 1.0); });
  unary(
      "hardtanh_default", "hardtanh", kFloating, -3, 3, 308,
      [](const Tensor& x) { return hardtanh(x); },
      [](double x) { return std::min(std::max(x, -1.0), 1.0); });
  unary("relu6", "hardtanh", kNumeric, -4, 9, 309, relu6,
        [](double x) { return std::min(std::max(x, 0.0), 6.0); });
  unary("hardswish", "hardswish", kFloating, -5, 5, 310, hardswish,
        [](double x) { return x * relu6_shifted(x) / 6; });
  unary("hardsigmoid", "hardsigmoid", kFloating, -5, 5, 311, hardsigmoid,
        [](double x) { return relu6_shifted(x) / 6; });
  unary(
      "rrelu_eval", "leaky_relu", kFloating, -3, 3, 312, [](const Tensor& x) { return rrelu(x); },
      [](double x) { return x > 0 ? x : x * (1.0 / 8 + 1.0 / 3) / 2; });
  unary("sgn", "sign", kAll, -3, 3, 313, sgn,
        [](double x) { return static_cast<double>((x > 0) - (x < 0)); });
  unary(
      "deg2rad", "mul", kAll, -360, 360, 314, deg2rad, [](double x) { return x * M_PI / 180; },
      float_dtype);
  unary(
      "rad2deg", "mul", kAll, -7, 7, 315, rad2deg, [](double x) { return x * 180 / M_PI; },
      float_dtype);

  // prelu with one weight per channel [3] and a single one [1]; glu halves along dim 1
  add_case({.name = "prelu",
            .op = "prelu",
            .gradient = kGradient,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 3, 4}, d, -3, 3, 316), sample({3}, d, -1, 1, 317),
                              sample({1}, d, 0, 1, 318)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{prelu(a.t(0), a.t(1)), a.t(0).prelu(a.t(2))};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  Args per{a.t(0), a.t(1).reshape({1, 3, 1})}, one{a.t(0), a.t(2)};
                  auto f = ref_binary([](double x, double w) { return x > 0 ? x : w * x; });
                  return Outputs{f(per, d)[0], f(one, d)[0]};
                }});
  add_case({.name = "glu",
            .op = "sigmoid",
            .gradient = kGradient,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 8}, d, -3, 3, 319)};
                },
            .run = [](const Args& a) { return Outputs{glu(a.t(0), 1)}; },
            .reference =
                [](const Args& a, ScalarType d) {
                  Args halves{a.t(0).narrow(1, 0, 4), a.t(0).narrow(1, 4, 4)};
                  return ref_binary([](double x, double g) { return x * sigmoid_ref(g); })(halves,
                                                                                           d);
                },
            .tolerance_scale = 2});  // sigmoid and the product each round

  // binary math, broadcasting [3, 4] with [4]; integers and bool give float32 where PyTorch does
  binary(
      "atan2", "atan2", kAll, -3, 3, -3, 3, 320, kiln::atan2,
      [](double a, double b) { return std::atan2(a, b); }, float_dtype);
  binary("logaddexp", "logaddexp", kFloating, -5, 5, -5, 5, 322, kiln::logaddexp,
         [](double a, double b) { return std::log(std::exp(a) + std::exp(b)); });
  binary("logaddexp2", "logaddexp2", kFloating, -5, 5, -5, 5, 324, kiln::logaddexp2,
         [](double a, double b) { return std::log2(std::exp2(a) + std::exp2(b)); });
  binary("hypot", "hypot", kFloating, -3, 3, -3, 3, 326, kiln::hypot,
         [](double a, double b) { return std::hypot(a, b); });
  binary(
      "copysign", "copysign", kAll, -3, 3, -3, 3, 328,
      [](const Tensor& a, const Tensor& b) { return kiln::copysign(a, b); },
      [](double a, double b) { return std::copysign(a, b); }, float_dtype);
  binary(
      "xlogy", "xlogy", kAll, -3, 3, 0.5, 4, 330,
      [](const Tensor& a, const Tensor& b) { return kiln::xlogy(a, b); },
      [](double a, double b) { return a == 0 ? 0 : a * std::log(b); }, float_dtype);

  // lerp, addcmul, addcdiv over [3, 4], [4], [3, 1]
  ternary(
      "lerp", "lerp", kFloating, -0.5, 1.5, 332,
      [](const Tensor& s, const Tensor& e, const Tensor& w) { return lerp(s, e, w); },
      [](double s, double e, double w) { return s + w * (e - s); });
  binary(
      "lerp_method_scalar", "lerp", kFloating, -3, 3, -3, 3, 335,
      [](const Tensor& s, const Tensor& e) { return s.lerp(e, 0.75); },
      [](double s, double e) { return s + 0.75 * (e - s); });
  ternary(
      "addcmul", "addcmul", kNumeric, -3, 3, 338,
      [](const Tensor& s, const Tensor& a, const Tensor& b) { return addcmul(s, a, b, 2); },
      [](double s, double a, double b) { return s + 2 * a * b; });
  ternary(
      "addcdiv", "addcdiv", kFloating, 0.5, 3, 341,
      [](const Tensor& s, const Tensor& a, const Tensor& b) { return s.addcdiv(a, b, -0.5); },
      [](double s, double a, double b) { return s - 0.5 * a / b; });
  ternary(
      "clamp_tensor", "clamp.Tensor", kNumeric, 0, 3, 344,
      [](const Tensor& x, const Tensor& lo, const Tensor& hi) { return clamp(x, lo, hi + 3); },
      [](double x, double lo, double hi) { return std::min(std::max(x, lo), hi + 3); });
}

}  // namespace

void register_activation_cases() {
  register_activation_reference_cases();
  // PyTorch's outputs: special values, integer dtypes, promotion, negative alpha
  using Fn = std::function<Outputs(const Args&)>;
  auto s = [](const Args& a, size_t i) { return a.s(i); };
  const std::vector<std::tuple<const char*, const char*, Fn>> golden = {
      {"elu", "elu", [s](const Args& a) { return Outputs{elu(a.t(0), s(a, 0))}; }},
      {"selu", "elu", [](const Args& a) { return Outputs{selu(a.t(0))}; }},
      {"celu", "elu", [s](const Args& a) { return Outputs{celu(a.t(0), s(a, 0))}; }},
      {"hardtanh", "hardtanh",
       [s](const Args& a) { return Outputs{hardtanh(a.t(0), s(a, 0), s(a, 1))}; }},
      {"relu6", "hardtanh", [](const Args& a) { return Outputs{relu6(a.t(0))}; }},
      {"hardswish", "hardswish", [](const Args& a) { return Outputs{hardswish(a.t(0))}; }},
      {"hardsigmoid", "hardsigmoid", [](const Args& a) { return Outputs{hardsigmoid(a.t(0))}; }},
      {"threshold", "threshold",
       [s](const Args& a) { return Outputs{threshold(a.t(0), s(a, 0), s(a, 1))}; }},
      {"rrelu_eval", "leaky_relu",
       [](const Args& a) { return Outputs{rrelu(a.t(0), 0.1, 0.3, false)}; }},
      {"sgn", "sign", [](const Args& a) { return Outputs{a.t(0).sgn()}; }},
      {"deg2rad", "mul", [](const Args& a) { return Outputs{deg2rad(a.t(0))}; }},
      {"rad2deg", "mul", [](const Args& a) { return Outputs{a.t(0).rad2deg()}; }},
      {"nan_to_num", "where", [](const Args& a) { return Outputs{nan_to_num(a.t(0))}; }},
      {"nan_to_num_values", "where",
       [](const Args& a) { return Outputs{a.t(0).nan_to_num(1.5, 100.0, -200.0)}; }},
      {"glu", "sigmoid", [](const Args& a) { return Outputs{glu(a.t(0), a.i(0))}; }},
      {"softmin", "exp",
       [](const Args& a) { return Outputs{nn::functional::softmin(a.t(0), a.i(0))}; }},
      {"prelu", "prelu", [](const Args& a) { return Outputs{prelu(a.t(0), a.t(1))}; }},
      {"atan2", "atan2", [](const Args& a) { return Outputs{a.t(0).atan2(a.t(1))}; }},
      {"logaddexp", "logaddexp", [](const Args& a) { return Outputs{logaddexp(a.t(0), a.t(1))}; }},
      {"logaddexp2", "logaddexp2",
       [](const Args& a) { return Outputs{a.t(0).logaddexp2(a.t(1))}; }},
      {"hypot", "hypot", [](const Args& a) { return Outputs{a.t(0).hypot(a.t(1))}; }},
      {"copysign", "copysign", [](const Args& a) { return Outputs{copysign(a.t(0), a.t(1))}; }},
      {"copysign_scalar", "copysign",
       [s](const Args& a) { return Outputs{copysign(a.t(0), s(a, 0))}; }},
      {"xlogy", "xlogy", [](const Args& a) { return Outputs{xlogy(a.t(0), a.t(1))}; }},
      {"xlogy_scalar", "xlogy", [s](const Args& a) { return Outputs{a.t(0).xlogy(s(a, 0))}; }},
      {"lerp", "lerp", [](const Args& a) { return Outputs{lerp(a.t(0), a.t(1), a.t(2))}; }},
      {"lerp_scalar", "lerp",
       [s](const Args& a) { return Outputs{lerp(a.t(0), a.t(1), s(a, 0))}; }},
      {"addcmul", "addcmul",
       [s](const Args& a) { return Outputs{addcmul(a.t(0), a.t(1), a.t(2), s(a, 0))}; }},
      {"addcdiv", "addcdiv",
       [s](const Args& a) { return Outputs{addcdiv(a.t(0), a.t(1), a.t(2), s(a, 0))}; }},
      {"clamp_tensor", "clamp.Tensor",
       [](const Args& a) { return Outputs{a.t(0).clamp(a.t(1), a.t(2))}; }},
  };
  for (const auto& [name, op, fn] : golden) add_golden(name, op, fn);
}

}  // namespace conformance
