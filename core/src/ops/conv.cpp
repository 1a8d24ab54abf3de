// 2-D convolution: conv2d and its two backward primitives, conv2d_backward_input (the gradient
// of the input, a transposed convolution) and conv2d_backward_weight (the gradient of the
// weight). All three are primitives; the gradient of the bias is a sum (composite).
#include "elementwise.h"

#include "../autograd/function.h"

namespace kiln {
namespace detail {
namespace {

using ConvOp = Operator<Tensor(const Tensor&, const Tensor&, const Tensor&, IntArrayRef,
                               IntArrayRef, IntArrayRef, int64_t)>;
// (grad_output, other operand, sizes of the gradient, stride, padding, dilation, groups)
using ConvBackwardOp = Operator<Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef,
                                       IntArrayRef, IntArrayRef, int64_t)>;

// stride, padding and dilation as two values each, checked.
struct ConvParams {
  int64_t stride[2], padding[2], dilation[2], groups;

  ConvParams(const char* op, IntArrayRef s, IntArrayRef p, IntArrayRef d, int64_t g) : groups(g) {
    expand(op, "stride", s, stride);
    expand(op, "padding", p, padding);
    expand(op, "dilation", d, dilation);
    KILN_CHECK_VALUE(stride[0] > 0 && stride[1] > 0, op, ": non-positive stride is not ",
                     "supported (got stride=", s, ")");
    KILN_CHECK_VALUE(padding[0] >= 0 && padding[1] >= 0, op, ": negative padding is not ",
                     "supported (got padding=", p, ")");
    KILN_CHECK_VALUE(dilation[0] > 0 && dilation[1] > 0, op, ": dilation should be greater ",
                     "than zero (got dilation=", d, ")");
    KILN_CHECK_VALUE(groups > 0, op, ": non-positive groups is not supported (got groups=", groups,
                     ")");
  }

  static void expand(const char* op, const char* what, IntArrayRef v, int64_t* out) {
    KILN_CHECK_VALUE(v.size() == 1 || v.size() == 2, op, ": expected ", what, " to be a single ",
                     "integer or a list of 2 integers, but got ", v);
    out[0] = v[0];
    out[1] = v.size() == 2 ? v[1] : v[0];
  }

