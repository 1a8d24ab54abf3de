// The checkerboard problem of "Effective PyTorch" (mixed precision): the inputs are pixel
// coordinates, the target a checkerboard, and the network four 1x1 convolutions with batch norm
// and ReLU. Shared by kiln-checkerboard and kiln-demo.
#pragma once

#include <kiln/kiln.h>
#include <kiln/nn.h>

#include <cstdint>

namespace checkerboard {

// [2, height, width]: x / width and y / height, as the article's grid().
inline kiln::Tensor grid(int64_t width, int64_t height) {
  kiln::Tensor h =
      kiln::arange(width).unsqueeze(0).repeat({height, 1}).div(static_cast<double>(width));
  kiln::Tensor v =
      kiln::arange(height).unsqueeze(1).repeat({1, width}).div(static_cast<double>(height));
  return kiln::stack({h, v}, 0);
}

// [height, width] of 0 and 1 squares, `freq` per side, as the article's checker().
inline kiln::Tensor checker(int64_t width, int64_t height, double freq) {
  kiln::Tensor h =
      kiln::arange(width).reshape({1, width}).mul(freq / static_cast<double>(width) / 2.0);
  kiln::Tensor v =
      kiln::arange(height).reshape({height, 1}).mul(freq / static_cast<double>(height) / 2.0);
  return kiln::logical_xor(kiln::gt(kiln::fmod(h, 1.0), 0.5), kiln::gt(kiln::fmod(v, 1.0), 0.5))
      .to(kiln::kFloat);
}

// The checkerboard at points `coords` [2, ...] (x and y in [0, 1)): the article's checker() is
// checker_at(grid(width, height), freq) with the rounding of its own arithmetic.
inline kiln::Tensor checker_at(const kiln::Tensor& coords, double freq) {
  kiln::Tensor h = kiln::gt(kiln::fmod(coords[0].mul(freq / 2.0), 1.0), 0.5);
  kiln::Tensor v = kiln::gt(kiln::fmod(coords[1].mul(freq / 2.0), 1.0), 0.5);
  return kiln::logical_xor(h, v).to(kiln::kFloat);
}

// The article's Net: [N, 2, H, W] coordinates -> [N, 1, H, W].
inline kiln::nn::Sequential make_net() {
  namespace nn = kiln::nn;
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(2, 256, 1)), nn::BatchNorm2d(256), nn::ReLU(),
                        nn::Conv2d(nn::Conv2dOptions(256, 256, 1)), nn::BatchNorm2d(256),
                        nn::ReLU(), nn::Conv2d(nn::Conv2dOptions(256, 256, 1)),
                        nn::BatchNorm2d(256), nn::ReLU(), nn::Conv2d(nn::Conv2dOptions(256, 1, 1)));
}

}  // namespace checkerboard
