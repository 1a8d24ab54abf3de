// where, clamp (and clamp_min, clamp_max) and masked_fill.
#include "conformance.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace conformance {
namespace {

using namespace kiln;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double clamp_ref(double x, std::optional<double> lo, std::optional<double> hi) {
  if (std::isnan(x)) return x;
  if (lo) x = std::max(x, *lo);
  if (hi) x = std::min(x, *hi);
  return x;
}

std::optional<double> number(const Args& a, size_t i) {
  if (!a.opt(i)) return std::nullopt;
  return a.opt(i)->to_double();
}

// clamp with the bounds at scalars 0 and 1 (either may be absent).
Outputs clamp_reference(const Args& a, ScalarType d) {
  std::optional<double> lo = number(a, 0), hi = number(a, 1);
  return ref_unary([lo, hi](double x) { return clamp_ref(x, lo, hi); })(a, d);
}

// Bounds inside each dtype's range: uint8 has no negative bound.
Args clamp_inputs(ScalarType d, bool with_min, bool with_max) {
  Args a{sample({4, 5}, d, -6, 6, 21)};
  bool is_unsigned = d == kByte;
  Scalar lo = is_floating_point(d) ? Scalar(-1.5) : Scalar(int64_t{is_unsigned ? 2 : -2});
  Scalar hi = is_floating_point(d) ? Scalar(2.5) : Scalar(int64_t{4});
  a.scalars.push_back(with_min ? std::optional<Scalar>(lo) : std::nullopt);
  a.scalars.push_back(with_max ? std::optional<Scalar>(hi) : std::nullopt);
  return a;
}

}  // namespace

void register_ternary_cases() {
  add_case({.name = "where",
            .op = "where",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, kBool, 0, 1, 1), sample({3, 1}, d, -5, 5, 2),
                              sample({4}, d, -5, 5, 3)};
                },
            .run = [](const Args& a) { return Outputs{where(a.t(0), a.t(1), a.t(2))}; },
            .reference = ref_ternary([](double c, double x, double y) { return c != 0 ? x : y; })});
  add_case({.name = "where_method_scalar",
            .op = "where",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 3, 4}, kBool, 0, 1, 4), sample({3, 4}, d, 0, 5, 5)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{a.t(1).where(a.t(0), zeros_like(a.t(1))),
                                 where(a.t(0), a.t(1), Scalar(int64_t{7})),
                                 where(a.t(0), Scalar(int64_t{7}), a.t(1))};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  Args b{a.t(0), a.t(1), values({}, {7}, kDouble)};
                  Args zero{a.t(0), a.t(1), values({}, {0}, kDouble)};
                  Args swapped{a.t(0), values({}, {7}, kDouble), a.t(1)};
                  auto select =
                      ref_ternary([](double c, double x, double y) { return c != 0 ? x : y; });
                  return Outputs{select(zero, d)[0], select(b, d)[0], select(swapped, d)[0]};
                }});

  add_case({.name = "clamp",
            .op = "clamp",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs = [](ScalarType d) { return clamp_inputs(d, true, true); },
            .run = [](const Args& a) { return Outputs{clamp(a.t(0), a.opt(0), a.opt(1))}; },
            .reference = clamp_reference});
  add_case({.name = "clamp_min",
            .op = "clamp",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs = [](ScalarType d) { return clamp_inputs(d, true, false); },
            .run = [](const Args& a) { return Outputs{a.t(0).clamp_min(a.s(0))}; },
            .reference = clamp_reference});
  add_case({.name = "clamp_max",
            .op = "clamp",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs = [](ScalarType d) { return clamp_inputs(d, false, true); },
            .run = [](const Args& a) { return Outputs{clamp_max(a.t(0), *a.opt(1))}; },
            .reference = clamp_reference});
  add_case({.name = "clamp_nan",
            .op = "clamp",
            .gradient = true,
            .finite_differences = false,  // NaN
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  double inf = std::numeric_limits<double>::infinity();
                  Args a{values({5}, {kNaN, -3, 0.5, 9, -inf}, d)};
                  a.scalars = {Scalar(-1.0), Scalar(2.0)};
                  return a;
                },
            .run = [](const Args& a) { return Outputs{clamp(a.t(0), a.opt(0), a.opt(1))}; },
            .reference = clamp_reference});

  add_case(
      {.name = "masked_fill",
       .op = "masked_fill",
       .gradient = true,
       .dtypes = kAll,
       .inputs =
           [](ScalarType d) {
             return Args{sample({3, 4}, d, -5, 5, 6), sample({4}, kBool, 0, 1, 7)};
           },
       .run =
           [](const Args& a) {
             Scalar v = a.t(0).dtype() == kBool ? Scalar(true) : Scalar(int64_t{7});
             return Outputs{masked_fill(a.t(0), a.t(1), v), a.t(0).masked_fill(a.t(1) == false, v)};
           },
       .reference =
           [](const Args& a, ScalarType d) {
             double v = d == kBool ? 1 : 7;
             return Outputs{ref_binary([v](double x, double m) { return m != 0 ? v : x; })(a, d)[0],
                            ref_binary([v](double x, double m) { return m == 0 ? v : x; })(a,
                                                                                           d)[0]};
           }});

  // PyTorch's outputs: promotion of where's operands, bounds that cross, float bounds on ints
  add_golden("where", "where",
             [](const Args& a) { return Outputs{where(a.t(0), a.t(1), a.t(2))}; });
  add_golden("where_scalar_other", "where",
             [](const Args& a) { return Outputs{where(a.t(0), a.t(1), a.s(0))}; });
  add_golden("clamp", "clamp",
             [](const Args& a) { return Outputs{clamp(a.t(0), a.opt(0), a.opt(1))}; });
  add_golden("masked_fill", "masked_fill",
             [](const Args& a) { return Outputs{masked_fill(a.t(0), a.t(1), a.s(0))}; });
}

}  // namespace conformance
