// Convolutions in 1, 2 and 3 dimensions, transposed convolutions, fold and unfold, written from
// the conv2d primitives (See Note [Convolutions from conv2d]).
//
// Note [Convolutions from conv2d]: conv1d is conv2d over a height of 1. conv3d sums, over the
// kernel's depth taps kd, conv2d of the input depth slices each output depth reads through tap
// kd (gathered by index_select, batched as [N * out_depth, C, H, W]) with the weight's slice kd.
// conv_transpose2d is conv2d_backward_input, the gradient of conv2d with respect to its input;
// conv_transpose3d adds, for each depth tap, conv_transpose2d of every input depth slice into
// the output depth it reaches (index_add). unfold is conv2d of each channel with an identity
// kernel of kH * kW outputs, fold its adjoint. Each is thereby differentiable (twice too) on
// every device that has the conv2d primitives.
#include <kiln/autograd.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/conv.h>

#include "conv.h"

#include "../ops/pad.h"

#include <sstream>

namespace kiln::nn::functional {
namespace {

int64_t checked(const char* op, bool overflow, int64_t value, IntArrayRef input) {
  KILN_CHECK_VALUE(!overflow, op, ": the output size for input of size ", input,
                   " overflows int64");
  return value;
}

// input [N, C, d...] or [C, d...] (dims spatial dimensions) as [N, C, d...].
Tensor batched(const char* op, const Tensor& input, int64_t dims) {
  KILN_CHECK_VALUE(input.dim() == dims + 1 || input.dim() == dims + 2, op, ": expected ", dims + 1,
                   "D (unbatched) or ", dims + 2,
                   "D (batched) input, but got input of size: ", input.sizes());
  return input.dim() == dims + 1 ? input.unsqueeze(0) : input;
}

Tensor unbatch(const Tensor& out, const Tensor& input, int64_t dims) {
  return input.dim() == dims + 1 ? out.squeeze(0) : out;
}

void check_weight(const char* op, const Tensor& weight, int64_t dims, const char* layout) {
  KILN_CHECK_VALUE(weight.dim() == dims + 2, op, ": expected a ", dims + 2, "-D weight ", layout,
                   ", but got weight of size ", weight.sizes());
}

// The input padded with zeros by before[d] and after[d] on spatial dimension d.
Tensor pad_zeros(const Tensor& x, IntArrayRef before, IntArrayRef after) {
  Tensor out = x;
  for (size_t d = 0; d < before.size(); ++d) {
    const int64_t dim = static_cast<int64_t>(d) + 2;
    std::vector<Tensor> parts;
    for (int64_t n : {before[d], int64_t{-1}, after[d]}) {
      if (n == -1) {
        parts.push_back(out);
      } else if (n > 0) {
        DimVector sizes(out.sizes());
        sizes[static_cast<size_t>(dim)] = n;
        parts.push_back(zeros(sizes, TensorOptions(out.dtype()).device(out.device())));
      }
    }
    if (parts.size() > 1) out = cat(parts, dim);
  }
  return out;
}

// The last two values of a list of three.
IntArrayRef tail(IntArrayRef v) { return IntArrayRef(v.data() + 1, 2); }

// conv3d as in Note [Convolutions from conv2d]; x [N, C, D, H, W] with its depth padded.
Tensor conv3d_from_2d(const Tensor& x, const Tensor& weight, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const int64_t n = x.size(0), c = x.size(1), k = weight.size(2);
  const DimVector no_pad{0, 0};
  Tensor padded = pad_zeros(x, {padding[0]}, {padding[0]});
  int64_t extent = 0;
  KILN_CHECK_VALUE(!__builtin_mul_overflow(dilation[0], k - 1, &extent), "conv3d: weight of size ",
                   weight.sizes(), " with dilation ", dilation, " overflows int64");
  extent += 1;
  KILN_CHECK_VALUE(padded.size(2) >= extent, "conv3d: calculated padded input depth ",
                   padded.size(2), " is smaller than the dilated kernel's depth ", extent);
  const int64_t depth = (padded.size(2) - extent) / stride[0] + 1;
  Tensor sum;
  for (int64_t kd = 0; kd < k; ++kd) {
    std::vector<int64_t> at;
    for (int64_t od = 0; od < depth; ++od) at.push_back(od * stride[0] + kd * dilation[0]);
    Tensor index = from_blob(at.data(), {depth}, kLong).to(x.device(), kLong, /*copy=*/true);
    Tensor slices = index_select(padded, 2, index)
                        .transpose(1, 2)
                        .reshape({n * depth, c, x.size(3), x.size(4)});
    Tensor y = kiln::conv2d(slices, weight.select(2, kd), Tensor(), tail(stride), tail(padding),
                            tail(dilation), groups);
    sum = sum.defined() ? sum + y : y;
  }
  return sum.view({n, depth, sum.size(1), sum.size(2), sum.size(3)}).transpose(1, 2);
}

// conv_transpose3d as in Note [Convolutions from conv2d]: out_sizes [N, C_out, D', H', W'].
Tensor conv_transpose3d_from_2d(const Tensor& x, const Tensor& weight, IntArrayRef out_sizes,
                                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                int64_t groups) {
  const int64_t n = x.size(0), depth = x.size(2), out_depth = out_sizes[2];
  const DimVector plane{n * depth, out_sizes[1], out_sizes[3], out_sizes[4]};
  Tensor slices = x.transpose(1, 2).reshape({n * depth, x.size(1), x.size(3), x.size(4)});
  // depth out_depth collects the taps that land in the padding
  Tensor sum = zeros({n, out_depth + 1, out_sizes[1], out_sizes[3], out_sizes[4]},
                     TensorOptions(x.dtype()).device(x.device()));
  for (int64_t kd = 0; kd < weight.size(2); ++kd) {
    std::vector<int64_t> at;
    for (int64_t d = 0; d < depth; ++d) {
      int64_t od = d * stride[0] - padding[0] + kd * dilation[0];
      at.push_back(od >= 0 && od < out_depth ? od : out_depth);
    }
    Tensor index = from_blob(at.data(), {depth}, kLong).to(x.device(), kLong, /*copy=*/true);
    Tensor y = conv2d_backward_input(slices, weight.select(2, kd), plane, tail(stride),
                                     tail(padding), tail(dilation), groups);
    sum = index_add(sum, 1, index, y.view({n, depth, plane[1], plane[2], plane[3]}));
  }
  return sum.narrow(1, 0, out_depth).transpose(1, 2);
}

Tensor add_bias(const Tensor& out, const Tensor& bias, const char* op) {
  if (!bias.defined()) return out;
  KILN_CHECK_VALUE(bias.dim() == 1 && bias.size(0) == out.size(1), op, ": expected bias of size ",
                   "[", out.size(1), "], but got bias of size ", bias.sizes());
  DimVector shape(static_cast<size_t>(out.dim()), 1);
  shape[1] = out.size(1);
  return out + bias.view(shape);
}

// A convolution's padding: sizes, or "same" (sizes computed from the kernel).
struct Padding {
  DimVector sizes;
  bool same = false;
};

template <size_t D>
Padding padding_of(const ConvPadding<D>& p) {
  if (const auto* sizes = std::get_if<ExpandingArray<D>>(&p)) return {DimVector(sizes->ref())};
  return {DimVector(D, 0), std::holds_alternative<enumtype::kSame>(p)};
}

// Convolution over `dims` spatial dimensions of input (batched or not).
Tensor conv_nd(const char* op, int64_t dims, const Tensor& input, const Tensor& weight,
               const Tensor& bias, IntArrayRef stride, const Padding& padding, IntArrayRef dilation,
               int64_t groups) {
  Tensor x = batched(op, input, dims);
  check_weight(op, weight, dims, "[out_channels, in_channels / groups, k...]");
  DimVector pad = padding.sizes;
  if (padding.same) {
    // dilation * (kernel - 1) in all, the odd one on the right, as PyTorch's
    DimVector extra(static_cast<size_t>(dims), 0);
    bool asymmetric = false;
    for (int64_t d = 0; d < dims; ++d) {
      KILN_CHECK_VALUE(stride[d] == 1, op, ": padding='same' is not supported for strided ",
                       "convolutions (got stride=", stride, "): use explicit padding");
      int64_t total = 0;
      checked(op, __builtin_mul_overflow(dilation[d], weight.size(d + 2) - 1, &total), total,
              input.sizes());
      pad[d] = total / 2;
      extra[d] = total - 2 * pad[d];
      asymmetric = asymmetric || extra[d] != 0;
    }
    if (asymmetric) x = pad_zeros(x, DimVector(static_cast<size_t>(dims), 0), extra);
  }
  Tensor out;
  if (dims == 1) {
    out = kiln::conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, {1, stride[0]}, {0, pad[0]},
                       {1, dilation[0]}, groups)
              .squeeze(2);
  } else if (dims == 2) {
    out = kiln::conv2d(x, weight, bias, stride, pad, dilation, groups);
  } else {
    KILN_CHECK_VALUE(x.size(1) == weight.size(1) * groups, op, ": given groups=", groups,
                     ", weight of size ", weight.sizes(), ", expected input ", input.sizes(),
                     " to have ", weight.size(1) * groups, " channels, but got ", x.size(1),
                     " channels instead");
    out = add_bias(conv3d_from_2d(x, weight, stride, pad, dilation, groups), bias, op);
  }
  return unbatch(out, input, dims);
}

// Transposed convolution over `dims` spatial dimensions of input (batched or not).
Tensor conv_transpose_nd(const char* op, int64_t dims, const Tensor& input, const Tensor& weight,
                         const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  Tensor x = batched(op, input, dims);
  check_weight(op, weight, dims, "[in_channels, out_channels / groups, k...]");
  KILN_CHECK_VALUE(groups > 0, op, ": non-positive groups is not supported (got groups=", groups,
                   ")");
  KILN_CHECK_VALUE(weight.size(0) == x.size(1), op, ": given transposed weight of size ",
                   weight.sizes(), ", expected input ", input.sizes(), " to have ", weight.size(0),
                   " channels, but got ", x.size(1), " channels instead");
  DimVector out_sizes{x.size(0), weight.size(1) * groups};
  for (int64_t d = 0; d < dims; ++d) {
    KILN_CHECK_VALUE(stride[d] > 0 && dilation[d] > 0 && padding[d] >= 0, op, ": expected ",
                     "positive stride and dilation and non-negative padding, but got stride=",
                     stride, ", dilation=", dilation, ", padding=", padding);
    KILN_CHECK_VALUE(output_padding[d] >= 0 &&
                         (output_padding[d] < stride[d] || output_padding[d] < dilation[d]),
                     op, ": output padding must be smaller than either stride or dilation, but ",
                     "got output_padding=", output_padding, ", stride=", stride,
                     ", dilation=", dilation);
    int64_t size = 0, span = 0;
    bool overflow = __builtin_mul_overflow(x.size(d + 2) - 1, stride[d], &size) ||
                    __builtin_sub_overflow(size, 2 * padding[d], &size) ||
                    __builtin_mul_overflow(dilation[d], weight.size(d + 2) - 1, &span) ||
                    __builtin_add_overflow(size, span + output_padding[d] + 1, &size);
    checked(op, overflow, size, input.sizes());
    KILN_CHECK_VALUE(size > 0, op, ": given input of size ", input.sizes(), " and weight of ",
                     "size ", weight.sizes(), ", the calculated output size ", size,
                     " of spatial dimension ", d, " is too small: use less padding");
    out_sizes.push_back(size);
  }
  Tensor out;
  if (dims == 1) {
    out = conv2d_backward_input(x.unsqueeze(2), weight.unsqueeze(2),
                                {out_sizes[0], out_sizes[1], 1, out_sizes[2]}, {1, stride[0]},
                                {0, padding[0]}, {1, dilation[0]}, groups)
              .squeeze(2);
  } else if (dims == 2) {
    out = conv2d_backward_input(x, weight, out_sizes, stride, padding, dilation, groups);
  } else {
    out = conv_transpose3d_from_2d(x, weight, out_sizes, stride, padding, dilation, groups);
  }
  return unbatch(add_bias(out, bias, op), input, dims);
}

}  // namespace
}  // namespace kiln::nn::functional

