// Pooling functions, as libtorch's torch::nn::functional (F::max_pool2d(x,
// F::MaxPool2dFuncOptions(3) .stride(2))) and its positional forms in namespace kiln
// (kiln::max_pool2d(x, 2)). Inputs are [N, C, d...] or unbatched [C, d...] with 1, 2 or 3 spatial
// dimensions d, floating point; the output keeps the input's dtype (also under autocast, as
// PyTorch's) and its batching. Indices (int64, the output's shape) are flat positions within each
// input plane d..., as PyTorch's. Every function differentiates, twice too; a max passes its
// gradient to the element it picked.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options/pooling.h>
#include <kiln/tensor.h>

#include <tuple>

namespace kiln::nn::functional {

// The maximum of each window (kernel_size, stride, padding, dilation, ceil_mode), and with
// indices the flat position of each maximum in its input plane.
KILN_API Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);
KILN_API Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
KILN_API Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options);
KILN_API std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input,
                                                            const MaxPool1dFuncOptions& options);
KILN_API std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input,
                                                            const MaxPool2dFuncOptions& options);
KILN_API std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input,
                                                            const MaxPool3dFuncOptions& options);

// The mean of each window: its sum over divisor_override, or over its size (within the
// padded input when count_include_pad, within the input otherwise).
KILN_API Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);
KILN_API Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
KILN_API Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options);

// Pools into output_size windows per dimension: output o covers input positions
// [floor(o * in / out), ceil((o + 1) * in / out)). An absent output size keeps the input's.
KILN_API Tensor adaptive_max_pool1d(const Tensor& input,
                                    const AdaptiveMaxPool1dFuncOptions& options);
KILN_API Tensor adaptive_max_pool2d(const Tensor& input,
                                    const AdaptiveMaxPool2dFuncOptions& options);
KILN_API Tensor adaptive_max_pool3d(const Tensor& input,
                                    const AdaptiveMaxPool3dFuncOptions& options);
KILN_API std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(
    const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
KILN_API std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
KILN_API std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(
    const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
KILN_API Tensor adaptive_avg_pool1d(const Tensor& input,
                                    const AdaptiveAvgPool1dFuncOptions& options);
KILN_API Tensor adaptive_avg_pool2d(const Tensor& input,
                                    const AdaptiveAvgPool2dFuncOptions& options);
KILN_API Tensor adaptive_avg_pool3d(const Tensor& input,
                                    const AdaptiveAvgPool3dFuncOptions& options);

// The inverse of max pooling: input's values written at indices (from max_pool*_with_indices)
// of zero planes of output_size (by default (in - 1) * stride - 2 * padding + kernel_size).
KILN_API Tensor max_unpool1d(const Tensor& input, const Tensor& indices,
                             const MaxUnpool1dFuncOptions& options);
KILN_API Tensor max_unpool2d(const Tensor& input, const Tensor& indices,
                             const MaxUnpool2dFuncOptions& options);
KILN_API Tensor max_unpool3d(const Tensor& input, const Tensor& indices,
                             const MaxUnpool3dFuncOptions& options);

// The norm_type-norm of each window (no padding): (sum of x^p)^(1/p), as PyTorch's formula
// through avg_pool (so negative sums give 0).
KILN_API Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options);
KILN_API Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options);

}  // namespace kiln::nn::functional

namespace kiln {

// ATen's positional forms, as torch::max_pool2d(x, 2): kernel_size, stride (empty: the kernel
// size), padding, dilation, ceil_mode; one value stands for every dimension.
KILN_API Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                           IntArrayRef padding = 0, IntArrayRef dilation = 1,
                           bool ceil_mode = false);
KILN_API Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                           IntArrayRef padding = 0, IntArrayRef dilation = 1,
                           bool ceil_mode = false);
KILN_API Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                           IntArrayRef padding = 0, IntArrayRef dilation = 1,
                           bool ceil_mode = false);
KILN_API Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                           IntArrayRef padding = 0, bool ceil_mode = false,
                           bool count_include_pad = true);
KILN_API Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                           IntArrayRef padding = 0, bool ceil_mode = false,
                           bool count_include_pad = true,
                           std::optional<int64_t> divisor_override = std::nullopt);
KILN_API Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                           IntArrayRef padding = 0, bool ceil_mode = false,
                           bool count_include_pad = true,
                           std::optional<int64_t> divisor_override = std::nullopt);
KILN_API Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
KILN_API Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
KILN_API Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size);
KILN_API std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input,
                                                        IntArrayRef output_size);
KILN_API std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input,
                                                        IntArrayRef output_size);
KILN_API std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input,
                                                        IntArrayRef output_size);

}  // namespace kiln
