// conv2d and its two gradients (conv2d_backward_input, conv2d_backward_weight), against the
// definition written as host loops in float64 (and the composites built on them: conv1d, conv3d,
// the transposed convolutions, fold and unfold, against themselves in float64):
//   out[n][o][y][x] = bias[o] + sum over the group's channels c and the kernel taps (ky, kx) of
//                     in[n][c][y*s - p + ky*d][x*s - p + kx*d] * w[o][c][ky][kx].
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;

struct Geometry {
  const char* suffix;
  int64_t n, c, h, w;  // input
  int64_t o, kh, kw;   // weight [o, c / groups, kh, kw]
  int64_t stride[2], padding[2], dilation[2], groups;
  bool bias;

  int64_t out(int d) const {
    int64_t size = d == 0 ? h : w, k = d == 0 ? kh : kw;
    return (size + 2 * padding[d] - dilation[d] * (k - 1) - 1) / stride[d] + 1;
  }
  std::vector<int64_t> input_sizes() const { return {n, c, h, w}; }
  std::vector<int64_t> weight_sizes() const { return {o, c / groups, kh, kw}; }
  std::vector<int64_t> output_sizes() const { return {n, o, out(0), out(1)}; }
};

const Geometry kGeometries[] = {
    {"", 2, 3, 6, 5, 4, 3, 3, {1, 1}, {0, 0}, {1, 1}, 1, true},
    {"_strided_padded", 1, 2, 7, 6, 3, 3, 2, {2, 1}, {1, 2}, {1, 1}, 1, true},
    {"_dilated_nobias", 2, 2, 7, 7, 2, 2, 3, {1, 2}, {0, 1}, {2, 1}, 1, false},
    {"_groups", 1, 4, 5, 5, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, true},
    // 1x1, stride 1, no padding: the CPU plugin runs these as matrix products
    {"_pointwise", 3, 5, 4, 3, 6, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true},
    {"_pointwise_single_nobias", 1, 4, 1, 7, 3, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, false},
};

std::vector<double> host(const Tensor& t) {
  Tensor h = host_double(t);
  const double* p = h.data_ptr<double>();
  return std::vector<double>(p, p + h.numel());
}

// Calls f(n, o, y, x, ci, co, ky, kx, iy, ix) for every product term inside the input, where ci is
// the input channel and co the weight's channel within its group.
template <class F>
void for_each_term(const Geometry& g, F f) {
  int64_t cg = g.c / g.groups, og = g.o / g.groups;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t o = 0; o < g.o; ++o) {
      for (int64_t y = 0; y < g.out(0); ++y) {
        for (int64_t x = 0; x < g.out(1); ++x) {
          for (int64_t co = 0; co < cg; ++co) {
            int64_t ci = (o / og) * cg + co;
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                int64_t iy = y * g.stride[0] - g.padding[0] + ky * g.dilation[0];
                int64_t ix = x * g.stride[1] - g.padding[1] + kx * g.dilation[1];
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                f(n, o, y, x, ci, co, ky, kx, iy, ix);
              }
            }
          }
        }
      }
    }
  }
}

struct Index {
  const Geometry& g;
  int64_t in(int64_t n, int64_t c, int64_t y, int64_t x) const {
    return ((n * g.c + c) * g.h + y) * g.w + x;
  }
  int64_t weight(int64_t o, int64_t c, int64_t y, int64_t x) const {
    return ((o * (g.c / g.groups) + c) * g.kh + y) * g.kw + x;
  }
  int64_t out(int64_t n, int64_t o, int64_t y, int64_t x) const {
    return ((n * g.o + o) * g.out(0) + y) * g.out(1) + x;
  }
};

std::vector<int64_t> pair(const int64_t* v) { return {v[0], v[1]}; }

