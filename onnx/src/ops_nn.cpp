// ONNX's neural-network operators (https://onnx.ai/onnx/operators/): MatMul, Gemm, Conv,
// ConvTranspose, BatchNormalization (inference), MaxPool, AveragePool, the global pools,
// Softmax, LogSoftmax, LayerNormalization. Padding ONNX gives per side (pads = [begin..., end...]
// or auto_pad) that kiln's operators cannot take (asymmetric, or larger than half the kernel) is
// applied with constant_pad_nd first.
#include "onnx_impl.h"

#include <kiln/nn/functional.h>
#include <kiln/nn/functional/conv.h>
#include <kiln/nn/functional/pooling.h>
#include <kiln/ops.h>

#include <limits>

namespace kiln::onnx::detail {

namespace {

using A = pb::AttributeProto;
using Out = std::vector<Tensor>;

// The spatial geometry of a convolution or pooling node, pads resolved from auto_pad.
struct Window {
  std::vector<int64_t> kernel, stride, dilation, begin, end;
  bool symmetric() const { return begin == end; }
};

Window window(const NodeRun& n, const Tensor& x, std::vector<int64_t> kernel) {
  const int64_t nd = x.dim() - 2;
  if (nd < 1 || nd > 3) {
    n.unsupported(kiln::detail::str("input of rank ", x.dim(), " (kiln has 1 to 3 spatial dims)"));
  }
  Window w;
  w.kernel = std::move(kernel);
  if (static_cast<int64_t>(w.kernel.size()) != nd) {
    n.fail(kiln::detail::str("kernel_shape ", ArrayRef<int64_t>(w.kernel), " does not match ", nd,
                             " spatial dimensions of input ", x.sizes()));
  }
  auto per_dim = [&](const char* name, int64_t def) {
    auto v = n.ints(name, std::vector<int64_t>(static_cast<size_t>(nd), def));
    if (static_cast<int64_t>(v.size()) != nd) {
      n.fail(kiln::detail::str(name, " has ", v.size(), " values for ", nd, " spatial dims"));
    }
    for (int64_t e : v) {
      if (e < (def == 0 ? 0 : 1)) n.fail(kiln::detail::str(name, " has the invalid value ", e));
    }
    return v;
  };
  w.stride = per_dim("strides", 1);
  w.dilation = per_dim("dilations", 1);
  auto pads = n.ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * nd), 0));
  if (static_cast<int64_t>(pads.size()) != 2 * nd) {
    n.fail(kiln::detail::str("pads has ", pads.size(), " values for ", nd, " spatial dims"));
  }
  for (int64_t p : pads) {
    if (p < 0) n.fail(kiln::detail::str("pads has the negative value ", p));
  }
  w.begin.assign(pads.begin(), pads.begin() + nd);
  w.end.assign(pads.begin() + nd, pads.end());
  const std::string ap = n.s("auto_pad", "NOTSET");
  if (ap == "VALID") {
    w.begin.assign(static_cast<size_t>(nd), 0);
    w.end.assign(static_cast<size_t>(nd), 0);
  } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t in = x.size(d + 2), s = w.stride[d];
      const int64_t out = (in + s - 1) / s;
      const int64_t eff = (w.kernel[d] - 1) * w.dilation[d] + 1;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + eff - in);
      const int64_t small = total / 2;
      w.begin[d] = ap == "SAME_UPPER" ? small : total - small;
      w.end[d] = total - w.begin[d];
    }
  }
  return w;
}

// constant_pad_nd's list (last dimension first) for the window's pads.
std::vector<int64_t> pad_list(const Window& w) {
  std::vector<int64_t> p;
  for (size_t d = w.begin.size(); d-- > 0;) {
    p.push_back(w.begin[d]);
    p.push_back(w.end[d]);
  }
  return p;
}

Out conv(NodeRun& n) {
  const Tensor& x = n.input(0);
  const Tensor& weight = n.input(1);
  Tensor bias = n.has_input(2) ? n.input(2) : Tensor();
  if (weight.dim() != x.dim()) {
    n.fail(kiln::detail::str("weight ", weight.sizes(), " and input ", x.sizes(),
                             " must have the same rank"));
  }
  std::vector<int64_t> kernel(weight.sizes().begin() + 2, weight.sizes().end());
  Window w = window(n, x, n.ints("kernel_shape", kernel));
  const int64_t groups = n.i("group", 1);
  Tensor in = x;
  std::vector<int64_t> pad = w.begin;
  if (!w.symmetric()) {
    in = kiln::constant_pad_nd(x, pad_list(w), 0);
    pad.assign(pad.size(), 0);
  }
  switch (x.dim()) {
    case 3: return {kiln::conv1d(in, weight, bias, w.stride, pad, w.dilation, groups)};
    case 4: return {kiln::conv2d(in, weight, bias, w.stride, pad, w.dilation, groups)};
    default: return {kiln::conv3d(in, weight, bias, w.stride, pad, w.dilation, groups)};
  }
}

