// ONNX's shape and data-movement operators (https://onnx.ai/onnx/operators/): Shape, Size,
// Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Slice, Gather, Expand, Tile,
// Pad, Range, Constant, ConstantOfShape. Their shape inputs (Reshape's shape, Slice's starts,
// ...) are read on the host: known at trace time when they come from initializers, Constants
// and Shape chains, as in the models exporters write.
#include "onnx_impl.h"

#include <kiln/nn/functional/padding.h>
#include <kiln/ops.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::onnx::detail {

namespace {

using A = pb::AttributeProto;
using Out = std::vector<Tensor>;

Tensor longs(const std::vector<int64_t>& v, Device device) {
  Tensor t = kiln::empty({static_cast<int64_t>(v.size())}, TensorOptions().dtype(kLong));
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return t.to(device);
}

Out shape(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t r = x.dim();
  auto clampd = [&](int64_t v) {
    if (v < 0) v += r;
    return std::clamp<int64_t>(v, 0, r);
  };
  const int64_t start = clampd(n.i("start", 0));
  const int64_t end = n.has("end") ? clampd(n.i("end", r)) : r;
  std::vector<int64_t> s;
  for (int64_t d = start; d < end; ++d) s.push_back(x.size(d));
  return {longs(s, x.device())};
}

Out reshape(NodeRun& n) {
  const Tensor& x = n.input(0);
  auto s = n.host_ints(1);
  const bool allowzero = n.i("allowzero", 0) != 0;
  int infer = -1;
  for (size_t d = 0; d < s.size(); ++d) {
    if (s[d] == 0 && !allowzero) {
      if (static_cast<int64_t>(d) >= x.dim()) {
        n.fail(kiln::detail::str("shape ", ArrayRef<int64_t>(s), " copies dimension ", d,
                                 " of input ", x.sizes(), ", which has none"));
      }
      s[d] = x.size(static_cast<int64_t>(d));
    } else if (s[d] == -1) {
      if (infer >= 0) n.fail("shape has more than one -1");
      infer = static_cast<int>(d);
    } else if (s[d] < 0) {
      n.fail(kiln::detail::str("shape has the invalid size ", s[d]));
    }
  }
  return {x.reshape(s)};
}

Out flatten(NodeRun& n) {
  const Tensor& x = n.input(0);
  int64_t axis = n.i("axis", 1);
  if (axis < -x.dim() || axis > x.dim()) n.fail(kiln::detail::str("axis ", axis, " out of range"));
  if (axis < 0) axis += x.dim();
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < x.dim(); ++d) (d < axis ? a : b) *= x.size(d);
  return {x.reshape({a, b})};
}

Out transpose(NodeRun& n) {
  const Tensor& x = n.input(0);
  std::vector<int64_t> perm;
  for (int64_t d = x.dim(); d-- > 0;) perm.push_back(d);
  perm = n.ints("perm", perm);
  return {x.permute(perm)};
}

std::vector<int64_t> axes_of(const NodeRun& n, size_t k, int64_t rank) {
  std::vector<int64_t> axes = n.host_ints(k);
  for (auto& a : axes) a = norm_axis(n, a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) n.fail("axes are repeated");
  return axes;
}

Out squeeze(NodeRun& n) {
  const Tensor& x = n.input(0);
  if (!n.has_input(1)) return {x.squeeze()};
  auto axes = axes_of(n, 1, x.dim());
  Tensor y = x;
  for (size_t k = axes.size(); k-- > 0;) {
    if (x.size(axes[k]) != 1) {
      n.fail(kiln::detail::str("dimension ", axes[k], " of input ", x.sizes(), " is not 1"));
    }
    y = y.squeeze(axes[k]);
  }
  return {y};
}

Out unsqueeze(NodeRun& n) {
  const Tensor& x = n.input(0);
  auto axes = n.host_ints(1);
  const auto rank = x.dim() + static_cast<int64_t>(axes.size());
  for (auto& a : axes) a = norm_axis(n, a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) n.fail("axes are repeated");
  Tensor y = x;
  for (int64_t a : axes) y = y.unsqueeze(a);
  return {y};
}

Out concat(NodeRun& n) {
  std::vector<Tensor> parts;
  for (size_t k = 0; k < n.num_inputs(); ++k) parts.push_back(n.input(k));
  return {kiln::cat(parts, norm_axis(n, n.i("axis", 0), parts[0].dim()))};
}

