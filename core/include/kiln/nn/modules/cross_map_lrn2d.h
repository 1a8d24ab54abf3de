// CrossMapLRN2d, as libtorch's (Lua Torch's SpatialCrossMapLRN): local response normalisation
// across channels of a [N, C, H, W] input, with libtorch's forward and backward formulas.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

namespace kiln::nn {

struct CrossMapLRN2dOptions {
  CrossMapLRN2dOptions(int64_t size) : size_(size) {}  // NOLINT: as libtorch
  KILN_ARG(int64_t, size);
  KILN_ARG(double, alpha) = 1e-4;
  KILN_ARG(double, beta) = 0.75;
  KILN_ARG(int64_t, k) = 1;
};

// input * (k + alpha / size * s)^-beta, s the sum of squares of `size` channels around each
// channel (as Lua Torch's running sum computes it); input [N, C, H, W].
class KILN_API CrossMapLRN2dImpl : public Module {
 public:
  CrossMapLRN2dImpl(int64_t size) : CrossMapLRN2dImpl(CrossMapLRN2dOptions(size)) {}  // NOLINT
  explicit CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  CrossMapLRN2dOptions options;
};
KILN_MODULE(CrossMapLRN2d);

}  // namespace kiln::nn
