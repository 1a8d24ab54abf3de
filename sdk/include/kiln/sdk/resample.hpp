// The source-index formulas of resampling (nn::functional::interpolate), written once for the
// core's host code and every plugin's kernels (host and CUDA device code), as PyTorch 1.13's
// (ATen's UpSample.h): which input positions output position `o` of a dimension reads, and with
// what weights. `in` and `out` are the dimension's input and output sizes; `scale` is the
// scale factor the caller gave for the dimension, or 0 when the output size was given (the
// formulas then use in / out).
//
// Note [Resampling scale factors]: PyTorch's scale is 1 / scale_factor when one was given and
// in / out otherwise; the two differ when in * scale_factor is not an integer (in 5, factor 1.5:
// 1 / 1.5 against 5 / 7), so interpolate passes the factor on unless recompute_scale_factor.
// Nearest computes in float whatever the dtype; linear and cubic in their accumulation type A
// (float for 16- and 32-bit floats, double for float64).
#pragma once

#include <kiln/sdk/pointwise_support.hpp>

#include <cmath>
#include <cstdint>

namespace kiln::sdk::resample {

// PyTorch's compute_scales_value: 1 / scale when given, else in / out.
template <class A>
KILN_HOST_DEVICE inline A scale_of(int64_t in, int64_t out, double scale) {
  return scale > 0 ? static_cast<A>(1.0 / scale) : static_cast<A>(in) / static_cast<A>(out);
}

// The input position of nearest (exact: nearest-exact, rounding half up) output position o.
KILN_HOST_DEVICE inline int64_t nearest_source(int64_t o, int64_t in, int64_t out, double scale,
                                               bool exact) {
  const float s = scale_of<float>(in, out, scale);
  float at = 0;
  if (exact) {
    at = floorf(static_cast<float>((static_cast<double>(o) + 0.5) * s));
  } else {
    if (out == in) return o;
    if (out == 2 * in) return o >> 1;
    at = floorf(static_cast<float>(o) * s);
  }
  const int64_t i = static_cast<int64_t>(at);
  return i < in - 1 ? i : in - 1;
}

// PyTorch's area_pixel_compute_scale: the input step per output step.
template <class A>
KILN_HOST_DEVICE inline A linear_scale(int64_t in, int64_t out, bool align_corners, double scale) {
  if (align_corners) return out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0);
  return scale_of<A>(in, out, scale);
}

// PyTorch's area_pixel_compute_source_index: the real input position of output position o
// (clamped at 0 except for cubic).
template <class A>
KILN_HOST_DEVICE inline A source_position(A step, int64_t o, bool align_corners, bool cubic) {
  if (align_corners) return step * static_cast<A>(o);
  const A at = step * (static_cast<A>(o) + static_cast<A>(0.5)) - static_cast<A>(0.5);
  return (!cubic && at < A(0)) ? A(0) : at;
}

// The two input positions of linear output position o and their weights.
template <class A>
struct LinearTaps {
  int64_t i0, i1;
  A w0, w1;
};

template <class A>
KILN_HOST_DEVICE inline LinearTaps<A> linear_taps(A step, int64_t o, int64_t in, int64_t out,
                                                  bool align_corners) {
  if (out == in) return {o, o, A(1), A(0)};
  const A at = source_position(step, o, align_corners, false);
  int64_t i0 = static_cast<int64_t>(at);  // at >= 0: truncation floors
  if (i0 > in - 1) i0 = in - 1;
  A w1 = at - static_cast<A>(i0);
  w1 = w1 < A(0) ? A(0) : (w1 > A(1) ? A(1) : w1);
  return {i0, i0 + (i0 < in - 1 ? 1 : 0), A(1) - w1, w1};
}

// The four input positions of cubic output position o (clamped to the input) and their weights
// (Keys' cubic convolution with a = -0.75, as PyTorch's).
template <class A>
struct CubicTaps {
  int64_t i[4];
  A w[4];
};

// Keys' kernel with a = -0.75: for |x| <= 1 (near) and for 1 < |x| < 2 (far).
template <class A>
KILN_HOST_DEVICE inline A cubic_near(A x) {
  const A a = static_cast<A>(-0.75);
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}
template <class A>
KILN_HOST_DEVICE inline A cubic_far(A x) {
  const A a = static_cast<A>(-0.75);
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

template <class A>
KILN_HOST_DEVICE inline CubicTaps<A> cubic_taps(A step, int64_t o, int64_t in, bool align_corners) {
  const A at = source_position(step, o, align_corners, true);
  int64_t base = static_cast<int64_t>(at);
  if (static_cast<A>(base) > at) --base;  // floor for negative positions
  const A t = at - static_cast<A>(base);
  CubicTaps<A> c;
  c.w[0] = cubic_far<A>(t + 1);
  c.w[1] = cubic_near<A>(t);
  c.w[2] = cubic_near<A>(1 - t);
  c.w[3] = cubic_far<A>(2 - t);
  for (int k = 0; k < 4; ++k) {
    const int64_t i = base - 1 + k;
    c.i[k] = i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
  }
  return c;
}

}  // namespace kiln::sdk::resample
