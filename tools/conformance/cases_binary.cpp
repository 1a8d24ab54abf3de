// Binary arithmetic: add sub mul div floor_divide remainder fmod pow maximum minimum, with
// tensors of the same shape, broadcast shapes, 0-dim tensors and C++ numbers.
#include "conformance.h"

#include <cmath>
#include <limits>

namespace conformance {
namespace {

using namespace kiln;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using ScalarFn = Tensor (*)(const Tensor&, const Scalar&);
using RefFn = double (*)(double, double);

struct Range {
  double lo, hi;
};

struct Spec {
  std::string name;
  std::string op;
  bool gradient;
  std::vector<ScalarType> dtypes;
  BinaryFn fn;
  RefFn ref;
  Range a, b;      // value ranges (uint8 clips negative bounds to 0)
  bool b_nonzero;  // divisors: b excludes (-0.5, 0.5)
  OutDtypeFn out;
  ScalarFn scalar_fn;   // `a op number`
  double int_number;    // the number for integral and bool tensors
  double float_number;  // the number for floating tensors
};

double floor_div_ref(double a, double b) { return std::floor(a / b); }
double remainder_ref(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && (b < 0) != (m < 0)) m += b;
  return m;
}
double max_ref(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
}
double min_ref(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
}

Tensor operand(ScalarType d, std::vector<int64_t> sizes, Range r, bool nonzero, uint64_t seed) {
  return nonzero ? sample_nonzero(std::move(sizes), d, r.lo, r.hi, 0.5, seed)
                 : sample(std::move(sizes), d, r.lo, r.hi, seed);
}

// `<op>`: [2, 3, 4] with [3, 1]; `<op>_same`: [4, 5] with [4, 5]; `<op>_0dim`: [3, 4] with a
// 0-dim tensor; `<op>_scalar`: [3, 4] with a C++ number.
void register_spec(const Spec& s) {
  struct Shapes {
    const char* suffix;
    std::vector<int64_t> a, b;
  };
  const Shapes shapes[] = {
      {"", {2, 3, 4}, {3, 1}}, {"_same", {4, 5}, {4, 5}}, {"_0dim", {3, 4}, {}}};
  uint64_t seed = 1;
  for (const Shapes& sh : shapes) {
    Spec spec = s;
    add_case({.name = s.name + sh.suffix,
              .op = s.op,
              .gradient = s.gradient,
              .dtypes = s.dtypes,
              .inputs =
                  [spec, sh, seed](ScalarType d) {
                    return Args{operand(d, sh.a, spec.a, false, seed),
                                operand(d, sh.b, spec.b, spec.b_nonzero, seed + 100)};
                  },
              .run = [fn = s.fn](const Args& a) { return Outputs{fn(a.t(0), a.t(1))}; },
              .reference = ref_binary(s.ref),
              .out_dtype = s.out});
    seed += 7;
  }
  if (s.scalar_fn == nullptr) return;
  Spec spec = s;
  add_case({.name = s.name + "_scalar",
            .op = s.op,
            .gradient = s.gradient,
            .dtypes = s.dtypes,
            .inputs =
                [spec](ScalarType d) {
                  Args args{operand(d, {3, 4}, spec.a, false, 31)};
                  if (is_floating_point(d)) {
                    args.scalars.push_back(Scalar(spec.float_number));
                  } else if (d == kBool) {
                    args.scalars.push_back(Scalar(spec.int_number != 0));
                  } else {
                    args.scalars.push_back(Scalar(static_cast<int64_t>(spec.int_number)));
                  }
                  return args;
                },
            .run = [fn = s.scalar_fn](const Args& a) { return Outputs{fn(a.t(0), a.s(0))}; },
            .reference =
                [ref = s.ref](const Args& a, ScalarType d) {
                  Args b = a;
                  b.tensors.push_back(values({}, {a.s(0).to_double()}, kDouble));
                  return ref_binary(ref)(b, d);
                },
            .out_dtype = s.out});
}

}  // namespace

