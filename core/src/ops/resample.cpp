// Resampling: nn::functional::interpolate in its seven modes, ATen's upsample_nearest2d and
// upsample_bilinear2d, and pixel (un)shuffling, as PyTorch 1.13's.
//
// Note [Resampling as separable gathers]: every mode but area reads, per spatial dimension,
// a few input positions with weights (kiln/sdk/resample.hpp: one for nearest, two for linear,
// four for cubic), and the dimensions are independent. So the composite resamples one
// dimension at a time: the weighted sum of index_select of the input at each tap's positions
// (listed on the host). Its adjoint, the gradient, is the weighted index_add of the gradient at
// the same positions, one dimension at a time in reverse. upsample_nearest (1-3 dimensions) and
// upsample_bilinear2d are optional primitives: a device with their kernels runs the forward in
// one pass, and their gradient is that adjoint written with kiln's operators (so it runs on
// every device and differentiates again); devices without them run the composite. area is an
// adaptive average pooling (ops/pool.cpp).
#include "pool.h"

#include "elementwise.h"

#include "../autograd/function.h"

#include <kiln/nn/functional/upsampling.h>
#include <kiln/ops.h>
#include <kiln/sdk/resample.hpp>

#include <cmath>
#include <memory>
#include <sstream>
#include <vector>

namespace kiln::detail {
namespace {

namespace rs = kiln::sdk::resample;

enum class Taps { kNearest, kNearestExact, kLinear, kCubic };

// One resampled dimension: output position o reads input index[k * out + o] with weight
// weight[k * out + o] for each of its `count` taps.
struct DimTaps {
  int64_t in = 0, out = 0, count = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

template <class A>
DimTaps make_taps(Taps kind, int64_t in, int64_t out, bool align_corners, double scale) {
  DimTaps t;
  t.in = in;
  t.out = out;
  t.count = kind == Taps::kCubic ? 4 : (kind == Taps::kLinear ? 2 : 1);
  t.index.resize(static_cast<size_t>(t.count * out));
  t.weight.assign(static_cast<size_t>(t.count * out), 1.0);
  const A step = rs::linear_scale<A>(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    auto at = [&](int64_t k) { return static_cast<size_t>(k * out + o); };
    if (kind == Taps::kNearest || kind == Taps::kNearestExact) {
      t.index[at(0)] = rs::nearest_source(o, in, out, scale, kind == Taps::kNearestExact);
    } else if (kind == Taps::kLinear) {
      rs::LinearTaps<A> l = rs::linear_taps<A>(step, o, in, out, align_corners);
      t.index[at(0)] = l.i0;
      t.index[at(1)] = l.i1;
      t.weight[at(0)] = static_cast<double>(l.w0);
      t.weight[at(1)] = static_cast<double>(l.w1);
    } else {
      rs::CubicTaps<A> c = rs::cubic_taps<A>(step, o, in, align_corners);
      for (int64_t k = 0; k < 4; ++k) {
        t.index[at(k)] = c.i[k];
        t.weight[at(k)] = static_cast<double>(c.w[k]);
      }
    }
  }
  return t;
}

// The taps of each spatial dimension of x [N, C, d...] resampled to `out`; the weights in the
// accumulation type of x's dtype (See Note [Resampling scale factors]).
std::vector<DimTaps> taps_of(Taps kind, const Tensor& x, IntArrayRef out,
                             const std::vector<double>& scales, bool align_corners) {
  std::vector<DimTaps> taps;
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t in = x.size(static_cast<int64_t>(d) + 2);
    taps.push_back(x.dtype() == kDouble
                       ? make_taps<double>(kind, in, out[d], align_corners, scales[d])
                       : make_taps<float>(kind, in, out[d], align_corners, scales[d]));
  }
  return taps;
}

Tensor host_long(const int64_t* v, int64_t n, Device device) {
  return from_blob(const_cast<int64_t*>(v), {n}, kLong).to(device, kLong, /*copy=*/true);
}

// Tap k's positions, and its weights shaped to broadcast along `dim` of a rank-`rank` tensor.
Tensor tap_index(const DimTaps& t, int64_t k, Device device) {
  return host_long(t.index.data() + k * t.out, t.out, device);
}
Tensor tap_weight(const DimTaps& t, int64_t k, int64_t dim, int64_t rank, ScalarType dtype,
                  Device device) {
  DimVector shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(dim)] = t.out;
  Tensor w = from_blob(const_cast<double*>(t.weight.data() + k * t.out), {t.out}, kDouble);
  return w.to(device, dtype, /*copy=*/true).view(shape);
}

// The composite (See Note [Resampling as separable gathers]); 16-bit floats compute in float32
// and round once, as PyTorch's kernels.
Tensor resample_composite(const Tensor& input, const std::vector<DimTaps>& taps) {
  ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);
  const bool narrow = input.dtype() == kHalf || input.dtype() == kBFloat16;
  Tensor x = narrow ? input.to(kFloat) : input;
  for (size_t d = taps.size(); d-- > 0;) {
    const DimTaps& t = taps[d];
    const int64_t dim = static_cast<int64_t>(d) + 2;
    if (t.count == 1) {
      x = index_select(x, dim, tap_index(t, 0, x.device()));
      continue;
    }
    Tensor sum;
    for (int64_t k = 0; k < t.count; ++k) {
      Tensor term = index_select(x, dim, tap_index(t, k, x.device())) *
                    tap_weight(t, k, dim, x.dim(), x.dtype(), x.device());
      sum = sum.defined() ? sum + term : term;
    }
    x = sum;
  }
  return narrow ? x.to(input.dtype()) : x;
}

