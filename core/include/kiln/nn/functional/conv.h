// Convolutions in 1, 2 and 3 dimensions, transposed convolutions, fold and unfold, as libtorch's
// torch::nn::functional (F::conv1d(x, w, F::Conv1dFuncOptions().padding(kiln::kSame))) and
// ATen's positional forms in namespace kiln. Input [N, C, d...] or unbatched [C, d...]; weight
// [out, in / groups, k...] ([in, out / groups, k...] when transposed); bias [out]. All are built
// on the conv2d primitives (conv3d as a sum over depth taps of 2-D convolutions), so autograd
// differentiates them, twice too.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options/conv.h>
#include <kiln/tensor.h>

namespace kiln::nn::functional {

KILN_API Tensor conv1d(const Tensor& input, const Tensor& weight,
                       const Conv1dFuncOptions& options = {});
KILN_API Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options);
KILN_API Tensor conv3d(const Tensor& input, const Tensor& weight,
                       const Conv3dFuncOptions& options = {});
// The gradient of the convolution with respect to its input, as a layer: each size is
// (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1.
KILN_API Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                                 const ConvTranspose1dFuncOptions& options = {});
KILN_API Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                                 const ConvTranspose2dFuncOptions& options = {});
KILN_API Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                                 const ConvTranspose3dFuncOptions& options = {});
// Sliding blocks of input [N, C, H, W] (or [C, H, W]) as columns [N, C * kH * kW, L], L the
// number of blocks; zero padding.
KILN_API Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);
// The adjoint of unfold: columns [N, C * kH * kW, L] summed into [N, C, output_size...].
KILN_API Tensor fold(const Tensor& input, const FoldFuncOptions& options);

}  // namespace kiln::nn::functional

namespace kiln {

// ATen's positional forms, as torch::conv1d(x, w, b, stride, padding, dilation, groups).
KILN_API Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                       IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
                       int64_t groups = 1);
KILN_API Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                       IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1,
                       int64_t groups = 1);
KILN_API Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                                 IntArrayRef stride = 1, IntArrayRef padding = 0,
                                 IntArrayRef output_padding = 0, int64_t groups = 1,
                                 IntArrayRef dilation = 1);
KILN_API Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                                 IntArrayRef stride = 1, IntArrayRef padding = 0,
                                 IntArrayRef output_padding = 0, int64_t groups = 1,
                                 IntArrayRef dilation = 1);
KILN_API Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                                 IntArrayRef stride = 1, IntArrayRef padding = 0,
                                 IntArrayRef output_padding = 0, int64_t groups = 1,
                                 IntArrayRef dilation = 1);

}  // namespace kiln
