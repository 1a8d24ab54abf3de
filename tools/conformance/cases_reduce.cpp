// Reductions over dim lists, with and without keepdim: sum mean prod max/min (values and
// indices) argmax argmin amax amin logsumexp var std norm all any.
#include "conformance.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace conformance {
namespace {

using namespace kiln;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
using Group = std::vector<double>;

double g_sum(const Group& g) {
  double s = 0;
  for (double v : g) s += v;
  return s;
}
double g_mean(const Group& g) { return g_sum(g) / static_cast<double>(g.size()); }
double g_prod(const Group& g) {
  double p = 1;
  for (double v : g) p *= v;
  return p;
}
// First index of the largest (largest = true) or smallest value; NaN counts as the extreme.
double g_arg(const Group& g, bool largest) {
  size_t best = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[best])) break;
    if (std::isnan(g[i]) || (largest ? g[i] > g[best] : g[i] < g[best])) best = i;
  }
  return static_cast<double>(best);
}
double g_max(const Group& g) { return g[static_cast<size_t>(g_arg(g, true))]; }
double g_min(const Group& g) { return g[static_cast<size_t>(g_arg(g, false))]; }
double g_logsumexp(const Group& g) {
  double m = g_max(g);
  if (std::isinf(m)) return m == -kInf ? -kInf : (std::isnan(g_sum(g)) ? kNaN : kInf);
  double s = 0;
  for (double v : g) s += std::exp(v - m);
  return m + std::log(s);
}
double g_var(const Group& g, int64_t correction) {
  double m = g_mean(g), s = 0;
  for (double v : g) s += (v - m) * (v - m);
  return s / static_cast<double>(std::max<int64_t>(static_cast<int64_t>(g.size()) - correction, 0));
}
double g_norm(const Group& g, double p) {
  if (std::isinf(p)) {
    Group a;
    for (double v : g) a.push_back(std::abs(v));
    return p > 0 ? g_max(a) : g_min(a);
  }
  double s = 0;
  for (double v : g) {
    if (p == 0) {
      s += v != 0;
    } else {
      s += std::pow(std::abs(v), p);
    }
  }
  return p == 0 || p == 1 ? s : std::pow(s, 1 / p);
}

struct DimSpec {
  const char* suffix;
  std::vector<int64_t> dims;
  bool keepdim;
};

// The dim lists every multi-dim reduction runs with, on a [2, 3, 4] input.
const DimSpec kDimSpecs[] = {
    {"", {}, false},         {"_dim1_keepdim", {1}, true},      {"_dims02", {0, 2}, false},
    {"_dimm1", {-1}, false}, {"_dims20_keepdim", {2, 0}, true},
};

using ReduceCall = std::function<Tensor(const Tensor&, const std::vector<int64_t>&, bool)>;

// One case per dim list.
void reduction(const std::string& name, const std::string& op, bool gradient,
               std::vector<ScalarType> dtypes, double lo, double hi, ReduceCall call,
               std::function<double(const Group&)> f, OutDtypeFn out = same_dtype,
               double tolerance_scale = 1) {
  for (const DimSpec& s : kDimSpecs) {
    add_case({.name = name + s.suffix,
              .op = op,
              .gradient = gradient,
              .dtypes = dtypes,
              .inputs =
                  [lo, hi](ScalarType d) {
                    return Args{sample({2, 3, 4}, d, lo, hi, 41)};
                  },
              .run = [call, s](const Args& a) { return Outputs{call(a.t(0), s.dims, s.keepdim)}; },
              .reference = ref_reduce(s.dims, s.keepdim, f),
              .out_dtype = out,
              .tolerance_scale = tolerance_scale});
  }
}

