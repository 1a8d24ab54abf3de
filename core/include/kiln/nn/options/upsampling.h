// Options of resampling, as libtorch's (torch/nn/options/upsampling.h and pixelshuffle.h):
// F::InterpolateFuncOptions().size(std::vector<int64_t>{8, 8}).mode(kiln::kBilinear)
// .align_corners(false), UpsampleOptions().scale_factor(std::vector<double>{2, 2}),
// PixelShuffleOptions(2), PixelUnshuffleOptions(2).
#pragma once

#include <kiln/nn/options.h>
#include <kiln/nn/options/conv.h>

#include <optional>
#include <variant>
#include <vector>

namespace kiln::nn {

struct UpsampleOptions {
  using mode_t = std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear,
                              enumtype::kBicubic, enumtype::kTrilinear>;
  // the output's spatial sizes, one per spatial dimension (or scale_factor)
  KILN_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  // the factor of each spatial size (or size)
  KILN_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  KILN_ARG(mode_t, mode) = kNearest;
  // linear modes: whether the corner pixels' centres align (default false)
  KILN_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

namespace functional {

struct InterpolateFuncOptions {
  using mode_t =
      std::variant<enumtype::kNearest, enumtype::kLinear, enumtype::kBilinear, enumtype::kBicubic,
                   enumtype::kTrilinear, enumtype::kArea, enumtype::kNearestExact>;
  KILN_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  KILN_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  KILN_ARG(mode_t, mode) = kNearest;
  KILN_ARG(std::optional<bool>, align_corners) = std::nullopt;
  // with scale_factor: resample by the output size's ratio instead of the factor itself
  // (See Note [Resampling scale factors] in kiln/sdk/resample.hpp)
  KILN_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
  // accepted for libtorch's API; only false is supported
  KILN_ARG(bool, antialias) = false;
};

}  // namespace functional

struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT
  KILN_ARG(int64_t, upscale_factor);
};

struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor)  // NOLINT: as libtorch
      : downscale_factor_(downscale_factor) {}
  KILN_ARG(int64_t, downscale_factor);
};

namespace functional {
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;
}  // namespace functional

}  // namespace kiln::nn
