// libtorch's autograd spellings of a tensor: torch::autograd::Variable is at::Tensor (one type
// since PyTorch 1.0), so code written with Variable ports unchanged.
#pragma once

#include <kiln/custom_function.h>  // kiln::autograd::variable_list
#include <kiln/tensor.h>

namespace kiln::autograd {
using Variable = Tensor;
}  // namespace kiln::autograd