// max/min over one dim: values and int64 indices (first index of ties).
void arg_reduction(const std::string& name, bool largest) {
  for (auto [dim_, keepdim_] : {std::pair<int64_t, bool>{0, false}, {1, true}, {-1, false}}) {
    const int64_t dim = dim_;  // lambdas capture no structured binding in clang 14
    const bool keepdim = keepdim_;
    std::string suffix = "_dim" + std::string(dim < 0 ? "m1" : std::to_string(dim)) +
                         (keepdim ? "_keepdim" : "");
    add_case({.name = name + suffix,
              .op = name,
              .gradient = true,
              .finite_differences = false,  // ties at the extremes
              .dtypes = kAll,
              .inputs =
                  [](ScalarType d) {
                    return Args{sample_grid({3, 4, 5}, d, -2, 2, 1, 42)};
                  },
              .run =
                  [dim, keepdim, largest](const Args& a) {
                    auto [v, i] = largest ? max(a.t(0), dim, keepdim) : min(a.t(0), dim, keepdim);
                    return Outputs{v, i};
                  },
              .reference =
                  [dim, keepdim, largest](const Args& a, ScalarType d) {
                    auto value = largest ? g_max : g_min;
                    auto index = [largest](const Group& g) { return g_arg(g, largest); };
                    return Outputs{ref_reduce({dim}, keepdim, value)(a, d)[0],
                                   ref_reduce({dim}, keepdim, index)(a, d)[0]};
                  },
              .out_dtype = [](ScalarType d, size_t i) { return i == 0 ? d : kLong; }});
  }
}

}  // namespace

