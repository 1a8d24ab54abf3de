// The resampling modules: Upsample, PixelShuffle, PixelUnshuffle.
#include <kiln/nn/modules/upsampling.h>

#include <variant>

namespace kiln::nn {

Tensor UpsampleImpl::forward(const Tensor& input) {
  functional::InterpolateFuncOptions o;
  std::visit([&o](auto mode) { o.mode(mode); }, options.mode());
  o.size(options.size()).scale_factor(options.scale_factor());
  o.align_corners(options.align_corners());
  return functional::interpolate(input, o);
}

void UpsampleImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::Upsample(";
  if (options.scale_factor()) {
    stream << "scale_factor=[";
    const std::vector<double>& f = *options.scale_factor();
    for (size_t i = 0; i < f.size(); ++i) stream << (i ? ", " : "") << f[i];
    stream << "]";
  } else if (options.size()) {
    stream << "size=" << IntArrayRef(*options.size());
  }
  const char* modes[] = {"kNearest", "kLinear", "kBilinear", "kBicubic", "kTrilinear"};
  stream << ", mode=" << modes[options.mode().index()] << ")";
}

Tensor PixelShuffleImpl::forward(const Tensor& input) {
  return functional::pixel_shuffle(input, options);
}

void PixelShuffleImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::PixelShuffle(upscale_factor=" << options.upscale_factor() << ")";
}

Tensor PixelUnshuffleImpl::forward(const Tensor& input) {
  return functional::pixel_unshuffle(input, options);
}

void PixelUnshuffleImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::PixelUnshuffle(downscale_factor=" << options.downscale_factor() << ")";
}

}  // namespace kiln::nn