Out conv_transpose(NodeRun& n) {
  const Tensor& x = n.input(0);
  const Tensor& weight = n.input(1);
  if (weight.dim() != x.dim()) {
    n.fail(kiln::detail::str("weight ", weight.sizes(), " and input ", x.sizes(),
                             " must have the same rank"));
  }
  std::vector<int64_t> kernel(weight.sizes().begin() + 2, weight.sizes().end());
  // auto_pad's SAME is the transposed one (output = input * stride): resolved below
  Window w;
  {
    const std::string ap = n.s("auto_pad", "NOTSET");
    w = window(n, x, n.ints("kernel_shape", kernel));
    if (ap != "NOTSET") {
      w.begin.assign(w.begin.size(), 0);
      w.end.assign(w.end.size(), 0);
    }
  }
  const auto nd = static_cast<int64_t>(w.kernel.size());
  const int64_t groups = n.i("group", 1);
  auto out_pad = n.ints("output_padding", std::vector<int64_t>(static_cast<size_t>(nd), 0));
  if (static_cast<int64_t>(out_pad.size()) != nd) n.fail("output_padding has the wrong length");
  auto out_shape = n.ints("output_shape");
  const std::string ap = n.s("auto_pad", "NOTSET");
  if (!out_shape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    if (out_shape.size() > static_cast<size_t>(nd)) {  // given with the batch and channel dims
      out_shape.erase(out_shape.begin(), out_shape.end() - nd);
    }
    if (out_shape.empty()) {
      for (int64_t d = 0; d < nd; ++d) out_shape.push_back(x.size(d + 2) * w.stride[d]);
    }
    if (static_cast<int64_t>(out_shape.size()) != nd) n.fail("output_shape has the wrong length");
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t full = w.stride[d] * (x.size(d + 2) - 1) + out_pad[d] +
                           (w.kernel[d] - 1) * w.dilation[d] + 1;
      const int64_t total = full - out_shape[d];
      // floor division, as ONNX's reference: a negative total extends the end
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (ap == "SAME_UPPER") {
        w.begin[d] = half;
        w.end[d] = total - half;
      } else {
        w.begin[d] = total - half;
        w.end[d] = half;
      }
    }
  }
  // the full transposed convolution, then output_padding, then the pads cropped
  const std::vector<int64_t> zero(static_cast<size_t>(nd), 0);
  Tensor y;
  switch (x.dim()) {
    case 3:
      y = kiln::conv_transpose1d(x, weight, {}, w.stride, zero, zero, groups, w.dilation);
      break;
    case 4:
      y = kiln::conv_transpose2d(x, weight, {}, w.stride, zero, zero, groups, w.dilation);
      break;
    default: y = kiln::conv_transpose3d(x, weight, {}, w.stride, zero, zero, groups, w.dilation);
  }
  std::vector<int64_t> crop;
  bool any = false;
  for (int64_t d = nd; d-- > 0;) {
    crop.push_back(-w.begin[d]);
    crop.push_back(out_pad[d] - w.end[d]);
    any = any || w.begin[d] != 0 || out_pad[d] != w.end[d];
  }
  if (any) y = kiln::constant_pad_nd(y, crop, 0);
  if (n.has_input(2)) {
    std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
    shape[1] = -1;
    y = y + n.input(2).reshape(shape);
  }
  return {y};
}

Out gemm(NodeRun& n) {
  Tensor a = n.input(0), b = n.input(1);
  if (a.dim() != 2 || b.dim() != 2) {
    n.fail(kiln::detail::str("A ", a.sizes(), " and B ", b.sizes(), " must be matrices"));
  }
  if (n.i("transA", 0) != 0) a = a.t();
  if (n.i("transB", 0) != 0) b = b.t();
  const double alpha = n.f("alpha", 1.0F), beta = n.f("beta", 1.0F);
  if (n.has_input(2) && beta != 0) return {kiln::addmm(n.input(2), a, b, beta, alpha)};
  Tensor y = kiln::mm(a, b);
  return {alpha == 1.0 ? y : y * alpha};
}

Out batch_norm(NodeRun& n) {
  const Tensor& x = n.input(0);
  return {kiln::nn::functional::batch_norm(x, n.input(3), n.input(4), n.input(1), n.input(2), false,
                                           0.1, n.f("epsilon", 1e-5F))};
}

