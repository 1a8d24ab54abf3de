// Gumbel-softmax sampling, as torch::nn::functional::gumbel_softmax (Jang et al., "Categorical
// Reparameterization with Gumbel-Softmax"): F::gumbel_softmax(logits,
// F::GumbelSoftmaxFuncOptions().tau(0.5).hard(true).dim(-1)). The noise comes from kiln's
// default generator (manual_seed).
#pragma once

#include <kiln/export.h>
#include <kiln/nn/options.h>
#include <kiln/tensor.h>

namespace kiln::nn::functional {

struct GumbelSoftmaxFuncOptions {
  KILN_ARG(double, tau) = 1.0;  // temperature, > 0
  // One-hot samples whose gradient is the soft sample's (the straight-through estimator).
  KILN_ARG(bool, hard) = false;
  KILN_ARG(int64_t, dim) = -1;
};

// softmax((logits + g) / tau) along dim, g drawn from Gumbel(0, 1) per element; with hard, the
// one-hot of its maximum, differentiated as the soft sample.
KILN_API Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options = {});

}  // namespace kiln::nn::functional