void register_geometry(const Geometry& g) {
  add_case(
      {.name = std::string("conv2d") + g.suffix,
       .op = "conv2d",
       .gradient = true,
       .dtypes = kFloating,
       .inputs =
           [g](ScalarType d) {
             Args a{sample(g.input_sizes(), d, -2, 2, 81), sample(g.weight_sizes(), d, -1, 1, 82)};
             if (g.bias) a.tensors.push_back(sample({g.o}, d, -1, 1, 83));
             return a;
           },
       .run =
           [g](const Args& a) {
             Tensor bias = g.bias ? a.t(2) : Tensor();
             return Outputs{conv2d(a.t(0), a.t(1), bias, pair(g.stride), pair(g.padding),
                                   pair(g.dilation), g.groups)};
           },
       .reference =
           [g](const Args& a, ScalarType) {
             std::vector<double> in = host(a.t(0)), w = host(a.t(1));
             std::vector<int64_t> sizes = g.output_sizes();
             std::vector<double> out(static_cast<size_t>(g.n * g.o * g.out(0) * g.out(1)));
             Index at{g};
             if (g.bias) {
               std::vector<double> b = host(a.t(2));
               for (size_t i = 0; i < out.size(); ++i) {
                 out[i] = b[(i / static_cast<size_t>(sizes[2] * sizes[3])) % g.o];
               }
             }
             for_each_term(g, [&](int64_t n, int64_t o, int64_t y, int64_t x, int64_t ci,
                                  int64_t co, int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
               out[at.out(n, o, y, x)] += in[at.in(n, ci, iy, ix)] * w[at.weight(o, co, ky, kx)];
             });
             return Outputs{values(sizes, out, kDouble)};
           },
       .tolerance_scale = 4});
  add_case({.name = std::string("conv2d_backward_input") + g.suffix,
            .op = "conv2d_backward_input",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [g](ScalarType d) {
                  return Args{sample(g.output_sizes(), d, -1, 1, 84),
                              sample(g.weight_sizes(), d, -1, 1, 85)};
                },
            .run =
                [g](const Args& a) {
                  return Outputs{conv2d_backward_input(a.t(0), a.t(1), g.input_sizes(),
                                                       pair(g.stride), pair(g.padding),
                                                       pair(g.dilation), g.groups)};
                },
            .reference =
                [g](const Args& a, ScalarType) {
                  std::vector<double> go = host(a.t(0)), w = host(a.t(1));
                  std::vector<double> gi(static_cast<size_t>(g.n * g.c * g.h * g.w), 0);
                  Index at{g};
                  for_each_term(g, [&](int64_t n, int64_t o, int64_t y, int64_t x, int64_t ci,
                                       int64_t co, int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
                    gi[at.in(n, ci, iy, ix)] += go[at.out(n, o, y, x)] *
                                                w[at.weight(o, co, ky, kx)];
                  });
                  return Outputs{values(g.input_sizes(), gi, kDouble)};
                },
            .tolerance_scale = 4});
  add_case({.name = std::string("conv2d_backward_weight") + g.suffix,
            .op = "conv2d_backward_weight",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [g](ScalarType d) {
                  return Args{sample(g.output_sizes(), d, -1, 1, 86),
                              sample(g.input_sizes(), d, -1, 1, 87)};
                },
            .run =
                [g](const Args& a) {
                  return Outputs{conv2d_backward_weight(a.t(0), a.t(1), g.weight_sizes(),
                                                        pair(g.stride), pair(g.padding),
                                                        pair(g.dilation), g.groups)};
                },
            .reference =
                [g](const Args& a, ScalarType) {
                  std::vector<double> go = host(a.t(0)), in = host(a.t(1));
                  std::vector<double> gw(static_cast<size_t>(g.o * (g.c / g.groups) * g.kh * g.kw));
                  Index at{g};
                  for_each_term(g, [&](int64_t n, int64_t o, int64_t y, int64_t x, int64_t ci,
                                       int64_t co, int64_t ky, int64_t kx, int64_t iy, int64_t ix) {
                    gw[at.weight(o, co, ky, kx)] += go[at.out(n, o, y, x)] *
                                                    in[at.in(n, ci, iy, ix)];
                  });
                  return Outputs{values(g.weight_sizes(), gw, kDouble)};
                },
            .tolerance_scale = 4});
}

namespace F = kiln::nn::functional;

// The composites of nn/functional_conv.cpp (test_nn checks each against PyTorch's goldens).
void register_composites() {
  add_composite_case("conv1d", {{2, 4, 9}, {6, 2, 3}, {6}}, [](const Args& a) {
    return Outputs{conv1d(a.t(0), a.t(1), a.t(2), 2, 1, 2, 2)};
  });
  add_composite_case("conv1d_same", {{2, 3, 8}, {4, 3, 4}}, [](const Args& a) {
    return Outputs{F::conv1d(a.t(0), a.t(1), F::Conv1dFuncOptions().padding(kSame))};
  });
  add_composite_case("conv3d", {{1, 4, 5, 4, 5}, {6, 2, 3, 2, 3}, {6}}, [](const Args& a) {
    return Outputs{conv3d(a.t(0), a.t(1), a.t(2), {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, 2)};
  });
  add_composite_case("conv_transpose1d", {{2, 4, 5}, {4, 3, 3}, {6}}, [](const Args& a) {
    return Outputs{conv_transpose1d(a.t(0), a.t(1), a.t(2), 2, 1, 1, 2, 2)};
  });
  add_composite_case("conv_transpose2d", {{2, 3, 4, 5}, {3, 2, 3, 2}, {2}}, [](const Args& a) {
    return Outputs{conv_transpose2d(a.t(0), a.t(1), a.t(2), {2, 3}, {1, 0}, {1, 2}, 1, {1, 2})};
  });
  add_composite_case("conv_transpose3d", {{1, 4, 3, 4, 3}, {4, 1, 3, 2, 2}, {2}},
                     [](const Args& a) {
                       return Outputs{conv_transpose3d(a.t(0), a.t(1), a.t(2), {2, 1, 2}, {1, 0, 1},
                                                       {1, 0, 0}, 2)};
                     });
  add_composite_case("unfold", {{2, 3, 6, 5}}, [](const Args& a) {
    return Outputs{
        F::unfold(a.t(0),
                  F::UnfoldFuncOptions({2, 3}).dilation({1, 2}).padding({1, 0}).stride({2, 1}))};
  });
  add_composite_case("fold", {{2, 12, 12}}, [](const Args& a) {
    return Outputs{
        F::fold(a.t(0), F::FoldFuncOptions({5, 6}, {2, 3}).padding({1, 0}).stride({2, 1}))};
  });
}

}  // namespace

void register_conv_cases() {
  for (const Geometry& g : kGeometries) register_geometry(g);
  register_composites();
  // PyTorch's outputs: the conventions (cross-correlation, zero padding, groups)
  add_golden("conv2d", "conv2d", [](const Args& a) {
    Tensor bias = a.tensors.size() > 2 ? a.t(2) : Tensor();
    return Outputs{
        conv2d(a.t(0), a.t(1), bias, {a.i(0), a.i(1)}, {a.i(2), a.i(3)}, {a.i(4), a.i(5)}, a.i(6))};
  });
}

}  // namespace conformance
