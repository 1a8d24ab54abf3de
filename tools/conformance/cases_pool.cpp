// Pooling (max, average, adaptive, LP, max unpooling) in 1 and 2 spatial dimensions, against
// their definitions written as host loops in float64: each output pools the window of input
// positions its axis lists, a max taking the first largest value, an average dividing by the
// window's size within the padded input (count_include_pad), within the input, or by the
// divisor override. These compositions have no kernel of their own; the cases check them on
// every device and, marked `gradient`, by finite differences (test_gradcheck).
#include "conformance.h"

#include <cmath>
#include <limits>

namespace conformance {
namespace {

using namespace kiln;
namespace F = kiln::nn::functional;

// The input positions of each output along one axis, and its average's divisor.
struct Axis {
  std::vector<std::vector<int64_t>> taps;
  std::vector<double> divisor;
};

Axis sliding(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode,
             bool include_pad) {
  int64_t n = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = n / s + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  Axis a;
  for (int64_t o = 0; o < out; ++o) {
    std::vector<int64_t> taps;
    for (int64_t t = 0; t < k; ++t) {
      int64_t c = o * s - p + t * d;
      if (c >= 0 && c < in) taps.push_back(c);
    }
    int64_t padded = std::min(o * s - p + k, in + p) - (o * s - p);
    a.divisor.push_back(static_cast<double>(include_pad ? padded : taps.size()));
    a.taps.push_back(taps);
  }
  return a;
}

Axis adaptive(int64_t in, int64_t out) {
  Axis a;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = static_cast<int64_t>(std::floor(static_cast<double>(o * in) / out));
    int64_t end = static_cast<int64_t>(std::ceil(static_cast<double>((o + 1) * in) / out));
    std::vector<int64_t> taps;
    for (int64_t c = start; c < end; ++c) taps.push_back(c);
    a.divisor.push_back(static_cast<double>(taps.size()));
    a.taps.push_back(taps);
  }
  return a;
}

enum class Pool { Max, Avg };

// Pools x [N, C, H, W] over rows x cols: the values, and for Max the flat indices.
Outputs pool2d(const Tensor& x, const Axis& rows, const Axis& cols, Pool kind,
               std::optional<double> divisor_override = std::nullopt) {
  Tensor h = host_double(x);
  const double* v = h.data_ptr<double>();
  const int64_t n = x.size(0), c = x.size(1), height = x.size(2), width = x.size(3);
  const int64_t oh = static_cast<int64_t>(rows.taps.size());
  const int64_t ow = static_cast<int64_t>(cols.taps.size());
  std::vector<double> out, at;
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const double* p = v + plane * height * width;
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t xo = 0; xo < ow; ++xo) {
        double best = -std::numeric_limits<double>::infinity(), total = 0;
        int64_t best_at = -1;
        for (int64_t r : rows.taps[static_cast<size_t>(y)]) {
          for (int64_t q : cols.taps[static_cast<size_t>(xo)]) {
            double value = p[r * width + q];
            total += value;
            if (best_at < 0 || value > best) {
              best = value;
              best_at = r * width + q;
            }
          }
        }
        double divisor = divisor_override.value_or(rows.divisor[static_cast<size_t>(y)] *
                                                   cols.divisor[static_cast<size_t>(xo)]);
        out.push_back(kind == Pool::Max ? best : total / divisor);
        at.push_back(static_cast<double>(best_at));
      }
    }
  }
  std::vector<int64_t> sizes{n, c, oh, ow};
  if (kind == Pool::Avg) return {values(sizes, out, kDouble)};
  return {values(sizes, out, kDouble), values(sizes, at, kLong)};
}

ScalarType values_then_long(ScalarType d, size_t i) { return i == 0 ? d : kLong; }

// A 1-d input [N, C, L] as [N, C, 1, L], and back.
Tensor as_2d(const Tensor& x) { return x.unsqueeze(2); }
Outputs as_1d(Outputs out) {
  for (Tensor& t : out) t = t.squeeze(2);
  return out;
}

