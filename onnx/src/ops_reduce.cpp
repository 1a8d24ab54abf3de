// ONNX's reductions (https://onnx.ai/onnx/operators/): ReduceMean, ReduceSum (axes as an input
// since opset 13), ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp (axes as an attribute until opset 18), ArgMax, ArgMin.
#include "onnx_impl.h"

#include <kiln/ops.h>

#include <algorithm>

namespace kiln::onnx::detail {

namespace {

using A = pb::AttributeProto;
using Out = std::vector<Tensor>;

// The reduced dimensions, sorted; nullopt: none (noop_with_empty_axes).
std::optional<std::vector<int64_t>> reduce_axes(const NodeRun& n, const Tensor& x) {
  std::vector<int64_t> axes;
  if (n.node().op_type() == "ReduceSum") {
    if (n.has_input(1)) axes = n.host_ints(1);
  } else {
    axes = n.ints("axes");
  }
  if (axes.empty()) {
    if (n.i("noop_with_empty_axes", 0) != 0) return std::nullopt;
    for (int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
  }
  for (auto& a : axes) a = norm_axis(n, a, std::max<int64_t>(x.dim(), 1));
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

using Reducer = Tensor (*)(const Tensor&, IntArrayRef, bool);

Out reduce(NodeRun& n, Reducer f) {
  const Tensor& x = n.input(0);
  auto axes = reduce_axes(n, x);
  if (!axes) return {x.clone()};
  const bool keep = n.i("keepdims", 1) != 0;
  if (x.dim() == 0) return {f(x.reshape({1}), {0}, false)};
  return {f(x, *axes, keep)};
}

Tensor prod_dims(const Tensor& x, IntArrayRef dims, bool keep) {
  Tensor y = x;
  for (size_t k = dims.size(); k-- > 0;) y = kiln::prod(y, dims[k], keep);
  return y;
}

Out arg(NodeRun& n, bool max) {
  const Tensor& x = n.input(0);
  const int64_t axis = norm_axis(n, n.i("axis", 0), x.dim());
  const bool keep = n.i("keepdims", 1) != 0;
  if (n.i("select_last_index", 0) != 0) {
    Tensor f = kiln::flip(x, {axis});
    Tensor i = max ? kiln::argmax(f, axis, keep) : kiln::argmin(f, axis, keep);
    return {(x.size(axis) - 1) - i};
  }
  return {max ? kiln::argmax(x, axis, keep) : kiln::argmin(x, axis, keep)};
}

const std::vector<AttrSpec> kReduceAttrs = {{"axes", A::INTS}, {"keepdims", A::INT}};

#define REDUCE(NAME, F)                                                     \
  OpDef {                                                                   \
    NAME, 1, 1, 1, 1, kReduceAttrs, [](NodeRun& n) { return reduce(n, F); } \
  }

}  // namespace

void add_reduce_ops(std::vector<OpDef>& ops) {
  ops.push_back({"ReduceSum",
                 1,
                 2,
                 1,
                 1,
                 {{"keepdims", A::INT}, {"noop_with_empty_axes", A::INT}},
                 [](NodeRun& n) {
                   return reduce(n, [](const Tensor& x, IntArrayRef d, bool k) {
                     return kiln::sum(x, d, k);
                   });
                 }});
  ops.push_back(REDUCE("ReduceMean",
                       [](const Tensor& x, IntArrayRef d, bool k) { return kiln::mean(x, d, k); }));
  ops.push_back(REDUCE("ReduceMax",
                       [](const Tensor& x, IntArrayRef d, bool k) { return kiln::amax(x, d, k); }));
  ops.push_back(REDUCE("ReduceMin",
                       [](const Tensor& x, IntArrayRef d, bool k) { return kiln::amin(x, d, k); }));
  ops.push_back(REDUCE("ReduceProd", prod_dims));
  ops.push_back(REDUCE("ReduceL1", [](const Tensor& x, IntArrayRef d, bool k) {
    return kiln::sum(kiln::abs(x), d, k);
  }));
  ops.push_back(REDUCE("ReduceL2", [](const Tensor& x, IntArrayRef d, bool k) {
    return kiln::sqrt(kiln::sum(x * x, d, k));
  }));
  ops.push_back(REDUCE("ReduceSumSquare", [](const Tensor& x, IntArrayRef d, bool k) {
    return kiln::sum(x * x, d, k);
  }));
  ops.push_back(REDUCE("ReduceLogSum", [](const Tensor& x, IntArrayRef d, bool k) {
    return kiln::log(kiln::sum(x, d, k));
  }));
  ops.push_back(REDUCE("ReduceLogSumExp", [](const Tensor& x, IntArrayRef d, bool k) {
    return kiln::logsumexp(x, d, k);
  }));
  const std::vector<AttrSpec> arg_attrs = {
      {"axis", A::INT}, {"keepdims", A::INT}, {"select_last_index", A::INT}};
  ops.push_back({"ArgMax", 1, 1, 1, 1, arg_attrs, [](NodeRun& n) { return arg(n, true); }});
  ops.push_back({"ArgMin", 1, 1, 1, 1, arg_attrs, [](NodeRun& n) { return arg(n, false); }});
}

}  // namespace kiln::onnx::detail
