// Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, cummax, cummin,
// searchsorted, bucketize, unique and unique_consecutive. Values, indices, NaN order and ties come
// from PyTorch (tests/golden/make_sort_golden.py, conformance_sort_cases.txt); the gradient cases
// run the primitives on distinct values against themselves in float64 (test_gradcheck checks
// those gradients by finite differences).
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;

Outputs pair(const std::tuple<Tensor, Tensor>& t) { return {std::get<0>(t), std::get<1>(t)}; }
Outputs triple(const std::tuple<Tensor, Tensor, Tensor>& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
}

ScalarType values_then_long(ScalarType d, size_t i) { return i % 2 == 1 ? kLong : d; }

// A gradient case of a primitive with (values, indices) outputs, on continuous random values
// (no ties) of [4, 6], against itself in float64.
void add_selection_case(const char* name, const char* op, RunFn run) {
  add_case({.name = name,
            .op = op,
            .gradient = true,
            .dtypes = {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kByte},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({4, 6}, d, -50, 50, 71)};
                },
            .run = run,
            .reference = ref_float64(run),
            .out_dtype = values_then_long});
}

void register_golden_cases() {
  add_golden("sort", "sort", [](const Args& a) {
    return pair(sort(a.t(0), std::optional<bool>(a.i(2) != 0), a.i(0), a.i(1) != 0));
  });
  add_golden("argsort", "sort",
             [](const Args& a) { return Outputs{a.t(0).argsort(a.i(0), a.i(1) != 0)}; });
  add_golden("msort", "sort", [](const Args& a) { return Outputs{a.t(0).msort()}; });
  add_golden("topk", "topk", [](const Args& a) {
    return pair(topk(a.t(0), a.i(0), a.i(1), a.i(2) != 0, a.i(3) != 0));
  });
  add_golden("kthvalue", "sort",
             [](const Args& a) { return pair(a.t(0).kthvalue(a.i(0), a.i(1), a.i(2) != 0)); });
  add_golden("median_dim", "sort",
             [](const Args& a) { return pair(median(a.t(0), a.i(0), a.i(1) != 0)); });
  add_golden("median", "sort", [](const Args& a) { return Outputs{a.t(0).median()}; });
  add_golden("nanmedian_dim", "sort",
             [](const Args& a) { return pair(a.t(0).nanmedian(a.i(0), a.i(1) != 0)); });
  add_golden("nanmedian", "sort", [](const Args& a) { return Outputs{nanmedian(a.t(0))}; });
  add_golden("mode", "sort", [](const Args& a) { return pair(a.t(0).mode(a.i(0), a.i(1) != 0)); });
  add_golden("cummax", "cummax", [](const Args& a) { return pair(a.t(0).cummax(a.i(0))); });
  add_golden("cummin", "cummin", [](const Args& a) { return pair(cummin(a.t(0), a.i(0))); });
  add_golden("searchsorted", "sort", [](const Args& a) {
    return Outputs{searchsorted(a.t(0), a.t(1), a.i(0) != 0, a.i(1) != 0)};
  });
  add_golden("bucketize", "sort",
             [](const Args& a) { return Outputs{bucketize(a.t(0), a.t(1), false, a.i(0) != 0)}; });
  add_golden("unique", "sort", [](const Args& a) {
    return triple(_unique2(a.t(0), true, a.i(0) != 0, a.i(1) != 0));
  });
  // Python's unique_consecutive returns only the outputs asked for; libtorch's all three
  add_golden("unique_consecutive", "sort", [](const Args& a) {
    auto [values, inverse, counts] = unique_consecutive(a.t(0), a.i(0) != 0, a.i(1) != 0);
    Outputs out{values};
    if (a.i(0) != 0) out.push_back(inverse);
    if (a.i(1) != 0) out.push_back(counts);
    return out;
  });
}

}  // namespace

void register_sort_cases() {
  register_golden_cases();
  add_selection_case("sort_dims", "sort", [](const Args& a) {
    auto [v0, i0] = sort(a.t(0), 0);
    auto [v1, i1] = a.t(0).sort(std::optional<bool>(true), -1, /*descending=*/true);
    return Outputs{v0, i0, v1, i1};
  });
  add_selection_case("topk_dims", "topk", [](const Args& a) {
    auto [v0, i0] = topk(a.t(0), 2, 0);
    auto [v1, i1] = a.t(0).topk(4, 1, /*largest=*/false);
    auto [v2, i2] = topk(a.t(0), 6, 1);
    return Outputs{v0, i0, v1, i1, v2, i2};
  });
  add_selection_case("cummax_dims", "cummax", [](const Args& a) {
    auto [v0, i0] = cummax(a.t(0), 0);
    auto [v1, i1] = cummax(a.t(0), 1);
    return Outputs{v0, i0, v1, i1};
  });
  add_selection_case("cummin_dims", "cummin", [](const Args& a) {
    auto [v0, i0] = cummin(a.t(0), 0);
    auto [v1, i1] = cummin(a.t(0), 1);
    return Outputs{v0, i0, v1, i1};
  });
  // composites of sort: their gradients reach the picked elements through gather
  RunFn composites = [](const Args& a) {
    auto [k, ki] = kthvalue(a.t(0), 2, 1);
    auto [m, mi] = median(a.t(0), 0, true);
    auto [o, oi] = mode(a.t(0), 1);
    return Outputs{k, ki, m, mi, median(a.t(0)), nanmedian(a.t(0)), o, oi};
  };
  add_case({.name = "sort_composites",
            .op = "sort",
            .gradient = true,
            .dtypes = {kFloat, kDouble},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({5, 6}, d, -1, 1, 73)};
                },
            .run = composites,
            .reference = ref_float64(composites),
            .out_dtype = [](ScalarType d,
                            size_t i) { return i == 1 || i == 3 || i == 7 ? kLong : d; }});
  // a long line takes the radix path; topk's heap path needs k * 8 <= n
  add_case({.name = "sort_topk_long",
            .op = "topk",
            .dtypes = {kFloat, kDouble, kHalf, kInt, kLong, kShort},
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 1000}, d, -200, 200, 72)};
                },
            .run =
                [](const Args& a) {
                  auto [v, i] = sort(a.t(0), 1, true);
                  auto [w, j] = topk(a.t(0), 9, 1, false);
                  auto [x, k] = topk(a.t(0), 700, 1);
                  return Outputs{v, i, w, j, x, k};
                },
            .reference = ref_float64([](const Args& a) {
              auto [v, i] = sort(a.t(0), 1, true);
              auto [w, j] = topk(a.t(0), 9, 1, false);
              auto [x, k] = topk(a.t(0), 700, 1);
              return Outputs{v, i, w, j, x, k};
            }),
            .out_dtype = values_then_long,
            .layouts = false});
}

}  // namespace conformance