void register_max_pool() {
  add_case({.name = "max_pool2d",
            .op = "max_pool2d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 3, 7, 6}, d, -2, 2, 91)};
                },
            .run =
                [](const Args& a) {
                  auto [out, at] =
                      F::max_pool2d_with_indices(a.t(0),
                                                 F::MaxPool2dFuncOptions(3).stride(2).padding(1));
                  return Outputs{out, at};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  const Tensor& x = a.t(0);
                  return pool2d(x, sliding(x.size(2), 3, 2, 1, 1, false, true),
                                sliding(x.size(3), 3, 2, 1, 1, false, true), Pool::Max);
                },
            .out_dtype = values_then_long});
  add_case({.name = "max_pool2d_ceil_dilated",
            .op = "max_pool2d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({1, 2, 8, 9}, d, -2, 2, 92)};
                },
            .run =
                [](const Args& a) {
                  auto [out, at] =
                      F::max_pool2d_with_indices(a.t(0), F::MaxPool2dFuncOptions({2, 3})
                                                             .stride({3, 2})
                                                             .padding({1, 1})
                                                             .dilation({2, 1})
                                                             .ceil_mode(true));
                  return Outputs{out, at};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  const Tensor& x = a.t(0);
                  return pool2d(x, sliding(x.size(2), 2, 3, 1, 2, true, true),
                                sliding(x.size(3), 3, 2, 1, 1, true, true), Pool::Max);
                },
            .out_dtype = values_then_long});
  // the gradient of max_pool2d (the optional primitive max_pool2d_backward where a device has
  // it): of sum(y * y * g) / 2 for y = max_pool2d(x), y * g added at each window's maximum of
  // the float64 reference; its own gradient, checked by finite differences, runs
  // max_pool2d_backward's
  add_case(
      {.name = "max_pool2d_backward",
       .op = "max_pool2d_backward",
       .gradient = true,
       .dtypes = kFloating,
       .inputs =
           [](ScalarType d) {
             return Args{sample({2, 3, 7, 6}, d, -2, 2, 93), sample({2, 3, 4, 3}, d, -1, 1, 94)};
           },
       .run =
           [](const Args& a) {
             Tensor x = a.t(0).requires_grad() ? a.t(0) : a.t(0).detach().requires_grad_(true);
             Tensor y = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
             return Outputs{kiln::autograd::grad({y}, {x}, {y * a.t(1)}, std::nullopt, true)[0]};
           },
       .reference =
           [](const Args& a, ScalarType) {
             const Tensor& x = a.t(0);
             Outputs r = pool2d(x, sliding(x.size(2), 3, 2, 1, 1, false, true),
                                sliding(x.size(3), 3, 2, 1, 1, false, true), Pool::Max);
             const int64_t n = x.size(0), c = x.size(1);
             Tensor yg = (r[0] * a.t(1).to(kDouble)).reshape({n, c, -1});
             Tensor gx = kiln::zeros({n, c, x.size(2) * x.size(3)}, kDouble);
             return Outputs{kiln::scatter_add(gx, 2, r[1].reshape({n, c, -1}), yg).view(x.sizes())};
           },
       .tolerance_scale = 2});
  add_case({.name = "max_pool1d",
            .op = "max_pool1d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 3, 11}, d, -2, 2, 93)};
                },
            .run =
                [](const Args& a) {
                  auto [out, at] =
                      F::max_pool1d_with_indices(a.t(0),
                                                 F::MaxPool1dFuncOptions(3).stride(2).padding(1));
                  return Outputs{out, at};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  Tensor x = as_2d(a.t(0));
                  return as_1d(pool2d(x, sliding(1, 1, 1, 0, 1, false, true),
                                      sliding(x.size(3), 3, 2, 1, 1, false, true), Pool::Max));
                },
            .out_dtype = values_then_long});
  add_case({.name = "adaptive_max_pool2d",
            .op = "adaptive_max_pool2d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 2, 7, 9}, d, -2, 2, 94)};
                },
            .run =
                [](const Args& a) {
                  auto [out, at] = kiln::adaptive_max_pool2d(a.t(0), {3, 4});
                  return Outputs{out, at};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  const Tensor& x = a.t(0);
                  return pool2d(x, adaptive(x.size(2), 3), adaptive(x.size(3), 4), Pool::Max);
                },
            .out_dtype = values_then_long});
}

