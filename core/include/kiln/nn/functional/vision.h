// Spatial transformers' sampling, as torch::nn::functional's vision functions: F::affine_grid
// (the sampling grid of a batch of affine maps) and F::grid_sample (input sampled at a grid's
// points, bilinearly or at the nearest pixel, with zeros, border or reflection padding), for
// 2-D ([N, C, H, W]) and 3-D ([N, C, D, H, W]) inputs. Composites of gathers and arithmetic:
// autograd gives the gradients of the input, of the grid and of theta; under autocast
// grid_sampler runs in float32 on the CPU and promotes to the widest input elsewhere, as
// PyTorch's lists.
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options/conv.h>
#include <kiln/tensor.h>

#include <optional>
#include <variant>

namespace kiln {
namespace enumtype {
struct kBorder {};
struct kReflection {};
}  // namespace enumtype
// grid_sample's padding modes besides kiln::kZeros.
inline constexpr enumtype::kBorder kBorder{};
inline constexpr enumtype::kReflection kReflection{};
}  // namespace kiln

namespace kiln::nn::functional {

struct GridSampleFuncOptions {
  using mode_t = std::variant<enumtype::kBilinear, enumtype::kNearest>;
  using padding_mode_t = std::variant<enumtype::kZeros, enumtype::kBorder, enumtype::kReflection>;
  KILN_ARG(mode_t, mode) = enumtype::kBilinear{};
  // What points outside the input read: 0, the nearest border value, or the input reflected at
  // its borders.
  KILN_ARG(padding_mode_t, padding_mode) = enumtype::kZeros{};
  // Whether -1 and 1 are the centres of the corner pixels (true) or their outer edges (false,
  // the default; libtorch warns when it is not given).
  KILN_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

// The grid [N, H, W, 2] (size [N, C, H, W]) or [N, D, H, W, 3] (size [N, C, D, H, W]) of the
// points theta [N, 2, 3] ([N, 3, 4]) maps the output's normalised coordinates (x, y[, z] in
// [-1, 1]) to.
KILN_API Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners = false);
// out[n, c, h, w] = input[n, c] read at grid[n, h, w] = (x, y), normalised coordinates (-1 the
// left/top, 1 the right/bottom): input [N, C, H, W] and grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo];
// 3-D: input [N, C, D, H, W], grid [N, Do, Ho, Wo, 3] of (x, y, z) -> [N, C, Do, Ho, Wo].
KILN_API Tensor grid_sample(const Tensor& input, const Tensor& grid,
                            const GridSampleFuncOptions& options = {});

}  // namespace kiln::nn::functional

namespace kiln {
// ATen's forms, as torch::affine_grid_generator and torch::grid_sampler: interpolation_mode 0
// bilinear, 1 nearest; padding_mode 0 zeros, 1 border, 2 reflection.
KILN_API Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners);
KILN_API Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                             int64_t padding_mode, bool align_corners);
}  // namespace kiln
