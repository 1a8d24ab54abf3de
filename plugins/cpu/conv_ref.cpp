// Direct convolution loops: every floating dtype and any strides, accumulating in compute_t<T>
// (float for the 16-bit floats, double for float64). Used for float64 (the gradient checks),
// float16 and whatever oneDNN refuses. Each task owns whole output planes, so no two threads
// write the same element.
#include "conv.hpp"

#include <stdexcept>
#include <vector>

namespace kiln::cpu {
namespace {

// Element (i0, i1, i2, i3) of a 4-D tensor.
template <class T>
struct View4 {
  T* data;
  int64_t s[4];
  explicit View4(const kiln_tensor& t) : data(static_cast<T*>(t.data)) {
    for (int d = 0; d < 4; ++d) s[d] = t.strides[d];
  }
  T& operator()(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return data[a * s[0] + b * s[1] + c * s[2] + d * s[3]];
  }
};

struct Dims {
  int64_t n, c, h, w, o, cg, og, kh, kw, oh, ow;
  Dims(const kiln_tensor& x, const kiln_tensor& wt, const kiln_tensor& y, int64_t groups)
      : n(x.sizes[0]),
        c(x.sizes[1]),
        h(x.sizes[2]),
        w(x.sizes[3]),
        o(wt.sizes[0]),
        cg(wt.sizes[1]),
        og(wt.sizes[0] / groups),
        kh(wt.sizes[2]),
        kw(wt.sizes[3]),
        oh(y.sizes[2]),
        ow(y.sizes[3]) {}
};

template <class T>
void forward(const kiln_tensor& xt, const kiln_tensor& wt, const kiln_tensor* bt,
             const kiln_tensor& yt, const ConvGeometry& g) {
  using C = compute_t<T>;
  const Dims d(xt, wt, yt, g.groups);
  View4<const T> x(xt), w(wt);
  View4<T> y(yt);
  parallel_for(d.n * d.o, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / d.o, o = p % d.o, c0 = o / d.og * d.cg;
      C bias = 0;
      if (bt != nullptr) {
        bias = static_cast<C>(static_cast<const T*>(bt->data)[o * bt->strides[0]]);
      }
      for (int64_t i = 0; i < d.oh; ++i) {
        for (int64_t j = 0; j < d.ow; ++j) {
          C acc = bias;
          for (int64_t c = 0; c < d.cg; ++c) {
            for (int64_t a = 0; a < d.kh; ++a) {
              int64_t ih = i * g.stride[0] - g.padding[0] + a * g.dilation[0];
              if (ih < 0 || ih >= d.h) continue;
              for (int64_t b = 0; b < d.kw; ++b) {
                int64_t iw = j * g.stride[1] - g.padding[1] + b * g.dilation[1];
                if (iw < 0 || iw >= d.w) continue;
                acc += static_cast<C>(x(n, c0 + c, ih, iw)) * static_cast<C>(w(o, c, a, b));
              }
            }
          }
          y(n, o, i, j) = static_cast<T>(acc);
        }
      }
    }
  });
}

template <class T>
void backward_input(const kiln_tensor& gyt, const kiln_tensor& wt, const kiln_tensor& gxt,
                    const ConvGeometry& g) {
  using C = compute_t<T>;
  const Dims d(gxt, wt, gyt, g.groups);
  View4<const T> gy(gyt), w(wt);
  View4<T> gx(gxt);
  parallel_for(d.n * d.c, 1, [&](int64_t begin, int64_t end) {
    std::vector<C> plane(static_cast<size_t>(d.h * d.w));
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / d.c, c = p % d.c, cc = c % d.cg, o0 = c / d.cg * d.og;
      std::fill(plane.begin(), plane.end(), C(0));
      for (int64_t o = o0; o < o0 + d.og; ++o) {
        for (int64_t i = 0; i < d.oh; ++i) {
          for (int64_t j = 0; j < d.ow; ++j) {
            const C v = static_cast<C>(gy(n, o, i, j));
            for (int64_t a = 0; a < d.kh; ++a) {
              int64_t ih = i * g.stride[0] - g.padding[0] + a * g.dilation[0];
              if (ih < 0 || ih >= d.h) continue;
              for (int64_t b = 0; b < d.kw; ++b) {
                int64_t iw = j * g.stride[1] - g.padding[1] + b * g.dilation[1];
                if (iw < 0 || iw >= d.w) continue;
                plane[ih * d.w + iw] += v * static_cast<C>(w(o, cc, a, b));
              }
            }
          }
        }
      }
      for (int64_t i = 0; i < d.h; ++i) {
        for (int64_t j = 0; j < d.w; ++j) gx(n, c, i, j) = static_cast<T>(plane[i * d.w + j]);
      }
    }
  });
}

template <class T>
void backward_weight(const kiln_tensor& gyt, const kiln_tensor& xt, const kiln_tensor& gwt,
                     const ConvGeometry& g) {
  using C = compute_t<T>;
  const Dims d(xt, gwt, gyt, g.groups);
  View4<const T> gy(gyt), x(xt);
  View4<T> gw(gwt);
  parallel_for(d.o * d.cg, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t o = p / d.cg, cc = p % d.cg, c = o / d.og * d.cg + cc;
      for (int64_t a = 0; a < d.kh; ++a) {
        for (int64_t b = 0; b < d.kw; ++b) {
          C acc = 0;
          for (int64_t n = 0; n < d.n; ++n) {
            for (int64_t i = 0; i < d.oh; ++i) {
              int64_t ih = i * g.stride[0] - g.padding[0] + a * g.dilation[0];
              if (ih < 0 || ih >= d.h) continue;
              for (int64_t j = 0; j < d.ow; ++j) {
                int64_t iw = j * g.stride[1] - g.padding[1] + b * g.dilation[1];
                if (iw < 0 || iw >= d.w) continue;
                acc += static_cast<C>(gy(n, o, i, j)) * static_cast<C>(x(n, c, ih, iw));
              }
            }
          }
          gw(o, cc, a, b) = static_cast<T>(acc);
        }
      }
    }
  });
}

}  // namespace

ConvGeometry conv_geometry(const Call& call) {
  ConvGeometry g{};
  int64_t* targets[3] = {g.stride, g.padding, g.dilation};
  for (int32_t a = 0; a < 3; ++a) {
    int32_t n = 0;
    const int64_t* v = call.attr_list(a, &n);
    if (n != 2) throw std::invalid_argument("expected 2 values for attribute " + std::to_string(a));
    targets[a][0] = v[0];
    targets[a][1] = v[1];
  }
  g.groups = call.attr_i64(3);
  return g;
}

void conv2d_ref(const kiln_tensor& x, const kiln_tensor& w, const kiln_tensor* b,
                const kiln_tensor& y, const ConvGeometry& g) {
  visit<Dtypes::floating>(y.dtype,
                          [&](auto tag) { forward<typename decltype(tag)::type>(x, w, b, y, g); });
}

void conv2d_backward_input_ref(const kiln_tensor& gy, const kiln_tensor& w, const kiln_tensor& gx,
                               const ConvGeometry& g) {
  visit<Dtypes::floating>(gx.dtype, [&](auto tag) {
    backward_input<typename decltype(tag)::type>(gy, w, gx, g);
  });
}

void conv2d_backward_weight_ref(const kiln_tensor& gy, const kiln_tensor& x, const kiln_tensor& gw,
                                const ConvGeometry& g) {
  visit<Dtypes::floating>(gw.dtype, [&](auto tag) {
    backward_weight<typename decltype(tag)::type>(gy, x, gw, g);
  });
}

}  // namespace kiln::cpu
