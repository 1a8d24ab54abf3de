// Operators that rearrange elements: flip fliplr flipud roll rot90 movedim tile repeat_interleave
// split_with_sizes tensor_split. Their values are checked against PyTorch's (golden records of
// make_conformance_golden.py's write_rearrange); flip and roll, which carry the gradients of the
// others (index_select and cat), also against host loops with `gradient`.
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;

// ints[from, from + n) of a golden record.
std::vector<int64_t> int_list(const Args& a, size_t from, size_t n) {
  return {a.ints.begin() + static_cast<std::ptrdiff_t>(from),
          a.ints.begin() + static_cast<std::ptrdiff_t>(from + n)};
}
std::vector<int64_t> int_rest(const Args& a, size_t from) {
  return int_list(a, from, a.ints.size() - from);
}

// out[r][c] = x[row(r)][col(c)] for a host [rows, cols] tensor.
Outputs remap_2d(const Tensor& t, const std::function<int64_t(int64_t)>& row,
                 const std::function<int64_t(int64_t)>& col) {
  Tensor h = host_double(t);
  const double* p = h.data_ptr<double>();
  int64_t rows = h.size(0), cols = h.size(1);
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out.push_back(p[row(r) * cols + col(c)]);
  }
  return Outputs{values({rows, cols}, out, kDouble)};
}

}  // namespace

void register_rearrange_cases() {
  add_golden("flip", "flip", [](const Args& a) { return Outputs{flip(a.t(0), a.ints)}; });
  add_golden("fliplr", "fliplr", [](const Args& a) { return Outputs{fliplr(a.t(0))}; });
  add_golden("flipud", "flipud", [](const Args& a) { return Outputs{flipud(a.t(0))}; });
  // roll, movedim: ints are n, then n values of the first list and the second list
  add_golden("roll", "roll", [](const Args& a) {
    auto n = static_cast<size_t>(a.i(0));
    return Outputs{roll(a.t(0), int_list(a, 1, n), int_rest(a, 1 + n))};
  });
  add_golden("rot90", "rot90", [](const Args& a) {
    return Outputs{rot90(a.t(0), a.i(0), {a.i(1), a.i(2)})};
  });
  add_golden("movedim", "movedim", [](const Args& a) {
    auto n = static_cast<size_t>(a.i(0));
    return Outputs{movedim(a.t(0), int_list(a, 1, n), int_rest(a, 1 + n))};
  });
  add_golden("tile", "tile", [](const Args& a) { return Outputs{tile(a.t(0), a.ints)}; });
  add_golden("repeat_interleave", "repeat_interleave", [](const Args& a) {
    std::optional<int64_t> dim;
    if (a.ints.size() > 1) dim = a.i(1);
    return Outputs{repeat_interleave(a.t(0), a.i(0), dim)};
  });
  add_golden("split_with_sizes", "split_with_sizes",
             [](const Args& a) { return split_with_sizes(a.t(0), int_rest(a, 1), a.i(0)); });
  add_golden("tensor_split_sections", "tensor_split",
             [](const Args& a) { return tensor_split(a.t(0), a.i(0), a.i(1)); });
  add_golden("tensor_split_indices", "tensor_split", [](const Args& a) {
    return tensor_split(a.t(0), IntArrayRef(int_rest(a, 1)), a.i(0));
  });

  // flip of one and of both dims of [3, 4]
  add_case({.name = "flip_2d",
            .op = "flip",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -5, 5, 31)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{flip(a.t(0), {1}), flip(a.t(0), {0, -1})};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  auto same = [](int64_t i) { return i; };
                  auto rrow = [](int64_t r) { return 2 - r; };
                  auto rcol = [](int64_t c) { return 3 - c; };
                  return Outputs{remap_2d(a.t(0), same, rcol)[0], remap_2d(a.t(0), rrow, rcol)[0]};
                }});
  // roll by a shift larger than the dim, a negative one, and of the flattened tensor
  add_case({.name = "roll_2d",
            .op = "roll",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -5, 5, 32)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{roll(a.t(0), {5, -1}, {1, 0}), roll(a.t(0), {2})};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  Outputs both = remap_2d(
                      a.t(0), [](int64_t r) { return (r + 1) % 3; },
                      [](int64_t c) { return (c + 3) % 4; });
                  // flattened: out[i] = x[(i - 2) mod 12]
                  Tensor h = host_double(a.t(0));
                  const double* p = h.data_ptr<double>();
                  std::vector<double> flat;
                  for (int64_t i = 0; i < 12; ++i) flat.push_back(p[(i + 10) % 12]);
                  both.push_back(values({3, 4}, flat, kDouble));
                  return both;
                }});
}

}  // namespace conformance