namespace kiln::nn::detail {

Tensor pad_with_mode(const char* op, const Tensor& input, IntArrayRef before, IntArrayRef after,
                     const PaddingMode& mode) {
  const int64_t dims = static_cast<int64_t>(before.size());
  KILN_CHECK_VALUE(input.dim() > dims, op, ": cannot pad ", dims, " dimensions of input of size ",
                   input.sizes());
  if (std::holds_alternative<enumtype::kZeros>(mode)) {
    Tensor x = input.dim() == dims + 1 ? input.unsqueeze(0) : input;
    Tensor out = functional::pad_zeros(x, before, after);
    return input.dim() == dims + 1 ? out.squeeze(0) : out;
  }
  const bool reflect = std::holds_alternative<enumtype::kReflect>(mode);
  const bool circular = std::holds_alternative<enumtype::kCircular>(mode);
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t dim = input.dim() - dims + d, size = input.size(dim);
    const int64_t lo = before[static_cast<size_t>(d)], hi = after[static_cast<size_t>(d)];
    if (lo == 0 && hi == 0) continue;
    KILN_CHECK_VALUE(!reflect || (lo < size && hi < size), op, ": padding (", lo, ", ", hi,
                     ") with padding_mode='reflect' must be smaller than the input size ", size,
                     " of dimension ", dim, " of input of size ", input.sizes());
    KILN_CHECK_VALUE(!circular || (lo <= size && hi <= size), op, ": padding (", lo, ", ", hi,
                     ") with padding_mode='circular' must be at most the input size ", size,
                     " of dimension ", dim, " of input of size ", input.sizes());
  }
  using kiln::detail::PadFill;
  const PadFill fill = reflect ? PadFill::kReflect
                               : (circular ? PadFill::kCircular : PadFill::kReplicate);
  Tensor out = kiln::detail::pad_by_index(op, input, before, after, fill);
  return out;
}

}  // namespace kiln::nn::detail

