// Unary elementwise operators: neg abs sign exp log log1p expm1 sqrt rsqrt sin cos tanh sigmoid
// relu square bitwise_not logical_not; floor ceil round trunc frac reciprocal log2 log10 exp2 tan
// sinh cosh asin acos atan asinh acosh atanh erf erfc erfinv silu mish logsigmoid softsign
// tanhshrink gelu leaky_relu hardshrink softshrink.
#include "conformance.h"

#include <kiln/primitive_docs.h>

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

namespace conformance {
namespace {

using namespace kiln;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t seed_of(const std::string& name) {
  uint64_t h = 1469598103934665603ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// A case of `op` on one [3, 5] input with values in [lo, hi].
void unary(const std::string& name, const std::string& op, bool gradient,
           std::vector<ScalarType> dtypes, double lo, double hi, Tensor (*fn)(const Tensor&),
           double (*f)(double), OutDtypeFn out = same_dtype) {
  uint64_t seed = seed_of(name);
  add_case({.name = name,
            .op = op,
            .gradient = gradient,
            .dtypes = std::move(dtypes),
            .inputs =
                [=](ScalarType d) {
                  return Args{sample({3, 5}, d, lo, hi, seed)};
                },
            .run = [fn](const Args& a) { return Outputs{fn(a.t(0))}; },
            .reference = ref_unary(f),
            .out_dtype = std::move(out)});
}

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double relu_ref(double x) { return std::isnan(x) ? x : (x > 0 ? x : 0); }
double sign_ref(double x) { return static_cast<double>((x > 0) - (x < 0)); }
double gelu_ref(double x, double tanh_approximation) {
  if (tanh_approximation == 0) return x * 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
// gelu's derivative: Phi(x) + x phi(x), or that of the tanh approximation
double gelu_grad_ref(double x, double tanh_approximation) {
  if (tanh_approximation == 0) {
    return 0.5 * (1 + std::erf(x / std::sqrt(2.0))) +
           x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
  }
  const double k = std::sqrt(2 / M_PI), t = std::tanh(k * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
}
double silu_ref(double x) { return x / (1 + std::exp(-x)); }
double mish_ref(double x) { return x * std::tanh(std::log1p(std::exp(x))); }
// erfinv by bisection on erf: the reference shares no code with the kernel's approximation
double erfinv_ref(double y) {
  if (std::abs(y) == 1) return y * std::numeric_limits<double>::infinity();
  double lo = -6, hi = 6;
  for (int i = 0; i < 200; ++i) (std::erf((lo + hi) / 2) < y ? lo : hi) = (lo + hi) / 2;
  return (lo + hi) / 2;
}

}  // namespace

void register_unary_cases() {
  unary("neg", "neg", kGradient, kSigned, -5, 5, kiln::neg, [](double x) { return -x; });
  unary("abs", "abs", kGradient, kNumeric, -5, 5, kiln::abs, [](double x) { return std::abs(x); });
  unary("sign", "sign", kGradient, kAll, -5, 5, kiln::sign, sign_ref);
  unary(
      "exp", "exp", kGradient, kAll, -3, 3, kiln::exp, [](double x) { return std::exp(x); },
      float_dtype);
  unary(
      "log", "log", kGradient, kAll, 0.1, 5, kiln::log, [](double x) { return std::log(x); },
      float_dtype);
  unary(
      "log1p", "log1p", kGradient, kAll, 0, 5, kiln::log1p, [](double x) { return std::log1p(x); },
      float_dtype);
  unary(
      "expm1", "expm1", kGradient, kAll, -3, 3, kiln::expm1, [](double x) { return std::expm1(x); },
      float_dtype);
  unary(
      "sqrt", "sqrt", kGradient, kAll, 0, 9, kiln::sqrt, [](double x) { return std::sqrt(x); },
      float_dtype);
  unary(
      "rsqrt", "rsqrt", kGradient, kAll, 0.1, 9, kiln::rsqrt,
      [](double x) { return 1 / std::sqrt(x); }, float_dtype);
  unary(
      "sin", "sin", kGradient, kAll, -4, 4, kiln::sin, [](double x) { return std::sin(x); },
      float_dtype);
  unary(
      "cos", "cos", kGradient, kAll, -4, 4, kiln::cos, [](double x) { return std::cos(x); },
      float_dtype);
  unary(
      "tanh", "tanh", kGradient, kAll, -3, 3, kiln::tanh, [](double x) { return std::tanh(x); },
      float_dtype);
  unary("sigmoid", "sigmoid", kGradient, kAll, -6, 6, kiln::sigmoid, sigmoid_ref, float_dtype);
  unary("relu", "relu", kGradient, kNumeric, -5, 5, kiln::relu, relu_ref);
  unary("square", "mul", kGradient, kNumeric, -5, 5, kiln::square, [](double x) { return x * x; });
  // out of the domain: NaN, and infinities at the poles
  unary("log_domain", "log", kNoGradient, kFloating, -3, 3, kiln::log,
        [](double x) { return std::log(x); });
  unary("sqrt_domain", "sqrt", kNoGradient, kFloating, -3, 3, kiln::sqrt,
        [](double x) { return std::sqrt(x); });
  unary("rsqrt_domain", "rsqrt", kNoGradient, kFloating, -3, 3, kiln::rsqrt,
        [](double x) { return 1 / std::sqrt(x); });
  unary("log1p_domain", "log1p", kNoGradient, kFloating, -3, 1, kiln::log1p,
        [](double x) { return std::log1p(x); });
  // enough elements for the kernels' vectorized and parallel paths
  add_case({.name = "exp_large",
            .op = "exp",
            .dtypes = {kFloat, kHalf, kBFloat16, kDouble},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({257, 301}, d, -4, 4, 5)};
                },
            .run = [](const Args& a) { return Outputs{kiln::exp(a.t(0))}; },
            .reference = ref_unary([](double x) { return std::exp(x); })});
  add_case({.name = "special_values",
            .op = "exp",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  double inf = std::numeric_limits<double>::infinity();
                  return Args{values({6}, {-inf, inf, kNaN, -0.0, 0.0, 1.0}, d)};
                },
            .run =
                [](const Args& a) {
                  const Tensor& x = a.t(0);
                  return Outputs{exp(x), tanh(x), sigmoid(x), abs(x), neg(x), relu(x)};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  Outputs out;
                  for (auto f : {+[](double x) { return std::exp(x); },
                                 +[](double x) { return std::tanh(x); }, +sigmoid_ref,
                                 +[](double x) { return std::abs(x); },
                                 +[](double x) { return -x; }, +relu_ref}) {
                    out.push_back(ref_unary(f)(a, d)[0]);
                  }
                  return out;
                }});
  add_case({.name = "unary_0dim_and_empty",
            .op = "exp",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{values({}, {0.5}, d), zeros({2, 0}, TensorOptions().dtype(d))};
                },
            .run =
                [](const Args& a) {
                  return Outputs{exp(a.t(0)), neg(a.t(0)), exp(a.t(1)), a.t(1) + a.t(1)};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  Args empty{a.t(1)};
                  return Outputs{ref_unary([](double x) { return std::exp(x); })(a, d)[0],
                                 ref_unary([](double x) { return -x; })(a, d)[0],
                                 ref_unary([](double x) { return x; })(empty, d)[0],
                                 ref_unary([](double x) { return x; })(empty, d)[0]};
                }});
  // ~x: two's complement for integers, logical not for bool
  unary("bitwise_not", "bitwise_not", kNoGradient, {kChar, kShort, kInt, kLong}, -100, 100,
        kiln::bitwise_not, [](double x) { return -x - 1; });
  unary("bitwise_not_uint8", "bitwise_not", kNoGradient, {kByte}, 0, 255, kiln::bitwise_not,
        [](double x) { return 255 - x; });
  unary("bitwise_not_bool", "bitwise_not", kNoGradient, {kBool}, 0, 1, kiln::bitwise_not,
        [](double x) { return x == 0 ? 1.0 : 0.0; });
  add_case({.name = "operator_tilde",
            .op = "bitwise_not",
            .dtypes = {kBool, kInt},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({4, 3}, d, -9, 9, 8)};
                },
            .run = [](const Args& a) { return Outputs{~a.t(0)}; },
            .reference =
                [](const Args& a, ScalarType d) {
                  if (d == kBool) return ref_unary([](double x) { return double(x == 0); })(a, d);
                  return ref_unary([](double x) { return -x - 1; })(a, d);
                }});
  add_case({.name = "operator_neg",
            .op = "neg",
            .dtypes = kSigned,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({4, 3}, d, -9, 9, 9)};
                },
            .run = [](const Args& a) { return Outputs{-a.t(0)}; },
            .reference = ref_unary([](double x) { return -x; })});
  unary(
      "logical_not", "logical_not", kNoGradient, kAll, -2, 2, kiln::logical_not,
      [](double x) { return x == 0 ? 1.0 : 0.0; }, bool_dtype);

  // Issue 15: math functions and activations (inputs away from the rounding functions' jumps,
  // where finite differences do not hold)
  unary("floor", "floor", kGradient, kNumeric, -5, 5, kiln::floor,
        [](double x) { return std::floor(x); });
  unary("ceil", "ceil", kGradient, kNumeric, -5, 5, kiln::ceil,
        [](double x) { return std::ceil(x); });
  unary("round", "round", kGradient, kNumeric, -5, 5, kiln::round,
        [](double x) { return std::nearbyint(x); });
  unary("trunc", "trunc", kGradient, kNumeric, -5, 5, kiln::trunc,
        [](double x) { return std::trunc(x); });
  unary("frac", "frac", kGradient, kFloating, -5, 5, kiln::frac,
        [](double x) { return x - std::trunc(x); });
  unary(
      "reciprocal", "reciprocal", kGradient, kAll, 0.5, 5, kiln::reciprocal,
      [](double x) { return 1 / x; }, float_dtype);
  struct Math {
    const char* name;
    double lo, hi;
    Tensor (*fn)(const Tensor&);
    double (*ref)(double);
  };
  for (const Math& m :
       {Math{"log2", 0.1, 5, kiln::log2, [](double x) { return std::log2(x); }},
        Math{"log10", 0.1, 5, kiln::log10, [](double x) { return std::log10(x); }},
        Math{"exp2", -3, 3, kiln::exp2, [](double x) { return std::exp2(x); }},
        Math{"tan", -1.2, 1.2, kiln::tan, [](double x) { return std::tan(x); }},
        Math{"sinh", -3, 3, kiln::sinh, [](double x) { return std::sinh(x); }},
        Math{"cosh", -3, 3, kiln::cosh, [](double x) { return std::cosh(x); }},
        Math{"asin", -0.9, 0.9, kiln::asin, [](double x) { return std::asin(x); }},
        Math{"acos", -0.9, 0.9, kiln::acos, [](double x) { return std::acos(x); }},
        Math{"atan", -4, 4, kiln::atan, [](double x) { return std::atan(x); }},
        Math{"asinh", -4, 4, kiln::asinh, [](double x) { return std::asinh(x); }},
        Math{"acosh", 1.2, 5, kiln::acosh, [](double x) { return std::acosh(x); }},
        Math{"atanh", -0.9, 0.9, kiln::atanh, [](double x) { return std::atanh(x); }},
        Math{"erf", -3, 3, kiln::erf, [](double x) { return std::erf(x); }},
        Math{"erfc", -3, 3, kiln::erfc, [](double x) { return std::erfc(x); }},
        Math{"erfinv", -0.95, 0.95, kiln::erfinv, erfinv_ref},
        Math{"sinc", -3, 3, kiln::sinc,
             [](double x) { return x == 0 ? 1 : std::sin(M_PI * x) / (M_PI * x); }}}) {
    unary(m.name, m.name, kGradient, kAll, m.lo, m.hi, m.fn, m.ref, float_dtype);
  }
  unary("silu", "silu", kGradient, kFloating, -6, 6, kiln::silu, silu_ref);
  unary("mish", "mish", kGradient, kFloating, -6, 6, kiln::mish, mish_ref);
  // activations with a parameter (gelu's approximation, leaky_relu's slope, the shrinks' lambda)
  struct Param {
    const char* name;
    const char* op;
    Tensor (*fn)(const Tensor&, double);
    double param;
    double (*ref)(double, double);
  };
  for (const Param& p :
       {Param{"gelu", "gelu", [](const Tensor&x, double) { return gelu(x); }, 0, gelu_ref},
        Param{"gelu_tanh", "gelu", [](const Tensor&x, double) { return gelu(x, "tanh"); }, 1,
              gelu_ref},
        Param{"leaky_relu", "leaky_relu", leaky_relu, 0.2,
              [](double x, double s) { return x > 0 ? x : x * s; }},
        Param{"hardshrink", "hardshrink", hardshrink, 0.5,
              [](double x, double l) { return std::abs(x) <= l ? 0 : x; }},
        Param{"softshrink", "softshrink", softshrink, 0.5,
              [](double x, double l) { return x > l ? x - l : (x < -l ? x + l : 0); }}}) {
    add_case({.name = p.name,
              .op = p.op,
              .gradient = kGradient,
              .dtypes = kFloating,
              .inputs =
                  [seed = seed_of(p.name)](ScalarType d) {
                    return Args{sample({3, 5}, d, -3, 3, seed)};
                  },
              .run = [p](const Args& a) { return Outputs{p.fn(a.t(0), p.param)}; },
              .reference = ref_unary([p](double x) { return p.ref(x, p.param); })});
  }
  // gelu's gradient without create_graph: the optional primitive gelu_backward where the device
  // has it (the composite elsewhere), against gelu's derivative in float64
  for (double approximate : {0.0, 1.0}) {
    add_case({.name = approximate == 0 ? "gelu_backward" : "gelu_backward_tanh",
              .op = "gelu_backward",
              .dtypes = kFloating,
              .inputs =
                  [](ScalarType d) {
                    return Args{sample({37, 29}, d, -5, 5, 31), sample({37, 29}, d, -1, 1, 32)};
                  },
              .run =
                  [approximate](const Args& a) {
                    Tensor x = a.t(0).detach().requires_grad_(true);
                    Tensor y = gelu(x, approximate == 0 ? "none" : "tanh");
                    return Outputs{kiln::autograd::grad({y}, {x}, {a.t(1)})[0]};
                  },
              .reference = ref_binary([approximate](double x, double g) {
                return g * gelu_grad_ref(x, approximate);
              })});
  }
  // elu's and hardswish's gradients without create_graph: the optional primitives elu_backward
  // and hardswish_backward where the device has them (the composites elsewhere), against
  // PyTorch's formulas in float64; x spans both sides of elu's 0 and hardswish's -3 and 3
  add_case({.name = "elu_backward",
            .op = "elu_backward",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({37, 29}, d, -5, 5, 33), sample({37, 29}, d, -1, 1, 34)};
                },
            .run =
                [](const Args& a) {
                  Tensor x = a.t(0).detach().requires_grad_(true);
                  Tensor y = elu(x, 1.3, 1.1, 0.7);
                  return Outputs{kiln::autograd::grad({y}, {x}, {a.t(1)})[0]};
                },
            .reference = ref_binary([](double x, double g) {
              return x <= 0 ? g * 0.7 * (1.3 * 1.1) * std::exp(x * 0.7) : g * 1.1;
            })});
  add_case({.name = "hardswish_backward",
            .op = "hardswish_backward",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({37, 29}, d, -5, 5, 35), sample({37, 29}, d, -1, 1, 36)};
                },
            .run =
                [](const Args& a) {
                  Tensor x = a.t(0).detach().requires_grad_(true);
                  Tensor y = hardswish(x);
                  return Outputs{kiln::autograd::grad({y}, {x}, {a.t(1)})[0]};
                },
            .reference = ref_binary([](double x, double g) {
              return x < -3 ? 0.0 : (x <= 3 ? g * (x / 3 + 0.5) : g);
            })});
  // relu's gradient without create_graph: the optional primitive threshold_backward (0 where
  // the result is <= 0) where the device has it, the composite elsewhere
  add_case({.name = "threshold_backward",
            .op = "threshold_backward",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({37, 29}, d, -2, 2, 37), sample({37, 29}, d, -1, 1, 38)};
                },
            .run =
                [](const Args& a) {
                  Tensor x = a.t(0).detach().requires_grad_(true);
                  Tensor y = relu(x);
                  return Outputs{kiln::autograd::grad({y}, {x}, {a.t(1)})[0]};
                },
            .reference = ref_binary([](double x, double g) { return x <= 0 ? 0.0 : g; })});
  // softmax and log_softmax over the last dimension and their gradients without create_graph:
  // the optional primitives softmax_lastdim and softmax_lastdim_backward where the device has
  // them (the composite elsewhere), against the composite's formulas in float64; rows of 1, 7
  // and 300 values (a partial vector, several vectors and a tail)
  for (bool log : {false, true}) {
    for (int64_t n : {1, 7, 300}) {
      const std::string suffix = std::string(log ? "_log" : "") + "_" + std::to_string(n);
      auto apply = [log](const Tensor& x) {
        return log ? kiln::nn::functional::log_softmax(x, -1)
                   : kiln::nn::functional::softmax(x, -1);
      };
      auto reference_y = [log](const Tensor& x) {
        Tensor shifted = x - amax(x, {-1}, /*keepdim=*/true);
        Tensor e = exp(shifted);
        Tensor s = sum(e, {-1}, /*keepdim=*/true);
        return log ? shifted - kiln::log(s) : e / s;
      };
      add_case({.name = "softmax_lastdim" + suffix,
                .op = "softmax_lastdim",
                .gradient = true,  // the backward primitive, against finite differences
                .finite_differences = n <= 7,
                .dtypes = kFloating,
                .inputs =
                    [n](ScalarType d) {
                      return Args{sample({5, 3, n}, d, -8, 8, 33)};
                    },
                .run = [apply](const Args& a) { return Outputs{apply(a.t(0))}; },
                .reference =
                    [reference_y](const Args& a, ScalarType) {
                      return Outputs{reference_y(host_double(a.t(0)))};
                    }});
      add_case({.name = "softmax_lastdim_backward" + suffix,
                .op = "softmax_lastdim_backward",
                .dtypes = kFloating,
                .inputs =
                    [n](ScalarType d) {
                      return Args{sample({5, 3, n}, d, -8, 8, 34), sample({5, 3, n}, d, -1, 1, 35)};
                    },
                .run =
                    [apply](const Args& a) {
                      Tensor x = a.t(0).detach().requires_grad_(true);
                      return Outputs{kiln::autograd::grad({apply(x)}, {x}, {a.t(1)})[0]};
                    },
                .reference =
                    [log, reference_y](const Args& a, ScalarType) {
                      Tensor y = reference_y(host_double(a.t(0))), g = host_double(a.t(1));
                      if (log) return Outputs{g - exp(y) * sum(g, {-1}, /*keepdim=*/true)};
                      return Outputs{y * (g - sum(g * y, {-1}, /*keepdim=*/true))};
                    }});
    }
  }
  add_case({.name = "erfinv_large",  // the vectorized and parallel paths, and both branches
            .op = "erfinv",
            .dtypes = {kFloat, kDouble},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({129, 77}, d, -0.99999, 0.99999, 6)};
                },
            .run = [](const Args& a) { return Outputs{kiln::erfinv(a.t(0))}; },
            .reference = ref_unary(erfinv_ref)});

  // PyTorch's outputs: special values (-0.0, inf, nan), uint8 wrap-around, int -> float32
  add_golden("neg", "neg", [](const Args& a) { return Outputs{neg(a.t(0))}; });
  add_golden("abs", "abs", [](const Args& a) { return Outputs{abs(a.t(0))}; });
  add_golden("sign", "sign", [](const Args& a) { return Outputs{sign(a.t(0))}; });
  add_golden("exp", "exp", [](const Args& a) { return Outputs{exp(a.t(0))}; });
  add_golden("log", "log", [](const Args& a) { return Outputs{log(a.t(0))}; });
  add_golden("log1p", "log1p", [](const Args& a) { return Outputs{log1p(a.t(0))}; });
  add_golden("expm1", "expm1", [](const Args& a) { return Outputs{expm1(a.t(0))}; });
  add_golden("sqrt", "sqrt", [](const Args& a) { return Outputs{sqrt(a.t(0))}; });
  add_golden("rsqrt", "rsqrt", [](const Args& a) { return Outputs{rsqrt(a.t(0))}; });
  add_golden("sin", "sin", [](const Args& a) { return Outputs{sin(a.t(0))}; });
  add_golden("cos", "cos", [](const Args& a) { return Outputs{cos(a.t(0))}; });
  add_golden("tanh", "tanh", [](const Args& a) { return Outputs{tanh(a.t(0))}; });
  add_golden("sigmoid", "sigmoid", [](const Args& a) { return Outputs{sigmoid(a.t(0))}; });
  add_golden("relu", "relu", [](const Args& a) { return Outputs{relu(a.t(0))}; });
  using UnaryFn = Tensor (*)(const Tensor&);
  for (const auto& entry : std::initializer_list<std::pair<const char*, UnaryFn>>{
           {"floor", kiln::floor}, {"ceil", kiln::ceil},   {"round", kiln::round},
           {"trunc", kiln::trunc}, {"frac", kiln::frac},   {"reciprocal", kiln::reciprocal},
           {"log2", kiln::log2},   {"log10", kiln::log10}, {"exp2", kiln::exp2},
           {"tan", kiln::tan},     {"sinh", kiln::sinh},   {"cosh", kiln::cosh},
           {"asin", kiln::asin},   {"acos", kiln::acos},   {"atan", kiln::atan},
           {"asinh", kiln::asinh}, {"acosh", kiln::acosh}, {"atanh", kiln::atanh},
           {"erf", kiln::erf},     {"erfc", kiln::erfc},   {"erfinv", kiln::erfinv},
           {"silu", kiln::silu},   {"mish", kiln::mish}}) {
    // not a structured binding: clang 14 cannot capture one in a lambda
    UnaryFn fn = entry.second;
    add_golden(entry.first, entry.first, [fn](const Args& a) { return Outputs{fn(a.t(0))}; });
  }
  add_golden("round_decimals", "round",
             [](const Args& a) { return Outputs{round(a.t(0), a.i(0))}; });
  add_golden("gelu_none", "gelu", [](const Args& a) { return Outputs{gelu(a.t(0))}; });
  add_golden("gelu_tanh", "gelu", [](const Args& a) { return Outputs{gelu(a.t(0), "tanh")}; });
  add_golden("leaky_relu", "leaky_relu",
             [](const Args& a) { return Outputs{leaky_relu(a.t(0), a.s(0).to_double())}; });
  add_golden("hardshrink", "hardshrink",
             [](const Args& a) { return Outputs{hardshrink(a.t(0), a.s(0).to_double())}; });
  add_golden("softshrink", "softshrink",
             [](const Args& a) { return Outputs{softshrink(a.t(0), a.s(0).to_double())}; });
  add_golden("logsigmoid", "exp", [](const Args& a) { return Outputs{logsigmoid(a.t(0))}; });
  add_golden("softsign", "abs", [](const Args& a) { return Outputs{softsign(a.t(0))}; });
  add_golden("tanhshrink", "tanh", [](const Args& a) { return Outputs{tanhshrink(a.t(0))}; });
  add_golden("bitwise_not", "bitwise_not",
             [](const Args& a) { return Outputs{bitwise_not(a.t(0))}; });
  add_golden("logical_not", "logical_not",
             [](const Args& a) { return Outputs{logical_not(a.t(0))}; });
}

// Every unary entry without a golden case of its name above gets one, which calls the operator
// through the registry: its records are appended to conformance_unary_cases.txt by
// `tests/golden/make_unary_golden.py NAME`, and the case fails while there are none.
void register_unary_goldens() {
  std::set<std::string> named;
  for (const Case& c : all_cases_so_far()) {
    if (c.golden) named.insert(c.name);
  }
  for (const std::string& name : unary_operator_names()) {
    if (named.count(name)) continue;
    const auto* op =
        dynamic_cast<const Operator<Tensor(const Tensor&)>*>(kiln::find_operator(name));
    if (op == nullptr) throw std::logic_error("conformance: " + name + " is not a unary operator");
    add_golden(name, name, [op](const Args& a) { return Outputs{(*op)(a.t(0))}; });
  }
}

}  // namespace conformance