  Attrs attrs() const {
    return Attrs()
        .list("stride", {stride, 2})
        .list("padding", {padding, 2})
        .list("dilation", {dilation, 2})
        .i64("groups", groups);
  }
};

void check_floating_pair(const char* op, const char* a_name, const Tensor& a, const char* b_name,
                         const Tensor& b) {
  KILN_CHECK_TYPE(a.is_floating_point(), op, ": expected a floating point ", a_name, ", but got ",
                  dtype_name(a.dtype()));
  KILN_CHECK_TYPE(a.dtype() == b.dtype(), op, ": expected ", a_name, " and ", b_name, " to have ",
                  "the same dtype, but got ", dtype_name(a.dtype()), " and ",
                  dtype_name(b.dtype()));
}

// Checks input [N, C, H, W] against weight [O, C / groups, kH, kW]; returns the output sizes.
DimVector conv_output_sizes(const char* op, IntArrayRef input, IntArrayRef weight,
                            const ConvParams& p) {
  KILN_CHECK_VALUE(input.size() == 4, op, ": expected a 4-D input [N, C, H, W], but got input ",
                   "of size ", input);
  KILN_CHECK_VALUE(weight.size() == 4, op, ": expected a 4-D weight [out_channels, in_channels ",
                   "/ groups, kH, kW], but got weight of size ", weight);
  KILN_CHECK_VALUE(weight[0] % p.groups == 0, op, ": given groups=", p.groups, ", expected ",
                   "weight to be divisible by ", p.groups, " at dimension 0, but got weight of ",
                   "size ", weight, " instead");
  int64_t channels = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(weight[1], p.groups, &channels), op,
                   ": given groups=", p.groups, " and weight of size ", weight,
                   ", the input channels (weight ", "size 1 * groups) overflow int64");
  KILN_CHECK_VALUE(input[1] == channels, op, ": given groups=", p.groups, ", weight of size ",
                   weight, ", expected input", input, " to have ", channels, " channels, but got ",
                   input[1], " channels instead");
  // padded input and dilated kernel sizes, overflow-checked: padding and dilation are the
  // caller's numbers
  int64_t padded[2], extent[2];
  for (int d = 0; d < 2; ++d) {
    bool overflow = __builtin_mul_overflow(p.padding[d], 2, &padded[d]) ||
                    __builtin_add_overflow(padded[d], input[2 + d], &padded[d]) ||
                    __builtin_mul_overflow(p.dilation[d], weight[2 + d] - 1, &extent[d]) ||
                    __builtin_add_overflow(extent[d], 1, &extent[d]);
    KILN_CHECK_VALUE(!overflow, op, ": input of size ", input, " with padding (", p.padding[0],
                     ", ", p.padding[1], "), and weight of size ", weight, " with dilation (",
                     p.dilation[0], ", ", p.dilation[1], "): the padded sizes overflow int64");
  }
  for (int d = 0; d < 2; ++d) {
    KILN_CHECK_VALUE(padded[d] >= extent[d], op, ": calculated padded input size per channel: (",
                     padded[0], " x ", padded[1], "). Kernel size: (", extent[0], " x ", extent[1],
                     "). Kernel size can't be greater than actual input size");
  }
  // padded >= extent >= 1 - dilation, so the difference fits unless a kernel size is 0
  int64_t out[2];
  for (int d = 0; d < 2; ++d) {
    int64_t span = 0;
    KILN_CHECK_VALUE(!__builtin_sub_overflow(padded[d], extent[d], &span), op, ": weight of ",
                     "size ", weight, " with dilation (", p.dilation[0], ", ", p.dilation[1],
                     ") overflows int64");
    out[d] = span / p.stride[d] + 1;
  }
  return {input[0], weight[0], out[0], out[1]};
}

Tensor conv2d_backend(const ConvOp& op, const Tensor& input, const Tensor& weight,
                      const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
                      IntArrayRef dilation, int64_t groups) {
  ConvParams p(op.name(), stride, padding, dilation, groups);
  check_floating_pair(op.name(), "input", input, "weight", weight);
  DimVector out_sizes = conv_output_sizes(op.name(), input.sizes(), weight.sizes(), p);
  if (bias.defined()) {
    KILN_CHECK_VALUE(bias.dim() == 1 && bias.sizes()[0] == weight.sizes()[0], op.name(),
                     ": given weight of size ", weight.sizes(), ", expected bias to be ",
                     "1-dimensional with ", weight.sizes()[0], " elements, but got bias of size ",
                     bias.sizes(), " instead");
    check_floating_pair(op.name(), "input", input, "bias", bias);
    common_device(op.name(), {&input, &weight, &bias});
  } else {
    common_device(op.name(), {&input, &weight});
  }
  Tensor out = empty_tensor(out_sizes, input.dtype(), input.device());
  if (out.numel() == 0) return out;
  if (bias.defined()) {
    Tensor dense_bias = bias.contiguous();  // oneDNN reads the bias as a dense vector
    run_kernel(op, {&input, &weight, &dense_bias}, {&out}, p.attrs());
  } else {
    run_kernel(op, {&input, &weight}, {&out}, p.attrs());
  }
  return out;
}

// conv2d_backward_input(grad_output, weight, input_sizes, ...) -> grad_input [N, C, H, W].
Tensor backward_input_backend(const ConvBackwardOp& op, const Tensor& grad_output,
                              const Tensor& weight, IntArrayRef input_sizes, IntArrayRef stride,
                              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  ConvParams p(op.name(), stride, padding, dilation, groups);
  check_floating_pair(op.name(), "grad_output", grad_output, "weight", weight);
  DimVector out_sizes = conv_output_sizes(op.name(), input_sizes, weight.sizes(), p);
  KILN_CHECK_VALUE(grad_output.sizes().equals(out_sizes), op.name(), ": expected grad_output of ",
                   "size ", IntArrayRef(out_sizes), " for input ", input_sizes, " and weight ",
                   weight.sizes(), ", but got ", grad_output.sizes());
  common_device(op.name(), {&grad_output, &weight});
  Tensor grad_input = empty_tensor(input_sizes, weight.dtype(), weight.device());
  if (grad_input.numel() == 0) return grad_input;
  if (grad_output.numel() == 0) return grad_input.zero_();
  run_kernel(op, {&grad_output, &weight}, {&grad_input}, p.attrs());
  return grad_input;
}

// conv2d_backward_weight(grad_output, input, weight_sizes, ...) -> grad_weight.
Tensor backward_weight_backend(const ConvBackwardOp& op, const Tensor& grad_output,
                               const Tensor& input, IntArrayRef weight_sizes, IntArrayRef stride,
                               IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  ConvParams p(op.name(), stride, padding, dilation, groups);
  check_floating_pair(op.name(), "grad_output", grad_output, "input", input);
  DimVector out_sizes = conv_output_sizes(op.name(), input.sizes(), weight_sizes, p);
  KILN_CHECK_VALUE(grad_output.sizes().equals(out_sizes), op.name(), ": expected grad_output of ",
                   "size ", IntArrayRef(out_sizes), " for input ", input.sizes(), " and weight ",
                   weight_sizes, ", but got ", grad_output.sizes());
  common_device(op.name(), {&grad_output, &input});
  Tensor grad_weight = empty_tensor(weight_sizes, input.dtype(), input.device());
  if (grad_weight.numel() == 0) return grad_weight;
  if (grad_output.numel() == 0) return grad_weight.zero_();
  run_kernel(op, {&grad_output, &input}, {&grad_weight}, p.attrs());
  return grad_weight;
}

}  // namespace

