// Sampling from categorical distributions: kiln::multinomial, as torch.multinomial.
//
//   kiln::Tensor probs = kiln::nn::functional::softmax(logits, -1);  // [B, V]
//   kiln::Tensor next = kiln::multinomial(probs, 1);                  // [B, 1] int64
//
// A composite of kiln's operators (rand, cumsum, comparisons, argmax), so it runs on every
// device. Its random numbers come from the default generator (kiln::manual_seed makes them
// repeatable); they are not PyTorch's, so the samples differ from torch.multinomial's for the
// same seed, though they follow the same distribution.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <cstdint>

namespace kiln {

// Draws num_samples category indices per row of probs ([V] -> [num_samples], or [B, V] ->
// [B, num_samples], int64), each category with probability proportional to its (non-negative,
// not necessarily normalised) weight. Without replacement each row yields distinct categories
// (PyTorch's exponential race: the largest p / Exp(1)), which needs as many categories of
// positive weight as samples. Throws ValueError, as PyTorch, for a negative, infinite or NaN
// weight, a row whose weights sum to 0, num_samples <= 0, or more samples than categories
// without replacement; TypeError for a non-floating dtype. With replacement it compares every
// draw with every cumulative weight: memory of rows x num_samples x categories booleans.
KILN_API Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false);

}  // namespace kiln
