// Dropout.
#pragma once

#include <kiln/nn/module.h>
#include <kiln/nn/options.h>

namespace kiln::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  KILN_ARG(double, p);
  KILN_ARG(bool, inplace) = false;
};

// In training, zeroes each element with probability p and scales the rest by 1 / (1 - p);
// the identity in evaluation (eval()).
class KILN_API DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  explicit DropoutImpl(const DropoutOptions& options = {});
  // dropout(input, p, is_training()).
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& stream) const override;

  DropoutOptions options;
};
KILN_MODULE(Dropout);

// The other dropouts take Dropout's options, as libtorch's.
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

// Dropout2d, Dropout3d: in training, zero whole channels of [N, C, H, W] ([N, C, D, H, W]) or
// unbatched input (F::dropout2d, F::dropout3d); AlphaDropout, FeatureAlphaDropout: alpha
// dropout of elements or of channels (F::alpha_dropout, F::feature_alpha_dropout). Each is the
// identity in evaluation.
#define KILN_DROPOUT_MODULE(Name)                                    \
  class KILN_API Name##Impl : public Module {                        \
   public:                                                           \
    explicit Name##Impl(double p) : Name##Impl(DropoutOptions(p)) {} \
    explicit Name##Impl(const DropoutOptions& options = {});         \
    Tensor forward(Tensor input);                                    \
    void pretty_print(std::ostream& stream) const override;          \
                                                                     \
    DropoutOptions options;                                          \
  };                                                                 \
  KILN_MODULE(Name)
KILN_DROPOUT_MODULE(Dropout2d);
KILN_DROPOUT_MODULE(Dropout3d);
KILN_DROPOUT_MODULE(AlphaDropout);
KILN_DROPOUT_MODULE(FeatureAlphaDropout);
#undef KILN_DROPOUT_MODULE

}  // namespace kiln::nn