// The adjoint of resample_composite: g [N, C, out...] -> [N, C, in...].
Tensor resample_adjoint(const Tensor& grad, const std::vector<DimTaps>& taps) {
  ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);
  const bool narrow = grad.dtype() == kHalf || grad.dtype() == kBFloat16;
  Tensor g = narrow ? grad.to(kFloat) : grad;
  for (size_t d = 0; d < taps.size(); ++d) {
    const DimTaps& t = taps[d];
    const int64_t dim = static_cast<int64_t>(d) + 2;
    DimVector sizes(g.sizes());
    sizes[static_cast<size_t>(dim)] = t.in;
    Tensor out = zeros(sizes, TensorOptions(g.dtype()).device(g.device()));
    for (int64_t k = 0; k < t.count; ++k) {
      Tensor src = t.count == 1 ? g : g * tap_weight(t, k, dim, g.dim(), g.dtype(), g.device());
      out = index_add(out, dim, tap_index(t, k, g.device()), src);
    }
    g = out;
  }
  return narrow ? g.to(grad.dtype()) : g;
}

std::string join(IntArrayRef v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  return s.str();
}

// Checks x [N, C, d...] against `out` (one size per spatial dimension, all positive).
void check_resample(const char* op, const Tensor& x, IntArrayRef out) {
  const int64_t dims = static_cast<int64_t>(out.size());
  KILN_CHECK_VALUE(x.dim() == dims + 2, op, ": expected a ", dims + 2, "-D input [N, C, d...] ",
                   "for output_size [", join(out), "], but got input of size ", x.sizes());
  bool positive = true;
  for (int64_t d = 0; d < dims; ++d) positive = positive && x.size(d + 2) > 0 && out[d] > 0;
  KILN_CHECK_VALUE(positive, op, ": Input and output sizes should be greater than 0, but got ",
                   "input of size ", x.sizes(), " and output_size [", join(out), "]");
}

DimVector output_shape(const Tensor& x, IntArrayRef out) {
  DimVector sizes{x.size(0), x.size(1)};
  for (int64_t s : out) sizes.push_back(s);
  return sizes;
}

// (x, output_size, scale_d, scale_h, scale_w, exact): scales of the last three dimensions, 0
// where none was given (or the dimension is absent).
using NearestOp = Operator<Tensor(const Tensor&, IntArrayRef, double, double, double, bool)>;
// (x, output_size, align_corners, scale_h, scale_w)
using BilinearOp = Operator<Tensor(const Tensor&, IntArrayRef, bool, double, double)>;

Tensor nearest_backend(const NearestOp& op, const Tensor& x, IntArrayRef out, double scale_d,
                       double scale_h, double scale_w, bool exact) {
  check_resample(op.name(), x, out);
  KILN_CHECK_TYPE(x.is_floating_point(), op.name(), ": expected a floating point input, but got ",
                  dtype_name(x.dtype()));
  const Tensor input = x.contiguous();
  Tensor result = empty_tensor(output_shape(x, out), x.dtype(), x.device());
  if (result.numel() == 0) return result;
  run_kernel(op, {&input}, {&result},
             Attrs()
                 .f64("scale_d", scale_d)
                 .f64("scale_h", scale_h)
                 .f64("scale_w", scale_w)
                 .i64("exact", exact ? 1 : 0));
  return result;
}

