// ONNX's Resize (opsets 13 to 17; https://onnx.ai/onnx/operators/onnx__Resize.html): nearest,
// linear and cubic, every coordinate_transformation_mode and nearest_mode, over any rank. It is
// separable: each resized axis is one weighted sum of index_selects, with the source indices
// and weights computed on the host from the shapes (as ONNX's reference implementation picks
// them: the n taps nearest the source coordinate, the edge value outside the input unless
// exclude_outside), so they are constants of a traced graph.
#include "onnx_impl.h"

#include <kiln/ops.h>

#include <algorithm>
#include <cmath>

namespace kiln::onnx::detail {

namespace {

using A = pb::AttributeProto;
using Out = std::vector<Tensor>;

struct Taps {
  std::vector<std::vector<int64_t>> index;  // per tap, per output position
  std::vector<std::vector<double>> weight;
  std::vector<char> outside;  // tf_crop_and_resize: the extrapolation value
};

std::vector<double> coeffs(const std::string& mode, const std::string& nearest, double ratio,
                           double a, bool integer) {
  if (mode == "nearest") {
    if (integer) return {0, 1};
    if (nearest == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (nearest == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (nearest == "floor") return {1, 0};
    return {0, 1};
  }
  if (mode == "linear") return {1 - ratio, ratio};
  const double r = ratio, s = 1 - ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
          ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

Taps taps(const NodeRun& n, int64_t in, int64_t out, double scale, double roi_start,
          double roi_end) {
  const std::string mode = n.s("mode", "nearest");
  const std::string ct = n.s("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = n.s("nearest_mode", "round_prefer_floor");
  const double a = n.f("cubic_coeff_a", -0.75F);
  const bool exclude = n.i("exclude_outside", 0) != 0;
  const size_t count = mode == "cubic" ? 4 : 2;
  Taps t;
  t.index.assign(count, std::vector<int64_t>(static_cast<size_t>(out)));
  t.weight.assign(count, std::vector<double>(static_cast<size_t>(out)));
  t.outside.assign(static_cast<size_t>(out), 0);
  const double out_f = scale * static_cast<double>(in);  // ONNX's reference: a float
  for (int64_t x = 0; x < out; ++x) {
    const auto xr = static_cast<double>(x);
    double xo = 0;
    if (ct == "half_pixel") {
      xo = (xr + 0.5) / scale - 0.5;
    } else if (ct == "pytorch_half_pixel") {
      xo = out_f > 1 ? (xr + 0.5) / scale - 0.5 : 0;
    } else if (ct == "align_corners") {
      xo = out_f == 1 ? 0 : xr * static_cast<double>(in - 1) / (out_f - 1);
    } else if (ct == "asymmetric") {
      xo = xr / scale;
    } else if (ct == "tf_half_pixel_for_nn") {
      xo = (xr + 0.5) / scale;
    } else {  // tf_crop_and_resize
      const double span = static_cast<double>(in - 1);
      xo = out_f > 1 ? roi_start * span + xr * (roi_end - roi_start) * span / (out_f - 1)
                     : 0.5 * (roi_start + roi_end) * span;
      if (xo < 0 || xo > span) t.outside[static_cast<size_t>(x)] = 1;
    }
    const double fl = std::floor(xo);
    const bool integer = xo == fl;
    // the taps: the count nearest positions (the lower one on a tie), as ONNX's reference
    const auto base = static_cast<int64_t>(integer ? fl - 1 : fl);
    const double ratio = xo - static_cast<double>(base);
    auto c = coeffs(mode, nearest, ratio, a, integer);
    const int64_t first = count == 4 ? base - 1 : base;
    double total = 0;
    for (size_t k = 0; k < count; ++k) {
      const int64_t i = first + static_cast<int64_t>(k);
      if (exclude && (i < 0 || i >= in)) c[k] = 0;
      total += c[k];
    }
    for (size_t k = 0; k < count; ++k) {
      const int64_t i = first + static_cast<int64_t>(k);
      t.index[k][static_cast<size_t>(x)] = std::clamp<int64_t>(i, 0, in - 1);
      t.weight[k][static_cast<size_t>(x)] = exclude && total != 0 ? c[k] / total : c[k];
    }
  }
  return t;
}

Tensor host_tensor(const std::vector<int64_t>& v, Device device) {
  Tensor t = kiln::empty({static_cast<int64_t>(v.size())}, TensorOptions().dtype(kLong));
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return t.to(device);
}

Tensor host_tensor(const std::vector<double>& v, ScalarType dtype, Device device) {
  Tensor t = kiln::empty({static_cast<int64_t>(v.size())}, TensorOptions().dtype(kDouble));
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t.to(dtype).to(device);
}

Out resize(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t r = x.dim();
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (n.has_input(3) && n.input(3).numel() > 0) {
    sizes = n.host_ints(3);
    if (static_cast<int64_t>(sizes.size()) != r) n.fail("sizes must have one value per dimension");
  } else if (n.has_input(2) && n.input(2).numel() > 0) {
    scales = n.host_doubles(2);
    if (static_cast<int64_t>(scales.size()) != r) {
      n.fail("scales must have one value per dimension");
    }
  } else {
    n.fail("needs scales or sizes");
  }
  std::vector<double> roi;
  if (n.has_input(1) && n.input(1).numel() > 0) roi = n.host_doubles(1);
  if (n.s("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize" &&
      static_cast<int64_t>(roi.size()) != 2 * r) {
    n.fail("tf_crop_and_resize needs roi with 2 values per dimension");
  }
  const bool floating = is_floating_point(x.dtype());
  const bool nearest = n.s("mode", "nearest") == "nearest";
  if (!nearest && !floating) n.unsupported("linear and cubic modes need a floating input");
  const double extrapolation = n.f("extrapolation_value", 0.0F);
  Tensor y = x;
  for (int64_t d = r; d-- > 0;) {
    const int64_t in = x.size(d);
    double scale = 0;
    int64_t out = 0;
    if (!sizes.empty()) {
      out = sizes[static_cast<size_t>(d)];
      scale = in > 0 ? static_cast<double>(out) / static_cast<double>(in) : 1;
    } else {
      scale = scales[static_cast<size_t>(d)];
      if (!(scale > 0)) n.fail(kiln::detail::str("scales has the non-positive value ", scale));
      out = static_cast<int64_t>(std::floor(static_cast<double>(in) * scale));
    }
    if (out < 0 || out > (int64_t{1} << 31)) n.fail(kiln::detail::str("output size ", out));
    const bool crop = !roi.empty() &&
                      n.s("coordinate_transformation_mode", "") == "tf_crop_and_resize";
    if (out == in && scale == 1 && !crop) continue;
    if (in == 0) n.fail("cannot resize an empty dimension");
    Taps t = taps(n, in, out, scale, crop ? roi[static_cast<size_t>(d)] : 0,
                  crop ? roi[static_cast<size_t>(d + r)] : 1);
    std::vector<int64_t> shape(static_cast<size_t>(r), 1);
    shape[static_cast<size_t>(d)] = out;
    Tensor acc;
    for (size_t k = 0; k < t.index.size(); ++k) {
      Tensor g = kiln::index_select(y, d, host_tensor(t.index[k], x.device()));
      if (nearest) {
        // weights 0 or 1: pick the tap with weight 1
        Tensor w = host_tensor(t.weight[k], kFloat, x.device()).reshape(shape);
        acc = acc.defined() ? kiln::where(kiln::gt(w, 0.5), g, acc) : g;
      } else {
        Tensor term = g * host_tensor(t.weight[k], x.dtype(), x.device()).reshape(shape);
        acc = acc.defined() ? acc + term : term;
      }
    }
    if (crop) {
      std::vector<int64_t> mask(t.outside.begin(), t.outside.end());
      Tensor m = kiln::ne(host_tensor(mask, x.device()).reshape(shape), 0);
      acc = kiln::where(m,
                        kiln::full({}, extrapolation,
                                   TensorOptions().dtype(x.dtype()).device(x.device())),
                        acc);
    }
    y = acc;
  }
  return {y.defined() && y.data_ptr() == x.data_ptr() ? y.clone() : y};
}

void check_resize(const NodeRun& n) {
  const std::string mode = n.s("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") {
    n.unsupported("mode '" + mode + "' is not one of nearest, linear, cubic");
  }
  const std::string ct = n.s("coordinate_transformation_mode", "half_pixel");
  if (ct != "half_pixel" && ct != "pytorch_half_pixel" && ct != "align_corners" &&
      ct != "asymmetric" && ct != "tf_half_pixel_for_nn" && ct != "tf_crop_and_resize") {
    n.unsupported("coordinate_transformation_mode '" + ct + "' is not supported");
  }
  const std::string nm = n.s("nearest_mode", "round_prefer_floor");
  if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil") {
    n.unsupported("nearest_mode '" + nm + "' is not supported");
  }
}

}  // namespace

void add_resize_ops(std::vector<OpDef>& ops) {
  ops.push_back({"Resize",
                 1,
                 4,
                 1,
                 1,
                 {{"coordinate_transformation_mode", A::STRING},
                  {"cubic_coeff_a", A::FLOAT},
                  {"exclude_outside", A::INT},
                  {"extrapolation_value", A::FLOAT},
                  {"mode", A::STRING},
                  {"nearest_mode", A::STRING}},
                 resize,
                 check_resize});
}

}  // namespace kiln::onnx::detail