ConvOp conv2d_op("conv2d",
                 "conv2d(Tensor input, Tensor weight, Tensor? bias, int[2] stride, "
                 "int[2] padding, int[2] dilation, int groups) -> Tensor",
                 conv2d_backend);
ConvBackwardOp conv2d_backward_input_op(
    "conv2d_backward_input",
    "conv2d_backward_input(Tensor grad_output, Tensor weight, "
    "int[4] input_sizes, int[2] stride, int[2] padding, int[2] dilation, int groups) -> Tensor",
    backward_input_backend);
ConvBackwardOp conv2d_backward_weight_op(
    "conv2d_backward_weight",
    "conv2d_backward_weight(Tensor grad_output, Tensor input, "
    "int[4] weight_sizes, int[2] stride, int[2] padding, int[2] dilation, int groups) -> Tensor",
    backward_weight_backend);

}  // namespace detail

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return detail::conv2d_op(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight,
                             IntArrayRef input_sizes, IntArrayRef stride, IntArrayRef padding,
                             IntArrayRef dilation, int64_t groups) {
  return detail::conv2d_backward_input_op(grad_output, weight, input_sizes, stride, padding,
                                          dilation, groups);
}
Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input,
                              IntArrayRef weight_sizes, IntArrayRef stride, IntArrayRef padding,
                              IntArrayRef dilation, int64_t groups) {
  return detail::conv2d_backward_weight_op(grad_output, input, weight_sizes, stride, padding,
                                           dilation, groups);
}

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
// The three products are bilinear, so each one's gradient is one of the others: conv2d(x, w)
// gives x <- backward_input(g, w), w <- backward_weight(g, x); backward_input(g, w) gives
// g <- conv2d(gg, w), w <- backward_weight(g, gg); backward_weight(g, x) gives g <- conv2d(x, gw),
// x <- backward_input(g, gw). So create_graph works through convolutions.
namespace kiln::detail {
namespace {

using autograd::detail::FunctionNode;

// Geometry captured by value in a backward formula.
struct ConvGeometry {
  DimVector stride, padding, dilation;
  int64_t groups;
};

ConvGeometry geometry(IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                      int64_t groups) {
  return {DimVector(stride), DimVector(padding), DimVector(dilation), groups};
}

Tensor conv2d_autograd(const ConvOp& op, const Tensor& input, const Tensor& weight,
                       const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
                       IntArrayRef dilation, int64_t groups) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(input, weight, bias, stride, padding, dilation, groups);
  }
  ConvGeometry c = geometry(stride, padding, dilation, groups);
  DimVector x_sizes(input.sizes()), w_sizes(weight.sizes());
  auto node = autograd::detail::record(
      "ConvolutionBackward0", {&input, &weight, &bias}, {&out},
      [c, x_sizes, w_sizes](FunctionNode& n, const std::vector<Tensor>& g) {
        std::vector<Tensor> grads(3);
        if (n.needs_input_grad(0)) {
          grads[0] = conv2d_backward_input(g[0], n.saved(1), x_sizes, c.stride, c.padding,
                                           c.dilation, c.groups);
        }
        if (n.needs_input_grad(1)) {
          grads[1] = conv2d_backward_weight(g[0], n.saved(0), w_sizes, c.stride, c.padding,
                                            c.dilation, c.groups);
        }
        if (n.needs_input_grad(2)) grads[2] = sum(g[0], {0, 2, 3});
        return grads;
      });
  if (node) {
    node->save(node->needs_input_grad(1) ? input : Tensor());
    node->save(node->needs_input_grad(0) ? weight : Tensor());
  }
  return out;
}

