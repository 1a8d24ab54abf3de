// Resampling layers, as libtorch's: Upsample (F::interpolate with the module's options),
// PixelShuffle and PixelUnshuffle; each prints as libtorch's
// (kiln::nn::Upsample(scale_factor=[2, 2], mode=kBilinear)).
#pragma once

#include <kiln/nn/functional/upsampling.h>
#include <kiln/nn/module.h>

#include <ostream>

namespace kiln::nn {

class KILN_API UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : options(options) {}
  // Nothing to (re)initialise: no parameters or buffers.
  void reset() {}
  // F::interpolate(input) with the module's size or scale_factor, mode and align_corners.
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  UpsampleOptions options;
};
KILN_MODULE(Upsample);

class KILN_API PixelShuffleImpl : public Module {
 public:
  explicit PixelShuffleImpl(const PixelShuffleOptions& options) : options(options) {}
  void reset() {}
  // F::pixel_shuffle(input, options).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  PixelShuffleOptions options;
};
KILN_MODULE(PixelShuffle);

class KILN_API PixelUnshuffleImpl : public Module {
 public:
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options) : options(options) {}
  void reset() {}
  // F::pixel_unshuffle(input, options).
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  PixelUnshuffleOptions options;
};
KILN_MODULE(PixelUnshuffle);

}  // namespace kiln::nn