void register_reduce_cases() {
  reduction(
      "sum", "sum", kGradient, kAll, -5, 5,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return sum(x, d, k); }, g_sum,
      sum_dtype);
  reduction(
      "mean", "mean", kGradient, kFloating, -5, 5,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return x.mean(d, k); }, g_mean,
      same_dtype, 2);
  reduction(
      "amax", "amax", kGradient, kAll, -5, 5,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return amax(x, d, k); }, g_max);
  reduction(
      "amin", "amin", kGradient, kAll, -5, 5,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return x.amin(d, k); }, g_min);
  reduction(
      "logsumexp", "logsumexp", kGradient, kFloating, -5, 5,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) {
        std::vector<int64_t> dims = d;
        if (dims.empty()) dims = {0, 1, 2};
        return logsumexp(x, dims, k);
      },
      g_logsumexp, same_dtype, 4);
  // stable where exp overflows: 1000 for float32 and float64, 20 for the 16-bit floats (whose
  // precision at 1000 would hide the result's fractional part)
  reduction(
      "logsumexp_large", "logsumexp", kNoGradient, {kFloat, kDouble}, 1000, 1010,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) {
        std::vector<int64_t> dims = d;
        if (dims.empty()) dims = {0, 1, 2};
        return x.logsumexp(dims, k) - 1000;
      },
      [](const Group& g) { return g_logsumexp(g) - 1000; }, same_dtype, 4);
  reduction(
      "logsumexp_large16", "logsumexp", kNoGradient, {kHalf, kBFloat16}, 20, 30,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) {
        std::vector<int64_t> dims = d;
        if (dims.empty()) dims = {0, 1, 2};
        return logsumexp(x, dims, k);
      },
      g_logsumexp, same_dtype, 4);
  for (int64_t correction : {1, 0}) {
    std::string c = correction == 1 ? "" : "_correction0";
    reduction(
        "var" + c, "var", kGradient, kFloating, -5, 5,
        [correction](const Tensor& x, const std::vector<int64_t>& d, bool k) {
          return var(x, d, correction, k);
        },
        [correction](const Group& g) { return g_var(g, correction); }, same_dtype, 4);
    reduction(
        "std" + c, "std", kGradient, kFloating, -5, 5,
        [correction](const Tensor& x, const std::vector<int64_t>& d, bool k) {
          return x.std(d, correction, k);
        },
        [correction](const Group& g) { return std::sqrt(g_var(g, correction)); }, same_dtype, 4);
  }
  for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0}) {
    std::string label = std::isinf(p) ? (p > 0 ? "inf" : "minf") : std::to_string(int(p));
    // the 0-"norm" counts nonzeros: no gradient
    reduction(
        "norm_p" + label, "norm", p != 0 ? kGradient : kNoGradient, kFloating, -3, 3,
        [p](const Tensor& x, const std::vector<int64_t>& d, bool k) { return norm(x, p, d, k); },
        [p](const Group& g) { return g_norm(g, p); }, same_dtype, 4);
  }
  add_case(
      {.name = "norm_method",
       .op = "norm",
       .dtypes = kFloating,
       .inputs =
           [](ScalarType d) {
             return Args{sample({5, 3}, d, -3, 3, 43)};
           },
       .run =
           [](const Args& a) {
             return Outputs{a.t(0).norm(), a.t(0).norm(1, {0}, true)};
           },
       .reference =
           [](const Args& a, ScalarType d) {
             auto l2 = [](const Group& g) { return g_norm(g, 2); };
             auto l1 = [](const Group& g) { return g_norm(g, 1); };
             return Outputs{ref_reduce({}, false, l2)(a, d)[0], ref_reduce({0}, true, l1)(a, d)[0]};
           },
       .tolerance_scale = 4});

  // prod takes one dim (or all); small magnitudes keep int64 and float16 exact enough
  for (auto [suffix, dim, keepdim] :
       {std::tuple<const char*, int64_t, bool>{"_dim1", 1, false}, {"_dimm1_keepdim", -1, true}}) {
    int64_t d0 = dim;
    bool k0 = keepdim;
    add_case({.name = std::string("prod") + suffix,
              .op = "prod",
              .gradient = true,
              .dtypes = kAll,
              .inputs =
                  [](ScalarType d) {
                    return Args{sample({2, 3, 4}, d, -3, 3, 44)};
                  },
              .run = [d0, k0](const Args& a) { return Outputs{prod(a.t(0), d0, k0)}; },
              .reference = ref_reduce({d0}, k0, g_prod),
              .out_dtype = sum_dtype});
  }
  add_case({.name = "prod",
            .op = "prod",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 5}, d, 0.5, 2, 45)};
                },
            .run = [](const Args& a) { return Outputs{a.t(0).prod()}; },
            .reference = ref_reduce({}, false, g_prod),
            .out_dtype = sum_dtype});
  add_case(
      {.name = "sum_whole_and_dtype",
       .op = "sum",
       .gradient = true,
       .dtypes = kNumeric,
       .inputs =
           [](ScalarType d) {
             return Args{sample({6, 7}, d, 0, 5, 46)};
           },
       .run =
           [](const Args& a) {
             return Outputs{a.t(0).sum(), sum(a.t(0), {0}, false, kDouble), a.t(0).mean(kDouble)};
           },
       .reference =
           [](const Args& a, ScalarType d) {
             return Outputs{ref_reduce({}, false, g_sum)(a, d)[0],
                            ref_reduce({0}, false, g_sum)(a, d)[0],
                            ref_reduce({}, false, g_mean)(a, d)[0]};
           },
       .out_dtype = [](ScalarType d, size_t i) { return i == 0 ? sum_dtype(d, 0) : kDouble; }});
  add_case({.name = "sum_large",
            .op = "sum",
            .gradient = true,
            .finite_differences = false,  // 81,793 inputs: too large a Jacobian
            .dtypes = {kFloat, kDouble, kLong, kHalf},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({311, 263}, d, 0, 1, 47)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{sum(a.t(0), {0}), sum(a.t(0), {1}, true)};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  return Outputs{ref_reduce({0}, false, g_sum)(a, d)[0],
                                 ref_reduce({1}, true, g_sum)(a, d)[0]};
                },
            .out_dtype = sum_dtype,
            .tolerance_scale = 4});

  add_case({.name = "reduce_expanded",
            .op = "sum",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 1, 4}, d, -5, 5, 51)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{sum(a.t(0), {1}), amax(a.t(0), {0, 1}, true), a.t(0).sum()};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  Args e{host_double(a.t(0)).expand({3, 5, 4})};
                  return Outputs{ref_reduce({1}, false, g_sum)(e, d)[0],
                                 ref_reduce({0, 1}, true, g_max)(e, d)[0],
                                 ref_reduce({}, false, g_sum)(e, d)[0]};
                },
            .out_dtype = [](ScalarType d, size_t i) { return i == 1 ? d : sum_dtype(d, 0); },
            .on_device =
                [](const Args& a) {
                  return Args{a.t(0).expand({3, 5, 4})};
                }});

  add_case({.name = "max_dim_large",
            .op = "max_dim",
            .gradient = true,
            .finite_differences = false,  // ties at the extremes
            .dtypes = {kFloat, kDouble, kHalf, kInt, kByte},
            .inputs =
                [](ScalarType d) {
                  return Args{sample_grid({263, 301}, d, 0, 50, 1, 52)};
                },
            .run =
                [](const Args& a) {
                  auto [v0, i0] = max(a.t(0), 0);
                  auto [v1, i1] = min(a.t(0), 1);
                  return Outputs{v0, i0, v1, i1};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  auto first_max = [](const Group& g) { return g_arg(g, true); };
                  auto first_min = [](const Group& g) { return g_arg(g, false); };
                  return Outputs{ref_reduce({0}, false, g_max)(a, d)[0],
                                 ref_reduce({0}, false, first_max)(a, d)[0],
                                 ref_reduce({1}, false, g_min)(a, d)[0],
                                 ref_reduce({1}, false, first_min)(a, d)[0]};
                },
            .out_dtype = [](ScalarType d, size_t i) { return i % 2 ? kLong : d; }});
  // empty tensors: sums are 0, products 1, any false, all true
  add_case({.name = "reduce_empty",
            .op = "sum",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{zeros({3, 0}, TensorOptions().dtype(d))};
                },
            .run =
                [](const Args& a) {
                  const Tensor& x = a.t(0);
                  return Outputs{sum(x, {1}), prod(x, 1), x.any(1), x.all(1), sum(x), amax(x, {0})};
                },
            .reference =
                [](const Args&, ScalarType) {
                  TensorOptions f64 = TensorOptions().dtype(kDouble);
                  return Outputs{zeros({3}, f64), ones({3}, f64), zeros({3}, f64),
                                 ones({3}, f64),  zeros({}, f64), zeros({0}, f64)};
                },
            .out_dtype =
                [](ScalarType d, size_t i) {
                  return i == 2 || i == 3 ? kBool : (i == 5 ? d : sum_dtype(d, 0));
                }});

  arg_reduction("max_dim", true);
  arg_reduction("min_dim", false);
  for (bool largest : {true, false}) {
    std::string op = largest ? "argmax" : "argmin";
    add_case({.name = op,
              .op = op,
              .dtypes = kAll,
              .inputs =
                  [](ScalarType d) {
                    return Args{sample_grid({3, 4, 5}, d, -2, 2, 1, 48)};
                  },
              .run =
                  [largest](const Args& a) {
                    const Tensor& x = a.t(0);
                    if (largest) return Outputs{argmax(x), argmax(x, 1), x.argmax(-1, true)};
                    return Outputs{argmin(x), argmin(x, 1), x.argmin(-1, true)};
                  },
              .reference =
                  [largest](const Args& a, ScalarType d) {
                    auto arg = [largest](const Group& g) { return g_arg(g, largest); };
                    return Outputs{ref_reduce({}, false, arg)(a, d)[0],
                                   ref_reduce({1}, false, arg)(a, d)[0],
                                   ref_reduce({-1}, true, arg)(a, d)[0]};
                  },
              .out_dtype = long_dtype});
  }
  add_case({.name = "max_min_whole",
            .op = "amax",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({4, 5}, d, -9, 9, 49)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{a.t(0).max(), min(a.t(0))};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  return Outputs{ref_reduce({}, false, g_max)(a, d)[0],
                                 ref_reduce({}, false, g_min)(a, d)[0]};
                }});
  add_case({.name = "extremes_nan",
            .op = "max_dim",
            .gradient = true,
            .finite_differences = false,  // NaN
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{values({2, 4}, {1, kNaN, 3, kNaN, -kInf, 2, 2, kInf}, d)};
                },
            .run =
                [](const Args& a) {
                  auto [v, i] = max(a.t(0), 1);
                  auto [w, j] = min(a.t(0), 1);
                  return Outputs{v, i, w, j, amax(a.t(0), {1}), amin(a.t(0), {1}), argmax(a.t(0))};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  auto r = [&](auto f) { return ref_reduce({1}, false, f)(a, d)[0]; };
                  auto first_max = [](const Group& g) { return g_arg(g, true); };
                  auto first_min = [](const Group& g) { return g_arg(g, false); };
                  return Outputs{r(g_max),
                                 r(first_max),
                                 r(g_min),
                                 r(first_min),
                                 r(g_max),
                                 r(g_min),
                                 ref_reduce({}, false, first_max)(a, d)[0]};
                },
            .out_dtype = [](ScalarType d,
                            size_t i) { return i == 1 || i == 3 || i == 6 ? kLong : d; }});

  for (bool all_of : {true, false}) {
    std::string op = all_of ? "all" : "any";
    add_case({.name = op,
              .op = op,
              .dtypes = kAll,
              .inputs =
                  [](ScalarType d) {
                    return Args{sample_grid({3, 4, 2}, d, 0, 3, 1, 50)};
                  },
              .run =
                  [all_of](const Args& a) {
                    const Tensor& x = a.t(0);
                    if (all_of) return Outputs{x.all(), all(x, 1), x.all(-1, true)};
                    return Outputs{x.any(), any(x, 1), x.any(-1, true)};
                  },
              .reference =
                  [all_of](const Args& a, ScalarType d) {
                    auto f = [all_of](const Group& g) {
                      bool r = all_of;
                      for (double v : g) r = all_of ? (r && v != 0) : (r || v != 0);
                      return double(r);
                    };
                    return Outputs{ref_reduce({}, false, f)(a, d)[0],
                                   ref_reduce({1}, false, f)(a, d)[0],
                                   ref_reduce({-1}, true, f)(a, d)[0]};
                  },
              .out_dtype = bool_dtype});
  }

  // PyTorch's outputs
  auto dims_of = [](const Args& a, size_t first) {
    return std::vector<int64_t>(a.ints.begin() + static_cast<long>(first), a.ints.end());
  };
  add_golden("sum_dims", "sum",
             [dims_of](const Args& a) { return Outputs{sum(a.t(0), dims_of(a, 1), a.i(0) != 0)}; });
  add_golden("mean_dims", "mean", [dims_of](const Args& a) {
    return Outputs{mean(a.t(0), dims_of(a, 1), a.i(0) != 0)};
  });
  add_golden("prod_dim", "prod",
             [](const Args& a) { return Outputs{prod(a.t(0), a.i(0), a.i(1) != 0)}; });
  add_golden("amax", "amax", [dims_of](const Args& a) {
    return Outputs{amax(a.t(0), dims_of(a, 1), a.i(0) != 0)};
  });
  add_golden("amin", "amin", [dims_of](const Args& a) {
    return Outputs{amin(a.t(0), dims_of(a, 1), a.i(0) != 0)};
  });
  add_golden("logsumexp", "logsumexp", [dims_of](const Args& a) {
    std::vector<int64_t> dims = dims_of(a, 1);
    if (dims.empty()) {
      for (int64_t d = 0; d < a.t(0).dim(); ++d) dims.push_back(d);
    }
    return Outputs{logsumexp(a.t(0), dims, a.i(0) != 0)};
  });
  add_golden("var", "var", [dims_of](const Args& a) {
    return Outputs{var(a.t(0), dims_of(a, 2), a.i(0), a.i(1) != 0)};
  });
  add_golden("std", "std", [dims_of](const Args& a) {
    return Outputs{kiln::std(a.t(0), dims_of(a, 2), a.i(0), a.i(1) != 0)};
  });
  add_golden("norm", "norm", [dims_of](const Args& a) {
    return Outputs{norm(a.t(0), a.s(0), dims_of(a, 1), a.i(0) != 0)};
  });
  add_golden("all", "all", [](const Args& a) { return Outputs{all(a.t(0))}; });
  add_golden("any", "any", [](const Args& a) { return Outputs{any(a.t(0))}; });
  add_golden("all_dim", "all",
             [](const Args& a) { return Outputs{all(a.t(0), a.i(0), a.i(1) != 0)}; });
  add_golden("any_dim", "any",
             [](const Args& a) { return Outputs{any(a.t(0), a.i(0), a.i(1) != 0)}; });
  add_golden("argmax", "argmax", [](const Args& a) { return Outputs{argmax(a.t(0))}; });
  add_golden("argmin", "argmin", [](const Args& a) { return Outputs{argmin(a.t(0))}; });
  add_golden("argmax_dim", "argmax",
             [](const Args& a) { return Outputs{argmax(a.t(0), a.i(0), a.i(1) != 0)}; });
  add_golden("argmin_dim", "argmin",
             [](const Args& a) { return Outputs{argmin(a.t(0), a.i(0), a.i(1) != 0)}; });
  add_golden("max_dim", "max_dim", [](const Args& a) {
    auto [v, i] = max(a.t(0), a.i(0), a.i(1) != 0);
    return Outputs{v, i};
  });
  add_golden("min_dim", "min_dim", [](const Args& a) {
    auto [v, i] = min(a.t(0), a.i(0), a.i(1) != 0);
    return Outputs{v, i};
  });
}

}  // namespace conformance