Out split(NodeRun& n) {
  const Tensor& x = n.input(0);
  const int64_t axis = norm_axis(n, n.i("axis", 0), x.dim());
  std::vector<int64_t> sizes;
  if (n.has_input(1)) {
    sizes = n.host_ints(1);
  } else {
    const int64_t parts = n.num_outputs(), dim = x.size(axis);
    if (dim % parts != 0) {
      n.fail(kiln::detail::str("dimension ", axis, " of ", x.sizes(), " does not split into ",
                               parts, " equal parts"));
    }
    sizes.assign(static_cast<size_t>(parts), dim / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != n.num_outputs()) {
    n.fail(kiln::detail::str("split has ", sizes.size(), " sizes for ", n.num_outputs(),
                             " outputs"));
  }
  return kiln::split_with_sizes(x, sizes, axis);
}

Out slice(NodeRun& n) {
  const Tensor& x = n.input(0);
  auto starts = n.host_ints(1), ends = n.host_ints(2);
  std::vector<int64_t> axes, steps;
  if (n.has_input(3)) {
    axes = n.host_ints(3);
  } else {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  steps = n.has_input(4) ? n.host_ints(4) : std::vector<int64_t>(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    n.fail("starts, ends, axes and steps must have the same length");
  }
  Tensor y = x;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t axis = norm_axis(n, axes[k], x.dim()), dim = x.size(axis), step = steps[k];
    if (step == 0) n.fail("steps has a 0");
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s = s < -dim ? 0 : s + dim;
    if (e < 0) e = e < -dim ? -1 : e + dim;  // -1: before the first element
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      y = y.slice(axis, s, std::max(s, e), step);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      std::vector<int64_t> idx;
      for (int64_t i = s; i > e; i += step) idx.push_back(i);
      y = kiln::index_select(y, axis, longs(idx, y.device()));
    }
  }
  return {y};
}

Out gather(NodeRun& n) {
  const Tensor& x = n.input(0);
  const Tensor& idx = n.input(1);
  const int64_t axis = norm_axis(n, n.i("axis", 0), x.dim());
  const int64_t dim = x.size(axis);
  Tensor flat;
  if (n.known(1)) {
    auto v = n.host_ints(1);
    for (auto& i : v) {
      if (i < -dim || i >= dim) {
        n.fail(kiln::detail::str("index ", i, " is out of range for dimension ", axis, " of size ",
                                 dim));
      }
      if (i < 0) i += dim;
    }
    flat = longs(v, x.device());
  } else {
    Tensor i = idx.to(kLong).reshape({-1});
    flat = kiln::where(kiln::lt(i, 0), i + dim, i);
  }
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + axis);
  shape.insert(shape.end(), idx.sizes().begin(), idx.sizes().end());
  shape.insert(shape.end(), x.sizes().begin() + axis + 1, x.sizes().end());
  return {kiln::index_select(x, axis, flat).reshape(shape)};
}

Out expand(NodeRun& n) {
  const Tensor& x = n.input(0);
  auto s = n.host_ints(1);
  const size_t r = std::max(s.size(), static_cast<size_t>(x.dim()));
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t a = k + s.size() >= r ? s[k + s.size() - r] : 1;
    const int64_t b = k + x.dim() >= r ? x.size(static_cast<int64_t>(k + x.dim() - r)) : 1;
    if (a != b && a != 1 && b != 1) {
      n.fail(kiln::detail::str("shape ", ArrayRef<int64_t>(s), " does not broadcast with input ",
                               x.sizes()));
    }
    out[k] = a == 1 ? b : a;
  }
  return {x.expand(out).contiguous()};
}