Tensor bilinear_backend(const BilinearOp& op, const Tensor& x, IntArrayRef out, bool align_corners,
                        double scale_h, double scale_w) {
  check_resample(op.name(), x, out);
  KILN_CHECK_TYPE(x.is_floating_point(), op.name(), ": expected a floating point input, but got ",
                  dtype_name(x.dtype()));
  const Tensor input = x.contiguous();
  Tensor result = empty_tensor(output_shape(x, out), x.dtype(), x.device());
  if (result.numel() == 0) return result;
  run_kernel(op, {&input}, {&result},
             Attrs()
                 .i64("align_corners", align_corners ? 1 : 0)
                 .f64("scale_h", scale_h)
                 .f64("scale_w", scale_w));
  return result;
}

NearestOp upsample_nearest_op("upsample_nearest",
                              "upsample_nearest(Tensor input, int[] output_size, float scale_d, "
                              "float scale_h, float scale_w, bool exact) -> Tensor",
                              nearest_backend);
BilinearOp upsample_bilinear2d_op("upsample_bilinear2d",
                                  "upsample_bilinear2d(Tensor input, int[2] output_size, "
                                  "bool align_corners, float scale_h, float scale_w) -> Tensor",
                                  bilinear_backend);

// Records the adjoint of `taps` as the gradient of out = resample(input).
void record_adjoint(const char* name, const Tensor& input, const Tensor& out,
                    std::vector<DimTaps> taps) {
  auto shared = std::make_shared<const std::vector<DimTaps>>(std::move(taps));
  autograd::detail::record(name, {&input}, {&out},
                           [shared](autograd::detail::FunctionNode&, const std::vector<Tensor>& g) {
                             return std::vector<Tensor>{resample_adjoint(g[0], *shared)};
                           });
}

// The scales of the last `dims` of three dimensions, as the taps want them.
std::vector<double> last_scales(double scale_d, double scale_h, double scale_w, size_t dims) {
  std::vector<double> all{scale_d, scale_h, scale_w};
  return std::vector<double>(all.end() - static_cast<std::ptrdiff_t>(dims), all.end());
}

Tensor nearest_autograd(const NearestOp& op, const Tensor& x, IntArrayRef out, double scale_d,
                        double scale_h, double scale_w, bool exact) {
  Tensor result;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    result = op(x, out, scale_d, scale_h, scale_w, exact);
  }
  const char* names[] = {"UpsampleNearest1DBackward0", "UpsampleNearest2DBackward0",
                         "UpsampleNearest3DBackward0"};
  record_adjoint(names[out.size() - 1], x, result,
                 taps_of(exact ? Taps::kNearestExact : Taps::kNearest, x, out,
                         last_scales(scale_d, scale_h, scale_w, out.size()), false));
  return result;
}

Tensor bilinear_autograd(const BilinearOp& op, const Tensor& x, IntArrayRef out, bool align_corners,
                         double scale_h, double scale_w) {
  Tensor result;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    result = op(x, out, align_corners, scale_h, scale_w);
  }
  record_adjoint("UpsampleBilinear2DBackward0", x, result,
                 taps_of(Taps::kLinear, x, out, {scale_h, scale_w}, align_corners));
  return result;
}

const bool resample_registered = [] {
  upsample_nearest_op.set_optional();
  upsample_bilinear2d_op.set_optional();
  upsample_nearest_op.set_kernel(DispatchKey::Autograd, nearest_autograd);
  upsample_bilinear2d_op.set_kernel(DispatchKey::Autograd, bilinear_autograd);
  return true;
}();

// Whether x runs on an optional primitive `op` rather than the composite.
bool use_primitive(const OperatorBase& op, const Tensor& x) {
  return x.is_floating_point() && x.numel() > 0 && op.has_plugin_kernel(x.device().type());
}

// x [N, C, d...] resampled to `out` by `kind` (scales: one per spatial dimension, 0 for none).
Tensor resample(const char* op, const Tensor& x, IntArrayRef out, const std::vector<double>& scales,
                Taps kind, bool align_corners) {
  check_resample(op, x, out);
  const bool nearest = kind == Taps::kNearest || kind == Taps::kNearestExact;
  if (nearest && use_primitive(upsample_nearest_op, x)) {
    std::vector<double> s(3 - out.size(), 0.0);
    s.insert(s.end(), scales.begin(), scales.end());
    return upsample_nearest_op(x, out, s[0], s[1], s[2], kind == Taps::kNearestExact);
  }
  if (kind == Taps::kLinear && out.size() == 2 && use_primitive(upsample_bilinear2d_op, x)) {
    return upsample_bilinear2d_op(x, out, align_corners, scales[0], scales[1]);
  }
  return resample_composite(x, taps_of(kind, x, out, scales, align_corners));
}

}  // namespace
}  // namespace kiln::detail

