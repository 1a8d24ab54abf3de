// Selection, diagonals, products and einsum: meshgrid, masked_select, masked_scatter, index_fill,
// take, take_along_dim, count_nonzero, diagonal, diag_embed, diag, trace, vdot, mv, outer, addmv,
// addr, baddbmm, addbmm, cross, einsum, cartesian_prod, combinations, bincount and histc. Values
// come from PyTorch (tests/golden/make_select_golden.py, through make_sort_golden.py); the
// gradient cases run the composites against themselves in float64 (test_gradcheck checks their
// gradients by finite differences).
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;

// make_sort_golden.py's EINSUM_EQUATIONS, in its order.
const char* const kEquations[] = {
    "ij,jk->ik",
    "bij,bjk->bik",
    "i,j->ij",
    "ii->",
    "ii->i",
    "i,i->",
    "ij->ji",
    "ij",
    "ji",
    "bn,anm,bm->ba",
    "...ij,...jk->...ik",
    "b...,b...->...",
    "ij,ij->ij",
    "ijk->",
    "iij->ji",
    "bhqd,bhkd->bhqk",
    "i,jk",
    "Ab,bC->AC",
};

Tensor scaled(const char* op, const Args& a) {
  Scalar beta = a.s(0), alpha = a.s(1);
  std::string name = op;
  if (name == "addmv") return addmv(a.t(0), a.t(1), a.t(2), beta, alpha);
  if (name == "addr") return a.t(0).addr(a.t(1), a.t(2), beta, alpha);
  if (name == "baddbmm") return baddbmm(a.t(0), a.t(1), a.t(2), beta, alpha);
  return a.t(0).addbmm(a.t(1), a.t(2), beta, alpha);
}

void register_golden_cases() {
  add_golden("meshgrid", "meshgrid", [](const Args& a) {
    std::vector<Tensor> grids = a.i(0) == 0   ? meshgrid(a.tensors)
                                : a.i(0) == 1 ? meshgrid(a.tensors, "ij")
                                              : meshgrid(a.tensors, "xy");
    return Outputs(grids.begin(), grids.end());
  });
  add_golden("masked_select", "index_select",
             [](const Args& a) { return Outputs{masked_select(a.t(0), a.t(1))}; });
  add_golden("masked_scatter", "index_select",
             [](const Args& a) { return Outputs{a.t(0).masked_scatter(a.t(1), a.t(2))}; });
  add_golden("index_fill", "where",
             [](const Args& a) { return Outputs{a.t(0).index_fill(a.i(0), a.t(1), a.s(0))}; });
  add_golden("take", "index_select", [](const Args& a) { return Outputs{take(a.t(0), a.t(1))}; });
  add_golden("take_along_dim", "gather", [](const Args& a) {
    if (a.ints.empty()) return Outputs{take_along_dim(a.t(0), a.t(1))};
    return Outputs{a.t(0).take_along_dim(a.t(1), a.i(0))};
  });
  add_golden("count_nonzero", "sum", [](const Args& a) {
    if (a.ints.empty()) return Outputs{count_nonzero(a.t(0))};
    if (a.ints.size() == 1) return Outputs{a.t(0).count_nonzero(std::optional<int64_t>(a.i(0)))};
    return Outputs{count_nonzero(a.t(0), IntArrayRef(a.ints))};
  });
  add_golden("diagonal", "diagonal",
             [](const Args& a) { return Outputs{a.t(0).diagonal(a.i(0), a.i(1), a.i(2))}; });
  add_golden("diag_embed", "index_add",
             [](const Args& a) { return Outputs{diag_embed(a.t(0), a.i(0), a.i(1), a.i(2))}; });
  add_golden("diag", "diagonal", [](const Args& a) { return Outputs{a.t(0).diag(a.i(0))}; });
  add_golden("trace", "trace", [](const Args& a) { return Outputs{a.t(0).trace()}; });
  add_golden("vdot", "mm", [](const Args& a) { return Outputs{vdot(a.t(0), a.t(1))}; });
  add_golden("mv", "mv", [](const Args& a) { return Outputs{a.t(0).mv(a.t(1))}; });
  add_golden("outer", "mul", [](const Args& a) { return Outputs{outer(a.t(0), a.t(1))}; });
  for (const char* op : {"addmv", "addr", "baddbmm", "addbmm"}) {
    add_golden(op, op, [op](const Args& a) { return Outputs{scaled(op, a)}; });
  }
  add_golden("cross", "mul", [](const Args& a) {
    if (a.ints.empty()) return Outputs{cross(a.t(0), a.t(1))};
    return Outputs{a.t(0).cross(a.t(1), a.i(0))};
  });
  add_golden("einsum", "bmm",
             [](const Args& a) { return Outputs{einsum(kEquations[a.i(0)], a.tensors)}; });
  add_golden("cartesian_prod", "cartesian_prod",
             [](const Args& a) { return Outputs{cartesian_prod(a.tensors)}; });
  add_golden("combinations", "index_select",
             [](const Args& a) { return Outputs{combinations(a.t(0), a.i(0), a.i(1) != 0)}; });
  add_golden("bincount", "index_add", [](const Args& a) {
    if (a.tensors.size() == 1) return Outputs{bincount(a.t(0), {}, a.i(0))};
    return Outputs{a.t(0).bincount(a.t(1), a.i(0))};
  });
  add_golden("histc", "index_add",
             [](const Args& a) { return Outputs{a.t(0).histc(a.i(0), a.s(0), a.s(1))}; });
}

}  // namespace

