// libtorch's torch::ExpandingArray (D integers given as one or as D) is at namespace level;
// kiln's is nn::ExpandingArray, which the module options use: this names it kiln::ExpandingArray.
#pragma once

#include <kiln/nn/options.h>

namespace kiln {
using nn::ExpandingArray;  // the same template, so `using namespace` of both is not ambiguous
}  // namespace kiln