// --- the public forms ----------------------------------------------------------------------------
namespace kiln::nn::functional {

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& o) {
  return conv_nd("conv1d", 1, input, weight, o.bias(), o.stride(), padding_of(o.padding()),
                 o.dilation(), o.groups());
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& o) {
  return conv_nd("conv2d", 2, input, weight, o.bias(), o.stride(), padding_of(o.padding()),
                 o.dilation(), o.groups());
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& o) {
  return conv_nd("conv3d", 3, input, weight, o.bias(), o.stride(), padding_of(o.padding()),
                 o.dilation(), o.groups());
}
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose1dFuncOptions& o) {
  return conv_transpose_nd("conv_transpose1d", 1, input, weight, o.bias(), o.stride(), o.padding(),
                           o.output_padding(), o.groups(), o.dilation());
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose2dFuncOptions& o) {
  return conv_transpose_nd("conv_transpose2d", 2, input, weight, o.bias(), o.stride(), o.padding(),
                           o.output_padding(), o.groups(), o.dilation());
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const ConvTranspose3dFuncOptions& o) {
  return conv_transpose_nd("conv_transpose3d", 3, input, weight, o.bias(), o.stride(), o.padding(),
                           o.output_padding(), o.groups(), o.dilation());
}

namespace {

// The identity kernel of unfold and fold: [kH * kW, 1, kH, kW].
Tensor identity_kernel(const ExpandingArray<2>& k, const Tensor& like) {
  return eye(k[0] * k[1], TensorOptions(like.dtype()).device(like.device()))
      .view({k[0] * k[1], 1, k[0], k[1]});
}

}  // namespace

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  KILN_CHECK_VALUE(input.dim() == 3 || input.dim() == 4, "unfold: expected 3D (unbatched) or ",
                   "4D (batched) input, but got input of size ", input.sizes());
  Tensor x = batched("unfold", input, 2);
  const int64_t n = x.size(0), c = x.size(1);
  Tensor cols = kiln::conv2d(x.reshape({n * c, 1, x.size(2), x.size(3)}),
                             identity_kernel(o.kernel_size(), x), Tensor(), o.stride(), o.padding(),
                             o.dilation(), 1);
  const int64_t taps = o.kernel_size()[0] * o.kernel_size()[1];
  Tensor out = cols.reshape({n, c * taps, cols.size(2) * cols.size(3)});
  return unbatch(out, input, 1);
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  KILN_CHECK_VALUE(input.dim() == 2 || input.dim() == 3, "fold: Input Error: Only unbatched (2D) ",
                   "or batched (3D) input Tensors are supported (got ", input.dim(),
                   "D): input of size ", input.sizes());
  Tensor x = input.dim() == 2 ? input.unsqueeze(0) : input;
  const ExpandingArray<2>& k = o.kernel_size();
  const int64_t taps = k[0] * k[1];
  KILN_CHECK_VALUE(taps > 0 && x.size(1) % taps == 0, "fold: expected size of input's dimension ",
                   "1 to be divisible by the product of kernel_size, but got input.size(1)=",
                   x.size(1), " and kernel_size=", k.ref());
  int64_t blocks[2];
  for (int d = 0; d < 2; ++d) {
    int64_t span = 0, size = 0;
    bool overflow = __builtin_mul_overflow(o.dilation()[d], k[d] - 1, &span) ||
                    __builtin_mul_overflow(o.padding()[d], 2, &size) ||
                    __builtin_add_overflow(size, o.output_size()[d] - span - 1, &size);
    checked("fold", overflow, size, input.sizes());
    KILN_CHECK_VALUE(o.stride()[d] > 0,
                     "fold: expected positive stride, but got stride=", o.stride().ref());
    blocks[d] = size >= 0 ? size / o.stride()[d] + 1 : 0;
  }
  KILN_CHECK_VALUE(blocks[0] > 0 && blocks[1] > 0 && x.size(2) == blocks[0] * blocks[1],
                   "fold: given output_size=", o.output_size().ref(), ", kernel_size=", k.ref(),
                   ", dilation=", o.dilation().ref(), ", padding=", o.padding().ref(),
                   ", stride=", o.stride().ref(), ", expected size of input's dimension 2 to ",
                   "match the calculated number of sliding blocks ", blocks[0], " * ", blocks[1],
                   " = ", blocks[0] * blocks[1], ", but got input.size(2)=", x.size(2));
  const int64_t n = x.size(0), c = x.size(1) / taps;
  Tensor cols = x.reshape({n * c, taps, blocks[0], blocks[1]});
  Tensor out = conv2d_backward_input(cols, identity_kernel(k, x),
                                     {n * c, 1, o.output_size()[0], o.output_size()[1]}, o.stride(),
                                     o.padding(), o.dilation(), 1);
  out = out.view({n, c, o.output_size()[0], o.output_size()[1]});
  return input.dim() == 2 ? out.squeeze(0) : out;
}

}  // namespace kiln::nn::functional