// backward_input(g, w): linear in g (a transposed convolution) and in w.
Tensor backward_input_autograd(const ConvBackwardOp& op, const Tensor& grad_output,
                               const Tensor& weight, IntArrayRef input_sizes, IntArrayRef stride,
                               IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(grad_output, weight, input_sizes, stride, padding, dilation, groups);
  }
  ConvGeometry c = geometry(stride, padding, dilation, groups);
  DimVector w_sizes(weight.sizes());
  auto node = autograd::detail::record(
      "ConvolutionBackwardInputBackward0", {&grad_output, &weight}, {&out},
      [c, w_sizes](FunctionNode& n, const std::vector<Tensor>& g) {
        std::vector<Tensor> grads(2);
        if (n.needs_input_grad(0)) {
          grads[0] = conv2d(g[0], n.saved(1), Tensor(), c.stride, c.padding, c.dilation, c.groups);
        }
        if (n.needs_input_grad(1)) {
          grads[1] = conv2d_backward_weight(n.saved(0), g[0], w_sizes, c.stride, c.padding,
                                            c.dilation, c.groups);
        }
        return grads;
      });
  if (node) {
    node->save(grad_output);
    node->save(weight);
  }
  return out;
}

// backward_weight(g, x): linear in g and in x.
Tensor backward_weight_autograd(const ConvBackwardOp& op, const Tensor& grad_output,
                                const Tensor& input, IntArrayRef weight_sizes, IntArrayRef stride,
                                IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  Tensor out;
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    out = op(grad_output, input, weight_sizes, stride, padding, dilation, groups);
  }
  ConvGeometry c = geometry(stride, padding, dilation, groups);
  DimVector x_sizes(input.sizes());
  auto node = autograd::detail::record(
      "ConvolutionBackwardWeightBackward0", {&grad_output, &input}, {&out},
      [c, x_sizes](FunctionNode& n, const std::vector<Tensor>& g) {
        std::vector<Tensor> grads(2);
        if (n.needs_input_grad(0)) {
          grads[0] = conv2d(n.saved(1), g[0], Tensor(), c.stride, c.padding, c.dilation, c.groups);
        }
        if (n.needs_input_grad(1)) {
          grads[1] = conv2d_backward_input(n.saved(0), g[0], x_sizes, c.stride, c.padding,
                                           c.dilation, c.groups);
        }
        return grads;
      });
  if (node) {
    node->save(grad_output);
    node->save(input);
  }
  return out;
}

const bool conv_backwards_registered = [] {
  conv2d_op.set_kernel(DispatchKey::Autograd, conv2d_autograd);
  conv2d_backward_input_op.set_kernel(DispatchKey::Autograd, backward_input_autograd);
  conv2d_backward_weight_op.set_kernel(DispatchKey::Autograd, backward_weight_autograd);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