namespace kiln {

Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return detail::resample("upsample_nearest2d", input, output_size,
                          {scales_h.value_or(0.0), scales_w.value_or(0.0)}, detail::Taps::kNearest,
                          false);
}

Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  return detail::resample("upsample_bilinear2d", input, output_size,
                          {scales_h.value_or(0.0), scales_w.value_or(0.0)}, detail::Taps::kLinear,
                          align_corners);
}

Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor) {
  const char* op = "pixel_shuffle";
  const int64_t r = upscale_factor;
  KILN_CHECK_VALUE(input.dim() >= 3, op, ": expects input to have at least 3 dimensions, but got ",
                   "input with ", input.dim(), " dimension(s)");
  KILN_CHECK_VALUE(r > 0, op, ": expects a positive upscale_factor, but got ", r);
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  int64_t r2 = 0, oh = 0, ow = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(r, r, &r2) && !__builtin_mul_overflow(h, r, &oh) &&
                       !__builtin_mul_overflow(w, r, &ow),
                   op, ": upscale_factor ", r, " for input of size ", input.sizes(),
                   " overflows int64");
  KILN_CHECK_VALUE(c % r2 == 0, op, ": expects its input's 'channel' dimension to be divisible ",
                   "by the square of upscale_factor, but input.size(-3)=", c,
                   " is not divisible by ", r2);
  DimVector batch(IntArrayRef(input.sizes().data(), input.sizes().size() - 3));
  const int64_t b = static_cast<int64_t>(batch.size());
  DimVector split = batch, order, out = batch;
  for (int64_t s : {c / r2, r, r, h, w}) split.push_back(s);
  for (int64_t d = 0; d < b; ++d) order.push_back(d);
  for (int64_t d : {0, 3, 1, 4, 2}) order.push_back(b + d);
  for (int64_t s : {c / r2, oh, ow}) out.push_back(s);
  return input.reshape(split).permute(order).reshape(out);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor) {
  const char* op = "pixel_unshuffle";
  const int64_t r = downscale_factor;
  KILN_CHECK_VALUE(input.dim() >= 3, op, ": expects input to have at least 3 dimensions, but got ",
                   "input with ", input.dim(), " dimension(s)");
  KILN_CHECK_VALUE(r > 0, op, ": expects a positive downscale_factor, but got ", r);
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  KILN_CHECK_VALUE(h % r == 0, op, ": expects height to be divisible by downscale_factor, but ",
                   "input.size(-2)=", h, " is not divisible by ", r);
  KILN_CHECK_VALUE(w % r == 0, op, ": expects width to be divisible by downscale_factor, but ",
                   "input.size(-1)=", w, " is not divisible by ", r);
  int64_t oc = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(c, r * r, &oc), op, ": downscale_factor ", r,
                   " for input of size ", input.sizes(), " overflows int64");
  DimVector batch(IntArrayRef(input.sizes().data(), input.sizes().size() - 3));
  const int64_t b = static_cast<int64_t>(batch.size());
  DimVector split = batch, order, out = batch;
  for (int64_t s : {c, h / r, r, w / r, r}) split.push_back(s);
  for (int64_t d = 0; d < b; ++d) order.push_back(d);
  for (int64_t d : {0, 2, 4, 1, 3}) order.push_back(b + d);
  for (int64_t s : {oc, h / r, w / r}) out.push_back(s);
  return input.reshape(split).permute(order).reshape(out);
}

}  // namespace kiln