void register_binary_cases() {
  // clang-format off
  const Spec specs[] = {
      {"add", "add", kGradient, kAll, [](const Tensor& a, const Tensor& b) { return a + b; },
       [](double a, double b) { return a + b; }, {-5, 5}, {-5, 5}, false, same_dtype,
       [](const Tensor& a, const Scalar& b) { return a + b; }, 3, 2.5},
      {"sub", "sub", kGradient, kNumeric, [](const Tensor& a, const Tensor& b) { return a - b; },
       [](double a, double b) { return a - b; }, {5, 10}, {0, 5}, false, same_dtype,
       [](const Tensor& a, const Scalar& b) { return a - b; }, 2, 1.5},
      {"mul", "mul", kGradient, kAll, [](const Tensor& a, const Tensor& b) { return a * b; },
       [](double a, double b) { return a * b; }, {-5, 5}, {-5, 5}, false, same_dtype,
       [](const Tensor& a, const Scalar& b) { return a * b; }, 3, -1.5},
      {"div", "div", kGradient, kAll, [](const Tensor& a, const Tensor& b) { return a / b; },
       [](double a, double b) { return a / b; }, {-5, 5}, {-5, 5}, true, float_dtype,
       [](const Tensor& a, const Scalar& b) { return a / b; }, 2, -0.5},
      {"floor_divide", "floor_divide", kNoGradient, kNumeric, kiln::floor_divide, floor_div_ref,
       {-9, 9}, {-4, 4}, true, same_dtype, kiln::floor_divide, 2, 0.75},
      {"remainder", "remainder", kGradient, kNumeric,
       [](const Tensor& a, const Tensor& b) { return a % b; }, remainder_ref, {-9, 9}, {-4, 4},
       true, same_dtype,
       [](const Tensor& a, const Scalar& b) { return a % b; }, 3, -0.75},
      {"fmod", "fmod", kGradient, kNumeric, kiln::fmod,
       [](double a, double b) { return std::fmod(a, b); },
       {-9, 9}, {-4, 4}, true, same_dtype, kiln::fmod, 3, 0.75},
      {"pow", "pow", kNoGradient, kIntegral, kiln::pow,
       [](double a, double b) { return std::pow(a, b); },
       {-3, 3}, {0, 3}, false, same_dtype, kiln::pow, 2, 0},
      {"pow_float", "pow", kGradient, kFloating, kiln::pow,
       [](double a, double b) { return std::pow(a, b); },
       {0.5, 3}, {-2, 2}, false, same_dtype, kiln::pow, 0, 0.5},
      {"maximum", "maximum", kGradient, kAll, kiln::maximum, max_ref, {-5, 5}, {-5, 5}, false,
       same_dtype, nullptr, 0, 0},
      {"minimum", "minimum", kGradient, kAll, kiln::minimum, min_ref, {-5, 5}, {-5, 5}, false,
       same_dtype, nullptr, 0, 0},
  };
  // clang-format on
  for (const Spec& s : specs) register_spec(s);

  // alpha scales the second operand
  add_case({.name = "add_alpha",
            .op = "add",
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, 0, 5, 1), sample({4}, d, 0, 5, 2)};
                },
            .run = [](const Args& a) { return Outputs{add(a.t(0), a.t(1), 2)}; },
            .reference = ref_binary([](double a, double b) { return a + 2 * b; })});
  add_case({.name = "sub_alpha",
            .op = "sub",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -2, 2, 3), sample({3, 1}, d, -2, 2, 4)};
                },
            .run = [](const Args& a) { return Outputs{a.t(0).sub(a.t(1), 0.5)}; },
            .reference = ref_binary([](double a, double b) { return a - 0.5 * b; })});
  // ties and NaN
  add_case({.name = "maximum_ties_nan",
            .op = "maximum",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{values({2, 3}, {kNaN, 1, 2, -0.5, kNaN, 3}, d),
                              values({3}, {1, kNaN, 2}, d)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{maximum(a.t(0), a.t(1)), minimum(a.t(0), a.t(1))};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  return Outputs{ref_binary(max_ref)(a, d)[0], ref_binary(min_ref)(a, d)[0]};
                }});

  // enough elements for the kernels' vectorized and parallel paths, broadcast along rows
  add_case({.name = "binary_large",
            .op = "mul",
            .dtypes = {kFloat, kDouble, kHalf, kInt, kByte},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({301, 257}, d, 0, 9, 7), sample({257}, d, 0, 9, 8)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{a.t(0) * a.t(1), a.t(0) + a.t(1)};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  return Outputs{ref_binary([](double x, double y) { return x * y; })(a, d)[0],
                                 ref_binary([](double x, double y) { return x + y; })(a, d)[0]};
                }});

  // operands with stride 0, expanded on the device (the layouts copy their inputs, so the
  // expansion comes after them)
  add_case({.name = "binary_expanded",
            .op = "add",
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 1}, d, -5, 5, 5), sample({1, 4}, d, -5, 5, 6)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{a.t(0) + a.t(1), a.t(0) * a.t(1)};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  return Outputs{ref_binary([](double x, double y) { return x + y; })(a, d)[0],
                                 ref_binary([](double x, double y) { return x * y; })(a, d)[0]};
                },
            .on_device =
                [](const Args& a) {
                  return Args{a.t(0).expand({3, 4}), a.t(1).expand({3, 4})};
                }});

  // PyTorch's outputs: signs of quotients and remainders, zero divisors, promotion
  add_golden("floor_divide", "floor_divide",
             [](const Args& a) { return Outputs{floor_divide(a.t(0), a.t(1))}; });
  add_golden("floor_divide_scalar", "floor_divide",
             [](const Args& a) { return Outputs{floor_divide(a.t(0), a.s(0))}; });
  add_golden("remainder", "remainder",
             [](const Args& a) { return Outputs{remainder(a.t(0), a.t(1))}; });
  add_golden("remainder_scalar", "remainder",
             [](const Args& a) { return Outputs{remainder(a.t(0), a.s(0))}; });
  add_golden("fmod", "fmod", [](const Args& a) { return Outputs{fmod(a.t(0), a.t(1))}; });
  add_golden("fmod_scalar", "fmod", [](const Args& a) { return Outputs{fmod(a.t(0), a.s(0))}; });
  add_golden("pow", "pow", [](const Args& a) { return Outputs{pow(a.t(0), a.t(1))}; });
  add_golden("pow_scalar", "pow", [](const Args& a) { return Outputs{pow(a.t(0), a.s(0))}; });
  add_golden("pow_scalar_base", "pow", [](const Args& a) { return Outputs{pow(a.s(0), a.t(0))}; });
  add_golden("div", "div", [](const Args& a) { return Outputs{div(a.t(0), a.t(1))}; });
  add_golden("div_scalar", "div", [](const Args& a) { return Outputs{div(a.t(0), a.s(0))}; });
  add_golden("add", "add", [](const Args& a) { return Outputs{add(a.t(0), a.t(1))}; });
  add_golden("add_scalar", "add", [](const Args& a) { return Outputs{add(a.t(0), a.s(0))}; });
  add_golden("sub", "sub", [](const Args& a) { return Outputs{sub(a.t(0), a.t(1))}; });
  add_golden("sub_scalar", "sub", [](const Args& a) { return Outputs{sub(a.t(0), a.s(0))}; });
  add_golden("mul", "mul", [](const Args& a) { return Outputs{mul(a.t(0), a.t(1))}; });
  add_golden("mul_scalar", "mul", [](const Args& a) { return Outputs{mul(a.t(0), a.s(0))}; });
  add_golden("maximum", "maximum", [](const Args& a) { return Outputs{maximum(a.t(0), a.t(1))}; });
  add_golden("minimum", "minimum", [](const Args& a) { return Outputs{minimum(a.t(0), a.t(1))}; });
}

}  // namespace conformance
