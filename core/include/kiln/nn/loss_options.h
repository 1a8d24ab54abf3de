// Options of the losses, shared by the loss modules (kiln/nn/modules/loss.h) and the functional
// losses (kiln/nn/functional.h), as libtorch's: `CrossEntropyLossOptions().ignore_index(0)`.
#pragma once

#include <kiln/nn/options.h>
#include <kiln/tensor.h>

namespace kiln::nn {

struct MSELossOptions {
  MSELossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}  // NOLINT
  KILN_ARG(Reduction, reduction);
};

// weight: a rescaling weight per class [C]; targets equal to ignore_index (class indices only)
// count for nothing.
struct CrossEntropyLossOptions {
  CrossEntropyLossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(int64_t, ignore_index) = -100;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

struct NLLLossOptions {
  NLLLossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(int64_t, ignore_index) = -100;
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// weight: a rescaling weight broadcast to the input.
struct BCELossOptions {
  BCELossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
};

// pos_weight: a weight of the positive examples, broadcast along the last dimension.
struct BCEWithLogitsLossOptions {
  BCEWithLogitsLossOptions() = default;
  KILN_ARG(Tensor, weight);
  KILN_ARG(Reduction, reduction) = Reduction::Mean;
  KILN_ARG(Tensor, pos_weight);
};

}  // namespace kiln::nn