namespace kiln {
namespace {
using nn::functional::Padding;

template <size_t D>
DimVector expand(const char* op, const char* what, IntArrayRef v) {
  KILN_CHECK_VALUE(v.size() == 1 || v.size() == D, op, ": expected ", what, " to be a single ",
                   "integer or a list of ", D, " integers, but got ", v);
  return v.size() == 1 ? DimVector(D, v[0]) : DimVector(v);
}
}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const char* op = "conv1d";
  return nn::functional::conv_nd(op, 1, input, weight, bias, expand<1>(op, "stride", stride),
                                 Padding{expand<1>(op, "padding", padding)},
                                 expand<1>(op, "dilation", dilation), groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const char* op = "conv3d";
  return nn::functional::conv_nd(op, 3, input, weight, bias, expand<3>(op, "stride", stride),
                                 Padding{expand<3>(op, "padding", padding)},
                                 expand<3>(op, "dilation", dilation), groups);
}

namespace {
template <size_t D>
Tensor conv_transpose(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                      IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                      int64_t groups, IntArrayRef dilation) {
  return nn::functional::conv_transpose_nd(op, D, input, weight, bias,
                                           expand<D>(op, "stride", stride),
                                           expand<D>(op, "padding", padding),
                                           expand<D>(op, "output_padding", output_padding), groups,
                                           expand<D>(op, "dilation", dilation));
}
}  // namespace

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  return conv_transpose<1>("conv_transpose1d", input, weight, bias, stride, padding, output_padding,
                           groups, dilation);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  return conv_transpose<2>("conv_transpose2d", input, weight, bias, stride, padding, output_padding,
                           groups, dilation);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding,
                        int64_t groups, IntArrayRef dilation) {
  return conv_transpose<3>("conv_transpose3d", input, weight, bias, stride, padding, output_padding,
                           groups, dilation);
}

}  // namespace kiln