void check_batch_norm(const NodeRun& n) {
  if (n.i("training_mode", 0) != 0) {
    n.unsupported("training_mode = 1 is not supported (kiln imports inference graphs)");
  }
}

bool native_pool_pads(const Window& w) {
  if (!w.symmetric()) return false;
  for (size_t d = 0; d < w.kernel.size(); ++d) {
    if (2 * w.begin[d] > (w.kernel[d] - 1) * w.dilation[d] + 1) return false;
  }
  return true;
}

Out max_pool(NodeRun& n) {
  if (!is_floating_point(n.input(0).dtype())) {
    // kiln pools floating tensors: integers (up to 2^24 exactly) through float
    Val v{n.input(0).to(kFloat), n.in[0]->known};
    Val* saved = n.in[0];
    n.in[0] = &v;
    Tensor y = max_pool(n)[0];
    n.in[0] = saved;
    return {y.to(n.input(0).dtype())};
  }
  const Tensor& x = n.input(0);
  Window w = window(n, x, n.ints("kernel_shape"));
  const bool ceil = n.i("ceil_mode", 0) != 0;
  Tensor in = x;
  std::vector<int64_t> pad = w.begin;
  if (!native_pool_pads(w)) {
    const Scalar low = is_floating_point(x.dtype())
                           ? Scalar(-std::numeric_limits<double>::infinity())
                           : Scalar(std::numeric_limits<int64_t>::min());
    in = kiln::constant_pad_nd(x, pad_list(w), low);
    pad.assign(pad.size(), 0);
  }
  switch (x.dim()) {
    case 3: return {kiln::max_pool1d(in, w.kernel, w.stride, pad, w.dilation, ceil)};
    case 4: return {kiln::max_pool2d(in, w.kernel, w.stride, pad, w.dilation, ceil)};
    default: return {kiln::max_pool3d(in, w.kernel, w.stride, pad, w.dilation, ceil)};
  }
}

Tensor avg(const Tensor& in, const Window& w, IntArrayRef pad, bool ceil, bool include) {
  switch (in.dim()) {
    case 3: return kiln::avg_pool1d(in, w.kernel, w.stride, pad, ceil, include);
    case 4: return kiln::avg_pool2d(in, w.kernel, w.stride, pad, ceil, include);
    default: return kiln::avg_pool3d(in, w.kernel, w.stride, pad, ceil, include);
  }
}

Out avg_pool(NodeRun& n) {
  const Tensor& x = n.input(0);
  Window w = window(n, x, n.ints("kernel_shape"));
  const bool ceil = n.i("ceil_mode", 0) != 0;
  const bool include = n.i("count_include_pad", 0) != 0;
  if (native_pool_pads(w)) return {avg(x, w, w.begin, ceil, include)};
  const std::vector<int64_t> zero(w.begin.size(), 0);
  Tensor sum = avg(kiln::constant_pad_nd(x, pad_list(w), 0), w, zero, ceil, true);
  if (include) return {sum};
  // the average over the input's elements only: the same pool of ones padded with zeros
  std::vector<int64_t> ones_shape(static_cast<size_t>(x.dim()), 1);
  for (int64_t d = 2; d < x.dim(); ++d) ones_shape[static_cast<size_t>(d)] = x.size(d);
  Tensor ones = kiln::ones(ones_shape, TensorOptions().dtype(x.dtype()).device(x.device()));
  Tensor count = avg(kiln::constant_pad_nd(ones, pad_list(w), 0), w, zero, ceil, true);
  return {sum / count};
}

void check_pool(const NodeRun& n) {
  check_auto_pad(n);
  if (!n.has("kernel_shape")) n.fail("the attribute 'kernel_shape' is required");
  if (n.i("storage_order", 0) != 0) n.unsupported("storage_order = 1 is not supported");
}