namespace kiln::nn::functional {
namespace {

const char* mode_name(const InterpolateFuncOptions::mode_t& mode) {
  const char* names[] = {"nearest",   "linear", "bilinear",     "bicubic",
                         "trilinear", "area",   "nearest-exact"};
  return names[mode.index()];
}

std::string sizes_text(const std::vector<double>& v) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  return s.str() + "]";
}

// The spatial dimensions `mode` resamples, or 0 for any of 1, 2 and 3.
int64_t mode_dims(const InterpolateFuncOptions::mode_t& mode) {
  const int64_t dims[] = {0, 1, 2, 2, 3, 0, 0};
  return dims[mode.index()];
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  const char* op = "interpolate";
  const auto& mode = o.mode();
  const char* name = mode_name(mode);
  const bool nearest = std::holds_alternative<enumtype::kNearest>(mode) ||
                       std::holds_alternative<enumtype::kNearestExact>(mode);
  const bool area = std::holds_alternative<enumtype::kArea>(mode);
  KILN_CHECK_VALUE(!(nearest || area) || !o.align_corners(), op, ": align_corners option can ",
                   "only be set with the interpolating modes: linear | bilinear | bicubic | ",
                   "trilinear (got mode ", name, ")");
  KILN_CHECK_VALUE(input.dim() >= 3 && input.dim() <= 5, op, ": Input Error: Only 3D, 4D and 5D ",
                   "input Tensors supported (got ", input.dim(), "D) for the modes: nearest | ",
                   "linear | bilinear | bicubic | trilinear | area | nearest-exact (got ", name,
                   ")");
  const int64_t dims = input.dim() - 2;
  const int64_t want = mode_dims(mode);
  KILN_CHECK_VALUE(want == 0 || want == dims, op, ": Got ", input.dim(), "D input, but ", name,
                   " mode needs ", want + 2, "D input");
  KILN_CHECK_VALUE(!o.antialias(), op, ": antialias=true is not supported; resample without it");
  KILN_CHECK_VALUE(!(o.size() && o.scale_factor()), op, ": only one of size or scale_factor ",
                   "should be defined");
  KILN_CHECK_VALUE(o.size() || o.scale_factor(), op, ": either size or scale_factor should be ",
                   "defined");
  KILN_CHECK_VALUE(!(o.size() && o.recompute_scale_factor().value_or(false)), op,
                   ": recompute_scale_factor is not meaningful with an explicit size.");
  DimVector spatial(IntArrayRef(input.sizes().data() + 2, input.sizes().size() - 2));
  DimVector out;
  std::vector<double> scales(static_cast<size_t>(dims), 0.0);
  if (o.size()) {
    const std::vector<int64_t>& size = *o.size();
    KILN_CHECK_VALUE(static_cast<int64_t>(size.size()) == dims, op, ": Input and output must ",
                     "have the same number of spatial dimensions, but got input with spatial ",
                     "dimensions of ", IntArrayRef(spatial), " and output size of ",
                     IntArrayRef(size), ". Please provide input tensor in (N, C, d1, d2, ...,dK) ",
                     "format and output size in (o1, o2, ...,oK) format.");
    out.assign(IntArrayRef(size));
  } else {
    const std::vector<double>& factor = *o.scale_factor();
    KILN_CHECK_VALUE(static_cast<int64_t>(factor.size()) == dims, op, ": Input and ",
                     "scale_factor must have the same number of spatial dimensions, but got ",
                     "input with spatial dimensions of ", IntArrayRef(spatial), " and ",
                     "scale_factor of shape ", sizes_text(factor), ". Please provide input tensor ",
                     "in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) ",
                     "format.");
    const bool recompute = o.recompute_scale_factor().value_or(false) || area;
    for (int64_t d = 0; d < dims; ++d) {
      const double size = std::floor(static_cast<double>(spatial[d]) * factor[d]);
      KILN_CHECK_VALUE(std::isfinite(size) && std::abs(size) < 9.2e18, op, ": scale_factor ",
                       sizes_text(factor), " for input of size ", input.sizes(),
                       " gives an output size out of int64's range");
      out.push_back(static_cast<int64_t>(size));
      if (!recompute) scales[static_cast<size_t>(d)] = factor[d];
    }
  }
  if (area) {
    std::vector<std::optional<int64_t>> sizes(out.begin(), out.end());
    return kiln::detail::adaptive_avg_pool_nd(op, input, dims, sizes);
  }
  using kiln::detail::Taps;
  Taps kind = Taps::kLinear;
  if (nearest) {
    kind = std::holds_alternative<enumtype::kNearest>(mode) ? Taps::kNearest : Taps::kNearestExact;
  } else if (std::holds_alternative<enumtype::kBicubic>(mode)) {
    kind = Taps::kCubic;
  }
  return kiln::detail::resample(op, input, out, scales, kind, o.align_corners().value_or(false));
}

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options) {
  return kiln::pixel_shuffle(input, options.upscale_factor());
}

Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options) {
  return kiln::pixel_unshuffle(input, options.downscale_factor());
}

}  // namespace kiln::nn::functional