Out pad(NodeRun& n) {
  const Tensor& x = n.input(0);
  auto pads = n.host_ints(1);
  const int64_t r = x.dim();
  std::vector<int64_t> axes;
  if (n.has_input(3)) {
    axes = axes_of(n, 3, r);
  } else {
    for (int64_t d = 0; d < r; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    n.fail(kiln::detail::str("pads has ", pads.size(), " values for ", axes.size(), " axes"));
  }
  std::vector<int64_t> begin(static_cast<size_t>(r), 0), end(static_cast<size_t>(r), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    begin[static_cast<size_t>(axes[k])] = pads[k];
    end[static_cast<size_t>(axes[k])] = pads[k + axes.size()];
  }
  const std::string mode = n.s("mode", "constant");
  std::vector<int64_t> list;
  size_t first = static_cast<size_t>(r);
  for (size_t d = 0; d < static_cast<size_t>(r); ++d) {
    if (begin[d] != 0 || end[d] != 0) first = std::min(first, d);
  }
  for (size_t d = static_cast<size_t>(r); d-- > first;) {
    list.push_back(begin[d]);
    list.push_back(end[d]);
  }
  if (list.empty()) return {x.clone()};
  if (mode == "constant") {
    Scalar value = 0;
    if (n.has_input(2)) value = first_scalar(n.input(2));
    return {kiln::constant_pad_nd(x, list, value)};
  }
  // reflect and edge: negative pads crop first
  std::vector<int64_t> crop(list), grow(list);
  for (size_t k = 0; k < list.size(); ++k) {
    crop[k] = std::min<int64_t>(list[k], 0);
    grow[k] = std::max<int64_t>(list[k], 0);
  }
  Tensor y = kiln::constant_pad_nd(x, crop, 0);
  namespace F = kiln::nn::functional;
  if (mode == "reflect") return {F::pad(y, F::PadFuncOptions(grow).mode(kiln::kReflect))};
  return {F::pad(y, F::PadFuncOptions(grow).mode(kiln::kReplicate))};
}

void check_pad(const NodeRun& n) {
  const std::string mode = n.s("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    n.unsupported("mode '" + mode + "' is not one of constant, reflect, edge");
  }
}

Out range(NodeRun& n) {
  const Tensor& st = n.input(0);
  auto a = n.host_doubles(0), l = n.host_doubles(1), d = n.host_doubles(2);
  if (a.size() != 1 || l.size() != 1 || d.size() != 1)
    n.fail("start, limit, delta must be scalars");
  if (d[0] == 0) n.fail("delta is 0");
  const double count = std::ceil((l[0] - a[0]) / d[0]);
  if (!(count < 1e12)) n.fail("the range has too many elements");
  const auto len = static_cast<int64_t>(std::max(0.0, count));
  auto opts = TensorOptions().dtype(st.dtype()).device(st.device());
  if (is_floating_point(st.dtype())) {
    return {kiln::arange(len, opts) * n.input(2) + st};
  }
  auto ia = n.host_ints(0), id = n.host_ints(2);
  return {kiln::arange(len, opts) * id[0] + ia[0]};
}

Out constant_of_shape(NodeRun& n) {
  auto s = n.host_ints(0);
  for (int64_t v : s) {
    if (v < 0) n.fail(kiln::detail::str("shape has the negative size ", v));
  }
  Scalar value = 0.0;
  ScalarType dtype = kFloat;
  if (const auto* a = n.attr("value")) {
    Tensor t = tensor_from_proto(a->t(), n.where() + ": attribute 'value'", {});
    if (t.numel() != 1) n.fail("the attribute 'value' must have one element");
    value = first_scalar(t);
    dtype = t.dtype();
  }
  return {kiln::full(s, value, TensorOptions().dtype(dtype).device(n.device))};
}

void check_constant_of_shape(const NodeRun& n) {
  if (const auto* a = n.attr("value")) {
    Tensor t = tensor_from_proto(a->t(), n.where() + ": attribute 'value'", {});
    if (t.numel() != 1) n.fail("the attribute 'value' must have one element");
  }
}

void check_constant(const NodeRun& n) {
  if (n.has("sparse_value")) n.unsupported("sparse_value is not supported");
  if (n.has("value_string") || n.has("value_strings")) n.unsupported("strings are not supported");
  if (n.node().attribute_size() != 1) n.fail("needs exactly one attribute");
}

}  // namespace

void add_shape_ops(std::vector<OpDef>& ops) {
  ops.push_back({"Shape", 1, 1, 1, 1, {{"start", A::INT}, {"end", A::INT}}, shape});
  ops.push_back({"Size", 1, 1, 1, 1, {}, [](NodeRun& n) -> Out {
                   return {kiln::full({}, n.input(0).numel(),
                                      TensorOptions().dtype(kLong).device(n.input(0).device()))};
                 }});
  ops.push_back({"Reshape", 2, 2, 1, 1, {{"allowzero", A::INT}}, reshape});
  ops.push_back({"Flatten", 1, 1, 1, 1, {{"axis", A::INT}}, flatten});
  ops.push_back({"Transpose", 1, 1, 1, 1, {{"perm", A::INTS}}, transpose});
  ops.push_back({"Squeeze", 1, 2, 1, 1, {}, squeeze});
  ops.push_back({"Unsqueeze", 2, 2, 1, 1, {}, unsqueeze});
  ops.push_back({"Concat", 1, -1, 1, 1, {{"axis", A::INT}}, concat});
  ops.push_back({"Split", 1, 2, 1, 1 << 16, {{"axis", A::INT}}, split});
  ops.push_back({"Slice", 3, 5, 1, 1, {}, slice});
  ops.push_back({"Gather", 2, 2, 1, 1, {{"axis", A::INT}}, gather});
  ops.push_back({"Expand", 2, 2, 1, 1, {}, expand});
  ops.push_back({"Tile", 2, 2, 1, 1, {}, [](NodeRun& n) -> Out {
                   return {kiln::repeat(n.input(0), n.host_ints(1))};
                 }});
  ops.push_back({"Pad", 2, 4, 1, 1, {{"mode", A::STRING}}, pad, check_pad});
  ops.push_back({"Range", 3, 3, 1, 1, {}, range});
  ops.push_back({"ConstantOfShape",
                 1,
                 1,
                 1,
                 1,
                 {{"value", A::TENSOR}},
                 constant_of_shape,
                 check_constant_of_shape});
  ops.push_back({"Constant",
                 0,
                 0,
                 1,
                 1,
                 {{"value", A::TENSOR},
                  {"value_float", A::FLOAT},
                  {"value_floats", A::FLOATS},
                  {"value_int", A::INT},
                  {"value_ints", A::INTS},
                  {"sparse_value", A::SPARSE_TENSOR},
                  {"value_string", A::STRING},
                  {"value_strings", A::STRINGS}},
                 [](NodeRun& n) -> Out { return {*n.constant}; },
                 check_constant});
}

}  // namespace kiln::onnx::detail
