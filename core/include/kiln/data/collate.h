// Collation: a list of samples -> one batch, as PyTorch's default_collate.
//
//   tensors of equal shape [*]      -> one tensor [B, *] (kiln::stack)
//   ints / doubles / bools          -> int64 / float64 / bool tensor [B]
//   strings                         -> a list of B strings
//   maps with the same keys         -> a map of each key's collated values
//   lists of equal length L         -> a list of L collated values (transposed, like zip(*batch))
#pragma once

#include <kiln/data/sample.h>
#include <kiln/export.h>

#include <functional>
#include <vector>

namespace kiln::data {

// A function from B samples to one batch; DataLoaderOptions::collate_fn takes one.
using CollateFn = std::function<Sample(std::vector<Sample>)>;

// The batch of `samples` by the rules above; throws kiln::TypeError for None or mixed kinds and
// kiln::ValueError for tensors of different shapes, naming the path ("jpg", "[1]") and entry.
KILN_API Sample collate(const std::vector<Sample>& samples);

// Tensors of equal shape [*] and dtype -> [B, *]; a contiguous CPU fast path, else kiln::stack.
KILN_API Tensor stack_tensors(const std::vector<Tensor>& tensors);

}  // namespace kiln::data