void register_avg_pool() {
  add_case({.name = "avg_pool2d",
            .op = "avg_pool2d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 3, 7, 6}, d, -2, 2, 95)};
                },
            .run = [](const Args& a) { return Outputs{kiln::avg_pool2d(a.t(0), 3, 2, 1)}; },
            .reference =
                [](const Args& a, ScalarType) {
                  const Tensor& x = a.t(0);
                  return pool2d(x, sliding(x.size(2), 3, 2, 1, 1, false, true),
                                sliding(x.size(3), 3, 2, 1, 1, false, true), Pool::Avg);
                },
            .tolerance_scale = 2});
  // the gradient of avg_pool2d (the optional primitive avg_pool2d_backward where a device has
  // it) against the composite's in float64: of sum(y * y * g) / 2 for y = avg_pool2d(x), whose
  // own gradient, checked by finite differences, runs avg_pool2d_backward's
  auto avg_grad = [](const Args& a) {
    Tensor x = a.t(0).requires_grad() ? a.t(0) : a.t(0).detach().requires_grad_(true);
    Tensor y = F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(2).padding(1));
    return Outputs{kiln::autograd::grad({y}, {x}, {y * a.t(1)}, std::nullopt, true)[0]};
  };
  add_case(
      {.name = "avg_pool2d_backward",
       .op = "avg_pool2d_backward",
       .gradient = true,
       .dtypes = {kFloat, kDouble},
       .inputs =
           [](ScalarType d) {
             return Args{sample({2, 3, 7, 6}, d, -2, 2, 97), sample({2, 3, 4, 3}, d, -1, 1, 98)};
           },
       .run = avg_grad,
       .reference = ref_float64(avg_grad, {0, 1}),
       .tolerance_scale = 2});
  add_case({.name = "avg_pool2d_ceil_exclude_pad",
            .op = "avg_pool2d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({1, 2, 8, 7}, d, -2, 2, 96)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{F::avg_pool2d(a.t(0), F::AvgPool2dFuncOptions({3, 2})
                                                           .stride({2, 3})
                                                           .padding(1)
                                                           .ceil_mode(true)
                                                           .count_include_pad(false))};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  const Tensor& x = a.t(0);
                  return pool2d(x, sliding(x.size(2), 3, 2, 1, 1, true, false),
                                sliding(x.size(3), 2, 3, 1, 1, true, false), Pool::Avg);
                },
            .tolerance_scale = 2});
  add_case(
      {.name = "avg_pool1d_divisor",
       .op = "avg_pool1d",
       .gradient = true,
       .dtypes = kFloating,
       .inputs =
           [](ScalarType d) {
             return Args{sample({2, 2, 10}, d, -2, 2, 97)};
           },
       .run =
           [](const Args& a) {
             // through avg_pool2d: avg_pool1d has no divisor_override, as PyTorch's
             Tensor x = a.t(0).unsqueeze(2);
             return Outputs{kiln::avg_pool2d(x, {1, 4}, {1, 3}, {0, 2}, true, true, 3).squeeze(2)};
           },
       .reference =
           [](const Args& a, ScalarType) {
             Tensor x = as_2d(a.t(0));
             return as_1d(pool2d(x, sliding(1, 1, 1, 0, 1, true, true),
                                 sliding(x.size(3), 4, 3, 2, 1, true, true), Pool::Avg, 3.0));
           },
       .tolerance_scale = 2});
  add_case({.name = "adaptive_avg_pool2d",
            .op = "adaptive_avg_pool2d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 2, 7, 9}, d, -2, 2, 98)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{kiln::adaptive_avg_pool2d(a.t(0), {3, 4})};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  const Tensor& x = a.t(0);
                  return pool2d(x, adaptive(x.size(2), 3), adaptive(x.size(3), 4), Pool::Avg);
                },
            .tolerance_scale = 2});
  add_case({.name = "lp_pool2d",
            .op = "lp_pool2d",
            .gradient = true,
            .dtypes = {kFloat, kDouble},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({1, 2, 7, 6}, d, 0.2, 2, 99)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{F::lp_pool2d(a.t(0), F::LPPool2dFuncOptions(2, {3, 2}).stride(2))};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  Tensor x = a.t(0);
                  Outputs sums = pool2d(host_double(x) * host_double(x),
                                        sliding(x.size(2), 3, 2, 0, 1, false, true),
                                        sliding(x.size(3), 2, 2, 0, 1, false, true), Pool::Avg, 1);
                  return Outputs{kiln::sqrt(sums[0])};
                }});
}

void register_max_unpool() {
  // indices of a max pooling of another input (without repeats, which test_nn checks against
  // PyTorch: there the function has no derivative for finite differences to agree with)
  add_case({.name = "max_unpool2d",
            .op = "max_unpool2d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  Tensor pooled = sample({1, 2, 7, 6}, kDouble, -2, 2, 100);
                  Tensor at =
                      std::get<1>(F::max_pool2d_with_indices(pooled, F::MaxPool2dFuncOptions(2)));
                  return Args{sample(at.sizes().vec(), d, -2, 2, 101), at};
                },
            .run =
                [](const Args& a) {
                  return Outputs{F::max_unpool2d(
                      a.t(0), a.t(1),
                      F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{7, 6}))};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  Tensor x = host_double(a.t(0)), at = a.t(1).contiguous();
                  std::vector<double> out(2 * 7 * 6, 0.0);
                  const double* v = x.data_ptr<double>();
                  const int64_t* i = at.data_ptr<int64_t>();
                  const int64_t per_plane = at.numel() / 2;
                  for (int64_t k = 0; k < at.numel(); ++k) {
                    out[static_cast<size_t>((k / per_plane) * 42 + i[k])] = v[k];
                  }
                  return Outputs{values({1, 2, 7, 6}, out, kDouble)};
                }});
}

}  // namespace

void register_pool_cases() {
  register_max_pool();
  register_avg_pool();
  register_max_unpool();
}

}  // namespace conformance