std::vector<int64_t> spatial_dims(const NodeRun& n, const Tensor& x) {
  if (x.dim() < 3) n.fail(kiln::detail::str("input ", x.sizes(), " has no spatial dimension"));
  std::vector<int64_t> dims;
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

Out layer_norm(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t axis = norm_axis(n, n.i("axis", -1), x.dim());
  std::vector<int64_t> shape(x.sizes().begin() + axis, x.sizes().end());
  const double eps = n.f("epsilon", 1e-5F);
  const Tensor& scale = n.input(1);
  Tensor bias = n.has_input(2) ? n.input(2) : Tensor();
  if (n.has_output(1) || n.has_output(2)) {
    // the mean and inverse standard deviation too, over the normalized dimensions (kept)
    std::vector<int64_t> dims;
    for (int64_t d = axis; d < x.dim(); ++d) dims.push_back(d);
    Tensor xf = x.to(kFloat);
    Tensor mean = kiln::mean(xf, dims, true);
    Tensor c = xf - mean;
    Tensor inv = kiln::rsqrt(kiln::mean(c * c, dims, true) + eps);
    Tensor y = (c * inv).to(x.dtype()) * scale;
    if (bias.defined()) y = y + bias;
    return {y, mean, inv};
  }
  if (scale.sizes() == IntArrayRef(shape) && (!bias.defined() || bias.sizes() == scale.sizes())) {
    return {kiln::nn::functional::layer_norm(x, shape, scale, bias, eps)};
  }
  Tensor y = kiln::nn::functional::layer_norm(x, shape, {}, {}, eps) * scale;
  return {bias.defined() ? y + bias : y};
}

const std::vector<AttrSpec> kConvAttrs = {{"auto_pad", A::STRING}, {"dilations", A::INTS},
                                          {"group", A::INT},       {"kernel_shape", A::INTS},
                                          {"pads", A::INTS},       {"strides", A::INTS}};

}  // namespace

void add_nn_ops(std::vector<OpDef>& ops) {
  ops.push_back({"MatMul", 2, 2, 1, 1, {}, [](NodeRun& n) -> Out {
                   return {kiln::matmul(n.input(0), n.input(1))};
                 }});
  ops.push_back({"Gemm",
                 2,
                 3,
                 1,
                 1,
                 {{"alpha", A::FLOAT}, {"beta", A::FLOAT}, {"transA", A::INT}, {"transB", A::INT}},
                 gemm});
  ops.push_back({"Conv", 2, 3, 1, 1, kConvAttrs, conv, check_auto_pad});
  auto ct = kConvAttrs;
  ct.push_back({"output_padding", A::INTS});
  ct.push_back({"output_shape", A::INTS});
  ops.push_back({"ConvTranspose", 2, 3, 1, 1, ct, conv_transpose, check_auto_pad});
  ops.push_back({"BatchNormalization",
                 5,
                 5,
                 1,
                 1,
                 {{"epsilon", A::FLOAT}, {"momentum", A::FLOAT}, {"training_mode", A::INT}},
                 batch_norm,
                 check_batch_norm});
  ops.push_back({"MaxPool",
                 1,
                 1,
                 1,
                 1,
                 {{"auto_pad", A::STRING},
                  {"ceil_mode", A::INT},
                  {"dilations", A::INTS},
                  {"kernel_shape", A::INTS},
                  {"pads", A::INTS},
                  {"storage_order", A::INT},
                  {"strides", A::INTS}},
                 max_pool,
                 check_pool});
  ops.push_back({"AveragePool",
                 1,
                 1,
                 1,
                 1,
                 {{"auto_pad", A::STRING},
                  {"ceil_mode", A::INT},
                  {"count_include_pad", A::INT},
                  {"kernel_shape", A::INTS},
                  {"pads", A::INTS},
                  {"strides", A::INTS}},
                 avg_pool,
                 check_pool});
  ops.push_back({"GlobalAveragePool", 1, 1, 1, 1, {}, [](NodeRun& n) -> Out {
                   return {kiln::mean(n.input(0), spatial_dims(n, n.input(0)), true)};
                 }});
  ops.push_back({"GlobalMaxPool", 1, 1, 1, 1, {}, [](NodeRun& n) -> Out {
                   return {kiln::amax(n.input(0), spatial_dims(n, n.input(0)), true)};
                 }});
  ops.push_back({"Softmax", 1, 1, 1, 1, {{"axis", A::INT}}, [](NodeRun& n) -> Out {
                   const Tensor& x = n.input(0);
                   return {
                       kiln::nn::functional::softmax(x, norm_axis(n, n.i("axis", -1), x.dim()))};
                 }});
  ops.push_back({"LogSoftmax", 1, 1, 1, 1, {{"axis", A::INT}}, [](NodeRun& n) -> Out {
                   const Tensor& x = n.input(0);
                   return {kiln::nn::functional::log_softmax(x, norm_axis(n, n.i("axis", -1),
                                                                          x.dim()))};
                 }});
  const std::vector<AttrSpec> ln_attrs = {
      {"axis", A::INT}, {"epsilon", A::FLOAT}, {"stash_type", A::INT}};
  OpDef ln{"LayerNormalization", 2, 3, 1, 3, ln_attrs, layer_norm};
  ln.since = 17;
  ops.push_back(ln);
}

}  // namespace kiln::onnx::detail