void register_select_cases() {
  register_golden_cases();
  RunFn diagonals = [](const Args& a) {
    return Outputs{diagonal(a.t(0), 1, 0, 1), a.t(0).diagonal(-1, 2, 0), a.t(0).diagonal(0, -1, 1)};
  };
  add_case({.name = "diagonal_views",
            .op = "diagonal",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4, 5}, d, -3, 3, 81)};
                },
            .run = diagonals,
            .reference = ref_float64(diagonals),
            .out_dtype = same_dtype});
  add_composite_case("mv", {{3, 5}, {5}},
                     [](const Args& a) { return Outputs{mv(a.t(0), a.t(1))}; });
  add_composite_case("addmv", {{3}, {3, 5}, {5}},
                     [](const Args& a) { return Outputs{addmv(a.t(0), a.t(1), a.t(2), 0.5, -2)}; });
  add_composite_case("addr", {{3, 1}, {3}, {4}},
                     [](const Args& a) { return Outputs{addr(a.t(0), a.t(1), a.t(2), 2, 0.5)}; });
  add_composite_case("baddbmm", {{3, 1}, {2, 3, 4}, {2, 4, 5}}, [](const Args& a) {
    return Outputs{baddbmm(a.t(0), a.t(1), a.t(2), -1, 1.5)};
  });
  add_composite_case("addbmm", {{3, 5}, {2, 3, 4}, {2, 4, 5}}, [](const Args& a) {
    return Outputs{addbmm(a.t(0), a.t(1), a.t(2), 0.25, 1)};
  });
  add_composite_case("einsum_gradients", {{2, 3, 4}, {2, 4, 5}, {3, 3}}, [](const Args& a) {
    return Outputs{einsum("bij,bjk->bik", {a.t(0), a.t(1)}), einsum("ii", {a.t(2)}),
                   einsum("bij,ii->bj", {a.t(0), a.t(2)}),
                   einsum("...k,bkm->...m", {a.t(0), a.t(1)})};
  });
  add_composite_case("selection_composites", {{3, 4}, {3}, {3}}, [](const Args& a) {
    Tensor mask = gt(a.t(0), 0);
    TensorOptions longs = TensorOptions().dtype(kLong).device(a.t(0).device());
    return Outputs{masked_select(a.t(0), mask),
                   masked_scatter(a.t(0), mask, a.t(0).flatten() * 2),
                   index_fill(a.t(0), 1, arange(2, longs), 0.5),
                   take(a.t(0), arange(3, longs) * 3),
                   take_along_dim(a.t(0), argsort(a.t(0), int64_t{1}), 1),
                   cross(a.t(1), a.t(2)),
                   outer(a.t(1), a.t(2)),
                   diag_embed(a.t(0), 1),
                   trace(a.t(0))};
  });
}

}  // namespace conformance
