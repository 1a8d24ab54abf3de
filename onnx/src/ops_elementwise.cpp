// ONNX's elementwise operators (https://onnx.ai/onnx/operators/): arithmetic, comparisons,
// logic, activations, Cast, Where, Clip, Identity and Dropout in inference. Broadcasting is
// numpy's, as kiln's.
#include "onnx_impl.h"

#include <kiln/nn/functional.h>
#include <kiln/ops.h>

namespace kiln::onnx::detail {

namespace {

using A = pb::AttributeProto;
using Out = std::vector<Tensor>;

// An integer result of an operator kiln computes in floating point (Div): ONNX truncates.
Tensor like(const Tensor& r, const Tensor& x) {
  return r.dtype() == x.dtype() ? r : r.to(x.dtype());
}

Out div(NodeRun& n) {
  const Tensor& a = n.input(0);
  const Tensor& b = n.input(1);
  if (is_floating_point(a.dtype())) return {a / b};
  return {kiln::trunc(a.to(kDouble) / b.to(kDouble)).to(a.dtype())};
}

Out pow(NodeRun& n) {
  const Tensor& a = n.input(0);
  const Tensor& b = n.input(1);
  return {like(
      kiln::pow(a, b.dtype() == a.dtype() || is_floating_point(a.dtype()) ? b : b.to(a.dtype())),
      a)};
}

Out clip(NodeRun& n) {
  const Tensor& x = n.input(0);
  std::optional<Scalar> lo, hi;
  auto bound = [&](size_t k) -> std::optional<Scalar> {
    if (!n.has_input(k)) return std::nullopt;
    auto v = n.host_doubles(k);
    if (v.size() != 1) n.fail(kiln::detail::str("input ", k, " must have one element"));
    if (is_floating_point(x.dtype())) return Scalar(v[0]);
    return Scalar(static_cast<int64_t>(v[0]));
  };
  lo = bound(1);
  hi = bound(2);
  if (!lo && !hi) return {x.clone()};
  if (lo && hi && lo->to<double>() > hi->to<double>()) {
    return {kiln::full_like(x, *hi)};  // numpy's clip: max wins
  }
  return {kiln::clamp(x, lo, hi)};
}

Out variadic(NodeRun& n, Tensor (*f)(const Tensor&, const Tensor&)) {
  Tensor acc = n.input(0);
  for (size_t k = 1; k < n.num_inputs(); ++k) acc = f(acc, n.input(k));
  return {n.num_inputs() == 1 ? acc.clone() : acc};
}

Out prelu(NodeRun& n) {
  const Tensor& x = n.input(0);
  Tensor slope = n.input(1);
  // a per-channel slope [C] that does not broadcast from the right (as opset 6's, which ONNX's
  // version converter keeps): applied along dimension 1
  if (slope.dim() == 1 && x.dim() > 2 && slope.size(0) == x.size(1) &&
      slope.size(0) != x.size(-1) && slope.size(0) != 1) {
    std::vector<int64_t> shape(static_cast<size_t>(x.dim() - 1), 1);
    shape[0] = -1;
    slope = slope.reshape(shape);
  }
  return {kiln::where(kiln::lt(x, 0), x * slope, x)};
}

void check_cast(const NodeRun& n) {
  if (!n.has("to")) n.fail("the attribute 'to' is required");
  if (!dtype_from_onnx(static_cast<int32_t>(n.i("to", 0)))) {
    n.unsupported(kiln::detail::str("Cast to ", onnx_dtype_name(static_cast<int32_t>(n.i("to", 0))),
                                    " is not supported by kiln"));
  }
}

Out dropout(NodeRun& n) {
  if (n.has_input(2)) {
    auto t = n.host_doubles(2);
    if (t.size() == 1 && t[0] != 0) n.unsupported("training_mode = true is not supported");
  }
  Out out{n.input(0).clone()};
  if (n.has_output(1)) out.push_back(kiln::ones_like(n.input(0), TensorOptions().dtype(kBool)));
  return out;
}

#define UNARY(NAME, EXPR)                         \
  OpDef {                                         \
    NAME, 1, 1, 1, 1, {}, [](NodeRun& n) -> Out { \
      const Tensor& x = n.input(0);               \
      return {EXPR};                              \
    }                                             \
  }
#define BINARY(NAME, EXPR)                        \
  OpDef {                                         \
    NAME, 2, 2, 1, 1, {}, [](NodeRun& n) -> Out { \
      const Tensor& a = n.input(0);               \
      const Tensor& b = n.input(1);               \
      return {EXPR};                              \
    }                                             \
  }

}  // namespace

void add_elementwise_ops(std::vector<OpDef>& ops) {
  ops.push_back(BINARY("Add", a + b));
  ops.push_back(BINARY("Sub", a - b));
  ops.push_back(BINARY("Mul", a * b));
  ops.push_back({"Div", 2, 2, 1, 1, {}, div});
  ops.push_back({"Pow", 2, 2, 1, 1, {}, pow});
  ops.push_back(BINARY("Equal", kiln::eq(a, b)));
  ops.push_back(BINARY("Less", kiln::lt(a, b)));
  ops.push_back(BINARY("LessOrEqual", kiln::le(a, b)));
  ops.push_back(BINARY("Greater", kiln::gt(a, b)));
  ops.push_back(BINARY("GreaterOrEqual", kiln::ge(a, b)));
  ops.push_back(BINARY("And", kiln::logical_and(a, b)));
  ops.push_back(BINARY("Or", kiln::logical_or(a, b)));
  ops.push_back(BINARY("Xor", kiln::logical_xor(a, b)));
  ops.push_back({"PRelu", 2, 2, 1, 1, {}, prelu});
  ops.push_back(UNARY("Not", kiln::logical_not(x)));
  ops.push_back(UNARY("Neg", -x));
  ops.push_back(UNARY("Abs", kiln::abs(x)));
  ops.push_back(UNARY("Sqrt", kiln::sqrt(x)));
  ops.push_back(UNARY("Exp", kiln::exp(x)));
  ops.push_back(UNARY("Log", kiln::log(x)));
  ops.push_back(UNARY("Reciprocal", kiln::reciprocal(x)));
  ops.push_back(UNARY("Floor", kiln::floor(x)));
  ops.push_back(UNARY("Ceil", kiln::ceil(x)));
  ops.push_back(UNARY("Round", kiln::round(x)));
  ops.push_back(UNARY("Sign", kiln::sign(x)));
  ops.push_back(UNARY("Sin", kiln::sin(x)));
  ops.push_back(UNARY("Cos", kiln::cos(x)));
  ops.push_back(UNARY("Tan", kiln::tan(x)));
  ops.push_back(UNARY("Asin", kiln::asin(x)));
  ops.push_back(UNARY("Acos", kiln::acos(x)));
  ops.push_back(UNARY("Atan", kiln::atan(x)));
  ops.push_back(UNARY("Sinh", kiln::sinh(x)));
  ops.push_back(UNARY("Cosh", kiln::cosh(x)));
  ops.push_back(UNARY("Asinh", kiln::asinh(x)));
  ops.push_back(UNARY("Acosh", kiln::acosh(x)));
  ops.push_back(UNARY("Atanh", kiln::atanh(x)));
  ops.push_back(UNARY("Erf", kiln::erf(x)));
  ops.push_back(UNARY("Relu", kiln::relu(x)));
  ops.push_back(UNARY("Sigmoid", kiln::sigmoid(x)));
  ops.push_back(UNARY("Tanh", kiln::tanh(x)));
  ops.push_back(UNARY("Softsign", kiln::softsign(x)));
  ops.push_back(UNARY("Softplus", kiln::nn::functional::softplus(x, 1.0, 1e30)));
  ops.push_back(UNARY("HardSwish", kiln::hardswish(x)));
  ops.push_back(UNARY("IsNaN", kiln::isnan(x)));
  ops.push_back(UNARY("Identity", x));
  ops.push_back({"LeakyRelu", 1, 1, 1, 1, {{"alpha", A::FLOAT}}, [](NodeRun& n) -> Out {
                   return {kiln::leaky_relu(n.input(0), n.f("alpha", 0.01F))};
                 }});
  ops.push_back({"Elu", 1, 1, 1, 1, {{"alpha", A::FLOAT}}, [](NodeRun& n) -> Out {
                   return {kiln::elu(n.input(0), n.f("alpha", 1.0F))};
                 }});
  ops.push_back({"Celu", 1, 1, 1, 1, {{"alpha", A::FLOAT}}, [](NodeRun& n) -> Out {
                   return {kiln::celu(n.input(0), n.f("alpha", 1.0F))};
                 }});
  ops.push_back(
      {"Selu", 1, 1, 1, 1, {{"alpha", A::FLOAT}, {"gamma", A::FLOAT}}, [](NodeRun& n) -> Out {
         const Tensor& x = n.input(0);
         double alpha = n.f("alpha", 1.67326319217681884765625F);
         double gamma = n.f("gamma", 1.05070102214813232421875F);
         return {kiln::where(kiln::gt(x, 0), x, (kiln::exp(x) - 1) * alpha) * gamma};
       }});
  ops.push_back({"ThresholdedRelu", 1, 1, 1, 1, {{"alpha", A::FLOAT}}, [](NodeRun& n) -> Out {
                   const Tensor& x = n.input(0);
                   return {kiln::where(kiln::gt(x, n.f("alpha", 1.0F)), x, kiln::zeros_like(x))};
                 }});
  ops.push_back(
      {"HardSigmoid", 1, 1, 1, 1, {{"alpha", A::FLOAT}, {"beta", A::FLOAT}}, [](NodeRun& n) -> Out {
         const Tensor& x = n.input(0);
         return {kiln::clamp(x * n.f("alpha", 0.2F) + n.f("beta", 0.5F), Scalar(0.0), Scalar(1.0))};
       }});
  ops.push_back({"IsInf",
                 1,
                 1,
                 1,
                 1,
                 {{"detect_negative", A::INT}, {"detect_positive", A::INT}},
                 [](NodeRun& n) -> Out {
                   const Tensor& x = n.input(0);
                   bool neg = n.i("detect_negative", 1) != 0, pos = n.i("detect_positive", 1) != 0;
                   if (neg && pos) return {kiln::isinf(x)};
                   if (neg) return {kiln::isneginf(x)};
                   if (pos) return {kiln::isposinf(x)};
                   return {kiln::zeros_like(x, TensorOptions().dtype(kBool))};
                 }});
  ops.push_back({"Clip", 1, 3, 1, 1, {}, clip});
  ops.push_back({"Where", 3, 3, 1, 1, {}, [](NodeRun& n) -> Out {
                   return {kiln::where(n.input(0), n.input(1), n.input(2))};
                 }});
  ops.push_back({"Max", 1, -1, 1, 1, {}, [](NodeRun& n) { return variadic(n, kiln::maximum); }});
  ops.push_back({"Min", 1, -1, 1, 1, {}, [](NodeRun& n) { return variadic(n, kiln::minimum); }});
  ops.push_back({"Sum", 1, -1, 1, 1, {}, [](NodeRun& n) {
                   return variadic(n, [](const Tensor& a, const Tensor& b) { return a + b; });
                 }});
  ops.push_back({"Mean", 1, -1, 1, 1, {}, [](NodeRun& n) -> Out {
                   Tensor s =
                       variadic(n, [](const Tensor& a, const Tensor& b) { return a + b; })[0];
                   return {s / static_cast<double>(n.num_inputs())};
                 }});
  ops.push_back({"Cast",
                 1,
                 1,
                 1,
                 1,
                 {{"to", A::INT}},
                 [](NodeRun& n) -> Out {
                   auto to = *dtype_from_onnx(static_cast<int32_t>(n.i("to", 1)));
                   return {n.input(0).to(to, /*copy=*/true)};
                 },
                 check_cast});
  ops.push_back({"Dropout", 1, 3, 1, 2, {{"seed", A::INT}}, dropout});
}

}  // namespace kiln::onnx::detail
