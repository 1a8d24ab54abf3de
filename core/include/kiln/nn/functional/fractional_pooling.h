// Fractional max pooling (Graham, "Fractional Max-Pooling"), as libtorch's
// F::fractional_max_pool2d/3d and their _with_indices forms: the maximum over kernel_size
// windows placed at pseudo-random, overlapping positions so that the output has output_size
// (or output_ratio of the input's size). A composite of gathers and a reduction, so autograd
// differentiates it on every device; float32 under CPU autocast, as PyTorch's list.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options/fractional_pooling.h>
#include <kiln/tensor.h>

#include <tuple>

namespace kiln::nn::functional {

// input [N, C, H, W] or [C, H, W] -> [N, C, oH, oW] (or [C, oH, oW]), and the index of each
// maximum in its plane (h * W + w).
KILN_API Tensor fractional_max_pool2d(const Tensor& input,
                                      const FractionalMaxPool2dFuncOptions& options);
KILN_API std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
// input [N, C, T, H, W] or [C, T, H, W]; indices (t * H + h) * W + w.
KILN_API Tensor fractional_max_pool3d(const Tensor& input,
                                      const FractionalMaxPool3dFuncOptions& options);
KILN_API std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& input, const FractionalMaxPool3dFuncOptions& options);

}  // namespace kiln::nn::functional

namespace kiln {
// ATen's forms, as torch::fractional_max_pool2d/3d: random_samples [N, C, 2] ([N, C, 3]).
KILN_API std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& input,
                                                          IntArrayRef kernel_size,
                                                          IntArrayRef output_size,
                                                          const Tensor& random_samples);
KILN_API std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& input,
                                                          IntArrayRef kernel_size,
                                                          IntArrayRef output_size,
                                                          const Tensor& random_samples);
}  // namespace kiln
