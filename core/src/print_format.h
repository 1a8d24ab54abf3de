#pragma once
// The text of Python's print(tensor), as PyTorch 1.13's torch/_tensor_str.py writes it with the
// default print options (precision 4, threshold 1000, edgeitems 3, linewidth 80, sci_mode None).
// This file knows nothing of kiln::Tensor: the caller copies shape, values and metadata into a
// PrintInput, and tests/golden/print_cases.txt (made by PyTorch itself) checks the output.
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::detail {

enum class PrintKind { Bool, Integer, Floating };

// A tensor's contents and the metadata that its printed suffixes need.
struct PrintInput {
  std::vector<int64_t> sizes;  // shape; empty = 0-dim tensor
  PrintKind kind = PrintKind::Floating;
  std::vector<double> floats;    // row-major values when kind == Floating (16-bit widened)
  std::vector<int64_t> ints;     // row-major values when kind == Integer or Bool (0/1)
  std::string dtype_name;        // "float32", "int32", "bfloat16", ...
  bool dtype_is_default = true;  // true for float32, int64 and bool: PyTorch prints no dtype then
  std::string device;            // "" for cpu, otherwise e.g. "cuda:0" -> device='cuda:0'
  bool requires_grad = false;    // prints requires_grad=True (unless grad_fn given)
  std::string grad_fn;           // "" or e.g. "AddBackward0" -> grad_fn=<AddBackward0>
};

// The text Python's print(tensor) shows, with "kiln." where PyTorch writes "torch.".
// Throws std::invalid_argument when the value count differs from the product of sizes.
std::string format_tensor(const PrintInput& in);

}  // namespace kiln::detail
