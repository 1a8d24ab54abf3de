// More of ONNX's operators (https://onnx.ai/onnx/operators/): GatherElements, ScatterElements
// (reduction none or add), LRN, MeanVarianceNormalization, Trilu, Mod,
// CastLike, Hardmax, CumSum, Einsum, DepthToSpace, SpaceToDepth, InstanceNormalization, OneHot,
// Shrink, EyeLike, TopK, and the losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
#include "onnx_impl.h"

#include <kiln/nn/functional.h>
#include <kiln/ops.h>

namespace kiln::onnx::detail {

namespace {

using A = pb::AttributeProto;
using Out = std::vector<Tensor>;

Tensor wrap_indices(const Tensor& idx, int64_t dim) {
  Tensor i = idx.to(kLong);
  return kiln::where(kiln::lt(i, 0), i + dim, i);
}

Out gather_elements(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t axis = norm_axis(n, n.i("axis", 0), x.dim());
  return {kiln::gather(x, axis, wrap_indices(n.input(1), x.size(axis)))};
}

Out trilu(NodeRun& n) {
  const Tensor& x = n.input(0);
  int64_t k = 0;
  if (n.has_input(1)) {
    auto v = n.host_ints(1);
    if (v.size() != 1) n.fail("k must have one element");
    k = v[0];
  }
  return {n.i("upper", 1) != 0 ? kiln::triu(x, k) : kiln::tril(x, k)};
}

Out mod(NodeRun& n) {
  const Tensor& a = n.input(0);
  const Tensor& b = n.input(1);
  if (n.i("fmod", 0) != 0) return {kiln::fmod(a, b)};
  if (is_floating_point(a.dtype())) n.fail("fmod = 0 needs integer inputs");
  return {kiln::remainder(a, b)};
}

Out hardmax(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t axis = norm_axis(n, n.i("axis", -1), x.dim());
  Tensor i = kiln::argmax(x, axis, true);
  Tensor pos = kiln::arange(x.size(axis), TensorOptions().dtype(kLong).device(x.device()));
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[static_cast<size_t>(axis)] = -1;
  return {kiln::eq(pos.reshape(shape), i).to(x.dtype())};
}

Out cumsum(NodeRun& n) {
  const Tensor& x = n.input(0);
  auto ax = n.host_ints(1);
  if (ax.size() != 1) n.fail("axis must have one element");
  const int64_t axis = norm_axis(n, ax[0], x.dim());
  const bool reverse = n.i("reverse", 0) != 0, exclusive = n.i("exclusive", 0) != 0;
  Tensor y = reverse ? kiln::flip(x, {axis}) : x;
  Tensor c = kiln::cumsum(y, axis, x.dtype());
  if (exclusive) c = c - y;
  return {reverse ? kiln::flip(c, {axis}) : c};
}

Out depth_to_space(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t b = n.i("blocksize", 0);
  if (x.dim() != 4 || b < 1 || x.size(1) % (b * b) != 0) {
    n.fail(kiln::detail::str("needs an input [N, C, H, W] with C divisible by blocksize^2, got ",
                             x.sizes(), " and blocksize ", b));
  }
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  if (n.s("mode", "DCR") == "CRD") return {kiln::pixel_shuffle(x, b)};
  Tensor y = x.reshape({N, b, b, C / (b * b), H, W}).permute({0, 3, 4, 1, 5, 2});
  return {y.reshape({N, C / (b * b), H * b, W * b})};
}

Out space_to_depth(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t b = n.i("blocksize", 0);
  if (x.dim() != 4 || b < 1 || x.size(2) % b != 0 || x.size(3) % b != 0) {
    n.fail(kiln::detail::str("needs an input [N, C, H, W] with H and W divisible by blocksize, ",
                             "got ", x.sizes(), " and blocksize ", b));
  }
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  Tensor y = x.reshape({N, C, H / b, b, W / b, b}).permute({0, 3, 5, 1, 2, 4});
  return {y.reshape({N, C * b * b, H / b, W / b})};
}

Out instance_norm(NodeRun& n) {
  const Tensor& x = n.input(0);
  if (x.dim() < 3) n.fail(kiln::detail::str("input ", x.sizes(), " has no spatial dimension"));
  std::vector<int64_t> dims;
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  Tensor mean = kiln::mean(x, dims, true);
  Tensor c = x - mean;
  Tensor var = kiln::mean(c * c, dims, true);
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[1] = -1;
  Tensor y = c * kiln::rsqrt(var + n.f("epsilon", 1e-5F));
  return {y * n.input(1).reshape(shape) + n.input(2).reshape(shape)};
}

Out one_hot(NodeRun& n) {
  const Tensor& idx = n.input(0);
  auto depth = n.host_doubles(1);
  if (depth.size() != 1 || depth[0] < 1) n.fail("depth must be one positive value");
  const auto d = static_cast<int64_t>(depth[0]);
  const Tensor& values = n.input(2);
  if (values.numel() != 2) n.fail("values must have two elements [off, on]");
  const int64_t rank = idx.dim() + 1;
  int64_t axis = n.i("axis", -1);
  if (axis < -rank || axis >= rank) n.fail(kiln::detail::str("axis ", axis, " is out of range"));
  if (axis < 0) axis += rank;
  Tensor i = idx.to(kLong);
  i = kiln::where(kiln::lt(i, 0), i + d, i);
  Tensor pos = kiln::arange(d, TensorOptions().dtype(kLong).device(idx.device()));
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = d;
  Tensor hot = kiln::eq(i.unsqueeze(axis), pos.reshape(shape));
  Tensor v = values.reshape({2});
  return {kiln::where(hot, v.select(0, 1), v.select(0, 0))};
}

Out shrink(NodeRun& n) {
  const Tensor& x = n.input(0);
  const double lambd = n.f("lambd", 0.5F), bias = n.f("bias", 0.0F);
  Tensor y = kiln::where(kiln::lt(x, -lambd), x + bias,
                         kiln::where(kiln::gt(x, lambd), x - bias, kiln::zeros_like(x)));
  return {y.to(x.dtype())};
}

Out eye_like(NodeRun& n) {
  const Tensor& x = n.input(0);
  if (x.dim() != 2) n.fail(kiln::detail::str("input ", x.sizes(), " must be a matrix"));
  ScalarType dtype = x.dtype();
  if (n.has("dtype")) {
    auto d = dtype_from_onnx(static_cast<int32_t>(n.i("dtype", 1)));
    if (!d) n.unsupported("dtype is not one kiln has");
    dtype = *d;
  }
  auto opts = TensorOptions().dtype(kLong).device(x.device());
  Tensor r = kiln::arange(x.size(0), opts).reshape({-1, 1});
  Tensor c = kiln::arange(x.size(1), opts).reshape({1, -1});
  return {kiln::eq(c - r, n.i("k", 0)).to(dtype)};
}

Out top_k(NodeRun& n) {
  const Tensor& x = n.input(0);
  auto k = n.host_ints(1);
  if (k.size() != 1) n.fail("K must have one element");
  const int64_t axis = norm_axis(n, n.i("axis", -1), x.dim());
  auto [values, indices] = kiln::topk(x, k[0], axis, n.i("largest", 1) != 0, true);
  return {values, indices};
}

Out scatter_elements(NodeRun& n) {
  const Tensor& x = n.input(0);
  const Tensor& updates = n.input(2);
  const int64_t axis = norm_axis(n, n.i("axis", 0), x.dim());
  Tensor idx = wrap_indices(n.input(1), x.size(axis));
  if (n.s("reduction", "none") == "add") return {kiln::scatter_add(x, axis, idx, updates)};
  // none: the updated positions take their update (indices are unique, as ONNX requires)
  Tensor hit = kiln::scatter_add(kiln::zeros_like(x), axis, idx, kiln::ones_like(updates));
  Tensor vals = kiln::scatter_add(kiln::zeros_like(x), axis, idx, updates);
  return {kiln::where(kiln::gt(hit, 0), vals, x)};
}

void check_scatter(const NodeRun& n) {
  const std::string r = n.s("reduction", "none");
  if (r != "none" && r != "add") n.unsupported("reduction '" + r + "' is not supported");
}

Out lrn(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t size = n.i("size", 0);
  if (size < 1) n.fail("the attribute 'size' must be positive");
  if (x.dim() < 3) n.fail(kiln::detail::str("input ", x.sizes(), " needs [N, C, d...]"));
  const double alpha = n.f("alpha", 1e-4F), beta = n.f("beta", 0.75F), bias = n.f("bias", 1.0F);
  // the sum of squares over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<int64_t> pad(static_cast<size_t>(2 * (x.dim() - 1)), 0);
  pad[pad.size() - 2] = before;
  pad[pad.size() - 1] = after;
  Tensor sq = kiln::constant_pad_nd(x * x, pad, 0);
  Tensor sum = sq.narrow(1, 0, x.size(1));
  for (int64_t k = 1; k < size; ++k) sum = sum + sq.narrow(1, k, x.size(1));
  return {x / kiln::pow(sum * (alpha / static_cast<double>(size)) + bias, beta)};
}

Out mean_variance_normalization(NodeRun& n) {
  const Tensor& x = n.input(0);
  auto axes = n.ints("axes", {0, 2, 3});
  for (auto& a : axes) a = norm_axis(n, a, x.dim());
  Tensor mean = kiln::mean(x, axes, true);
  Tensor var = kiln::mean(x * x, axes, true) - mean * mean;
  return {(x - mean) / (kiln::sqrt(var) + 1e-9)};
}

// ONNX's NegativeLogLikelihoodLoss of log-probabilities [N, C, d...] and targets [N, d...].
Tensor nll(const NodeRun& n, const Tensor& logp, const Tensor& target, const Tensor& weight) {
  Tensor t = target.to(kLong);
  Tensor keep = kiln::ones_like(t, TensorOptions().dtype(kBool));
  if (n.has("ignore_index")) keep = kiln::ne(t, n.i("ignore_index", 0));
  Tensor safe = kiln::where(keep, t, kiln::zeros_like(t));
  Tensor picked = kiln::gather(logp, 1, safe.unsqueeze(1)).squeeze(1);
  Tensor w = weight.defined() ? kiln::index_select(weight, 0, safe.reshape({-1})).reshape(t.sizes())
                              : kiln::ones_like(picked);
  w = w * keep.to(w.dtype());
  Tensor loss = -picked * w;
  const std::string reduction = n.s("reduction", "mean");
  if (reduction == "none") return loss;
  if (reduction == "sum") return kiln::sum(loss);
  return kiln::sum(loss) / kiln::sum(w);
}

void check_reduction(const NodeRun& n) {
  const std::string r = n.s("reduction", "mean");
  if (r != "mean" && r != "sum" && r != "none") {
    n.fail("reduction '" + r + "' is not one of mean, sum, none");
  }
}

Out nll_loss(NodeRun& n) {
  return {nll(n, n.input(0), n.input(1), n.has_input(2) ? n.input(2) : Tensor())};
}

Out softmax_cross_entropy(NodeRun& n) {
  const Tensor& scores = n.input(0);
  if (scores.dim() < 2) n.fail(kiln::detail::str("scores ", scores.sizes(), " need [N, C, ...]"));
  Tensor logp = kiln::nn::functional::log_softmax(scores, 1);
  Out out{nll(n, logp, n.input(1), n.has_input(2) ? n.input(2) : Tensor())};
  if (n.has_output(1)) out.push_back(logp);
  return out;
}

}  // namespace

void add_extra_ops(std::vector<OpDef>& ops) {
  ops.push_back({"GatherElements", 2, 2, 1, 1, {{"axis", A::INT}}, gather_elements});
  ops.push_back({"ScatterElements",
                 3,
                 3,
                 1,
                 1,
                 {{"axis", A::INT}, {"reduction", A::STRING}},
                 scatter_elements,
                 check_scatter});
  ops.push_back({"LRN",
                 1,
                 1,
                 1,
                 1,
                 {{"alpha", A::FLOAT}, {"beta", A::FLOAT}, {"bias", A::FLOAT}, {"size", A::INT}},
                 lrn});
  ops.push_back(
      {"MeanVarianceNormalization", 1, 1, 1, 1, {{"axes", A::INTS}}, mean_variance_normalization});
  ops.push_back({"Trilu", 1, 2, 1, 1, {{"upper", A::INT}}, trilu});
  ops.push_back({"Mod", 2, 2, 1, 1, {{"fmod", A::INT}}, mod});
  ops.push_back({"CastLike", 2, 2, 1, 1, {}, [](NodeRun& n) -> Out {
                   return {n.input(0).to(n.input(1).dtype(), /*copy=*/true)};
                 }});
  ops.push_back({"Hardmax", 1, 1, 1, 1, {{"axis", A::INT}}, hardmax});
  ops.push_back({"CumSum", 2, 2, 1, 1, {{"exclusive", A::INT}, {"reverse", A::INT}}, cumsum});
  ops.push_back({"Einsum", 1, -1, 1, 1, {{"equation", A::STRING}}, [](NodeRun& n) -> Out {
                   std::vector<Tensor> in;
                   for (size_t k = 0; k < n.num_inputs(); ++k) in.push_back(n.input(k));
                   return {kiln::einsum(n.s("equation", ""), in)};
                 }});
  ops.push_back(
      {"DepthToSpace", 1, 1, 1, 1, {{"blocksize", A::INT}, {"mode", A::STRING}}, depth_to_space});
  ops.push_back({"SpaceToDepth", 1, 1, 1, 1, {{"blocksize", A::INT}}, space_to_depth});
  ops.push_back({"InstanceNormalization", 3, 3, 1, 1, {{"epsilon", A::FLOAT}}, instance_norm});
  ops.push_back({"OneHot", 3, 3, 1, 1, {{"axis", A::INT}}, one_hot});
  ops.push_back({"Shrink", 1, 1, 1, 1, {{"bias", A::FLOAT}, {"lambd", A::FLOAT}}, shrink});
  ops.push_back({"EyeLike", 1, 1, 1, 1, {{"dtype", A::INT}, {"k", A::INT}}, eye_like});
  ops.push_back(
      {"TopK", 2, 2, 2, 2, {{"axis", A::INT}, {"largest", A::INT}, {"sorted", A::INT}}, top_k});
  ops.push_back({"NegativeLogLikelihoodLoss",
                 2,
                 3,
                 1,
                 1,
                 {{"ignore_index", A::INT}, {"reduction", A::STRING}},
                 nll_loss,
                 check_reduction});
  ops.push_back({"SoftmaxCrossEntropyLoss",
                 2,
                 3,
                 1,
                 2,
                 {{"ignore_index", A::INT}, {"reduction", A::STRING}},
                 softmax_cross_entropy,
                 check_reduction});
}

}  // namespace kiln::onnx::detail
