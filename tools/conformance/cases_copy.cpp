// Copies and conversions: to(dtype) between every pair of dtypes, copy_ with broadcasting into
// views, clone, contiguous, fill_ and the factories that fill (full, zeros, ones).
#include "conformance.h"

#include <cmath>

namespace conformance {
namespace {

using namespace kiln;

// The value v of any dtype converted to `to`: != 0 for bool, truncation toward zero for
// integers, unchanged (then rounded by the tolerance) for floating dtypes.
double convert(double v, ScalarType to) {
  if (to == kBool) return v != 0;
  if (is_integral(to, false)) return std::trunc(v);
  return v;
}

ReferenceFn conversions(std::vector<ScalarType> targets, std::vector<int64_t> sizes = {}) {
  return [targets, sizes](const Args& a, ScalarType d) {
    Outputs out;
    for (ScalarType to : targets) {
      Tensor src = a.t(0);
      if (!sizes.empty()) src = host_double(src).expand(sizes).contiguous();
      out.push_back(ref_unary([to](double v) { return convert(v, to); })(Args{src}, d)[0]);
    }
    return out;
  };
}

Tensor convertible(ScalarType d, bool negative) {
  if (d == kBool) return sample({2, 4}, d, 0, 1, 71);
  if (negative) {
    if (is_floating_point(d)) return values({2, 4}, {-1.5, -2, -0.5, -100, 3, -7.75, 0, 1}, d);
    return values({2, 4}, {-1, -2, 0, -100, 3, -7, 0, 1}, d);
  }
  if (is_floating_point(d)) return values({2, 4}, {0, 1, 2.5, 3.75, 7, 0.5, 100, 120}, d);
  return values({2, 4}, {0, 1, 2, 7, 100, 120, 3, 5}, d);
}

}  // namespace

void register_copy_cases() {
  add_case({.name = "to",
            .op = "to",
            .dtypes = kAll,
            .inputs = [](ScalarType d) { return Args{convertible(d, false)}; },
            .run =
                [](const Args& a) {
                  Outputs out;
                  for (ScalarType to : kAll) out.push_back(a.t(0).to(to));
                  return out;
                },
            .reference = conversions(kAll),
            .out_dtype = [](ScalarType, size_t i) { return kAll[i]; }});
  const std::vector<ScalarType> signed_targets = {kBool, kChar,     kShort, kInt,   kLong,
                                                  kHalf, kBFloat16, kFloat, kDouble};
  add_case({.name = "to_negative",
            .op = "to",
            .dtypes = kSigned,
            .inputs = [](ScalarType d) { return Args{convertible(d, true)}; },
            .run =
                [signed_targets](const Args& a) {
                  Outputs out;
                  for (ScalarType to : signed_targets) {
                    out.push_back(a.t(0).to(TensorOptions().dtype(to)));
                  }
                  return out;
                },
            .reference = conversions(signed_targets),
            .out_dtype = [signed_targets](ScalarType, size_t i) { return signed_targets[i]; }});
  add_case({.name = "copy_broadcast",
            .op = "copy_",
            .dtypes = kAll,
            .inputs = [](ScalarType d) { return Args{convertible(d, false).select(0, 1).clone()}; },
            .run =
                [](const Args& a) {
                  Outputs out;
                  for (ScalarType to : kAll) {
                    Tensor dst = zeros({3, 4}, TensorOptions().dtype(to).device(a.t(0).device()));
                    const Tensor& r = dst.copy_(a.t(0));
                    require(&r == &dst, "copy_ returned another tensor than self");
                    out.push_back(dst);
                  }
                  return out;
                },
            .reference = conversions(kAll, {3, 4}),
            .out_dtype = [](ScalarType, size_t i) { return kAll[i]; }});
  // copy_ into self, a view on the transposed and strided layouts
  add_case({.name = "copy_into_view",
            .op = "copy_",
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{zeros({3, 4}, TensorOptions().dtype(d)),
                              values({4}, {0, 1, 3, 2}, kDouble)};
                },
            .run =
                [](const Args& a) {
                  Tensor x = a.t(0);
                  x.copy_(a.t(1));
                  x.select(0, 2).copy_(a.t(1).narrow(0, 0, 1));
                  return Outputs{x};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  Tensor y = host_double(a.t(1));
                  Tensor r = y.expand({3, 4}).contiguous();
                  r.select(0, 2).fill_(y[0].item<double>());
                  return Outputs{r};
                }});
  add_case({.name = "clone",
            .op = "clone",
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -5, 5, 72)};
                },
            .run =
                [](const Args& a) {
                  Tensor c = a.t(0).clone();
                  require(c.is_contiguous(), "clone is not contiguous");
                  require(!c.is_same_storage(a.t(0)), "clone shares the storage of its source");
                  Tensor d = kiln::clone(a.t(0).t());
                  return Outputs{c, d};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  return Outputs{host_double(a.t(0)), host_double(a.t(0).t())};
                }});
  add_case({.name = "contiguous",
            .op = "contiguous",
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -5, 5, 73)};
                },
            .run =
                [](const Args& a) {
                  const Tensor& x = a.t(0);
                  Tensor c = x.contiguous();
                  require(c.is_contiguous(), "contiguous() is not contiguous");
                  require(!x.is_contiguous() || c.is_same(x),
                          "contiguous() copied a contiguous tensor");
                  Tensor t = x.t().contiguous();
                  require(t.is_contiguous(), "contiguous() of a transposed view is not contiguous");
                  return Outputs{c, t};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  return Outputs{host_double(a.t(0)), host_double(a.t(0).t())};
                }});
  add_case({.name = "copy_expanded",
            .op = "copy_",
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 1, 3}, d, -5, 5, 75)};
                },
            .run =
                [](const Args& a) {
                  Tensor c = a.t(0).contiguous();
                  require(c.is_contiguous(), "contiguous() of an expanded tensor isn't contiguous");
                  return Outputs{c, a.t(0).clone(), a.t(0).to(kDouble), exp(a.t(0))};
                },
            .reference =
                [](const Args& a, ScalarType d) {
                  Tensor e = host_double(a.t(0)).expand({2, 4, 3}).contiguous();
                  Tensor exp_e = ref_unary([](double v) { return std::exp(v); })(Args{e}, d)[0];
                  return Outputs{e, e, e, exp_e};
                },
            .out_dtype =
                [](ScalarType d, size_t i) {
                  return i == 2 ? kDouble : (i == 3 ? float_dtype(d, 0) : d);
                },
            .on_device =
                [](const Args& a) {
                  return Args{a.t(0).expand({2, 4, 3})};
                }});
  add_case({.name = "fill_",
            .op = "fill_",
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -5, 5, 74)};
                },
            .run =
                [](const Args& a) {
                  Tensor x = a.t(0);
                  ScalarType d = x.dtype();
                  Scalar v = d == kBool ? Scalar(true)
                                        : (is_floating_point(d) ? Scalar(2.5) : Scalar(int64_t{7}));
                  Tensor full_ = full({3, 4}, v, x.options());
                  Tensor zeros_ = zeros_like(x), ones_ = ones({2, 2}, x.options());
                  const Tensor& r = x.fill_(v);
                  require(&r == &x, "fill_ returned another tensor than self");
                  return Outputs{x, full_, zeros_, ones_, full_like(x, v)};
                },
            .reference =
                [](const Args&, ScalarType d) {
                  double v = d == kBool ? 1 : (is_floating_point(d) ? 2.5 : 7);
                  Tensor f = full({3, 4}, v, TensorOptions().dtype(kDouble));
                  return Outputs{f, f, zeros({3, 4}, TensorOptions().dtype(kDouble)),
                                 ones({2, 2}, TensorOptions().dtype(kDouble)), f};
                }});

  // PyTorch's outputs: truncation, rounding to 16 bits, overflow to inf, bool
  add_golden("to", "to", [](const Args& a) { return Outputs{a.t(0).to(a.d(0))}; });
}

}  // namespace conformance
