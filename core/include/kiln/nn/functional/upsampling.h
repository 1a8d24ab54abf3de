// Resampling, as libtorch's F::interpolate(x, F::InterpolateFuncOptions().scale_factor(
// std::vector<double>{2, 2}).mode(kiln::kBilinear).align_corners(false)), and pixel
// (un)shuffling. Inputs are [N, C, d...] with 1, 2 or 3 spatial dimensions d; every function
// differentiates, twice too, on every device.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options/upsampling.h>
#include <kiln/tensor.h>

namespace kiln::nn::functional {

// input [N, C, d...] resampled to options.size() or to floor(d * scale_factor) per spatial
// dimension, as PyTorch 1.13: kNearest, kNearestExact (1-3 spatial dimensions); kLinear (1),
// kBilinear and kBicubic (2), kTrilinear (3), with align_corners (default false); kArea (an
// adaptive average pooling). A given scale_factor sets the source positions (1 / factor apart)
// unless recompute_scale_factor.
KILN_API Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

// [*, C * r^2, H, W] -> [*, C, H * r, W * r] (r = upscale_factor), and its inverse.
KILN_API Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
KILN_API Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);

}  // namespace kiln::nn::functional
