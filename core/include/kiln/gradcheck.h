// Finite-difference gradient checks, as torch.autograd.gradcheck / gradgradcheck. Inputs that
// require grad should be float64; each is perturbed element by element (central differences)
// and the numerical Jacobian is compared with the one backward computes.
#pragma once

#include <kiln/autograd.h>
#include <kiln/export.h>

#include <functional>
#include <vector>

namespace kiln::autograd {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  bool raise_exception = true;  // false: return false instead of throwing
};

// Whether backward's gradients of fn match finite differences for every input that requires
// grad. On a mismatch throws kiln::Error with both Jacobians (unless raise_exception is false).
KILN_API bool gradcheck(const Fn& fn, const std::vector<Tensor>& inputs,
                        const GradcheckOptions& options = {});

// gradcheck of the gradients themselves (computed with create_graph), with random float64
// grad_outputs when none are given: checks second derivatives.
KILN_API bool gradgradcheck(const Fn& fn, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& grad_outputs = {},
                            const GradcheckOptions& options = {});

}  // namespace kiln::autograd
