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

}  // namespace kiln::nn
