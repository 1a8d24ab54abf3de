#!/usr/bin/python3
"""Writes conformance_sort_cases.txt: PyTorch's outputs for kiln's sorting, selection, diagonal,
product and einsum cases (tools/conformance/cases_sort.cpp and cases_select.cpp), in the format of
make_conformance_golden.py's docstring, whose helpers this script reuses. The conformance suite
reads every conformance_*_cases.txt beside conformance_cases.txt. Run with Debian's Python
(python3-torch 1.13):

    /usr/bin/python3 tests/golden/make_sort_golden.py

Records are appended, not regenerated: PyTorch's threaded float reductions change the last bits
of some outputs between runs, so a new case's records are added to the file (the mode records
were appended that way). Booleans (descending, stable, largest, keepdim, ...) are ints 0/1; an einsum case's first int is
the index of its equation in EINSUM_EQUATIONS, which cases_select.cpp repeats.
"""
import importlib.util
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "conformance_golden", os.path.join(HERE, "make_conformance_golden.py"))
cg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cg)
T, Int, Num, DTYPES, nan, inf = cg.T, cg.Int, cg.Num, cg.DTYPES, cg.nan, cg.inf

EINSUM_EQUATIONS = [
    "ij,jk->ik",         # matrix product
    "bij,bjk->bik",      # batch matrix product
    "i,j->ij",           # outer product
    "ii->",              # trace
    "ii->i",             # diagonal
    "i,i->",             # dot
    "ij->ji",            # transpose
    "ij",                # implicit: the same
    "ji",                # implicit: transposed (labels in order)
    "bn,anm,bm->ba",     # bilinear
    "...ij,...jk->...ik",  # batched with broadcasting ellipsis
    "b...,b...->...",    # ellipsis in the output
    "ij,ij->ij",         # elementwise
    "ijk->",             # everything summed
    "iij->ji",           # a diagonal kept in the output
    "bhqd,bhkd->bhqk",   # attention scores
    "i,jk",              # implicit outer with three labels
    "Ab,bC->AC",         # upper-case labels
]


def rnd(g, *sizes, dt="float64", lo=-2.0, hi=2.0):
    t = torch.rand(*sizes, generator=g, dtype=torch.float64) * (hi - lo) + lo
    return t.to(DTYPES[dt])


def distinct(g, *sizes, dt="float64"):
    """A permutation of 0..n-1 (shuffled), scaled: distinct values in any dtype."""
    n = 1
    for s in sizes:
        n *= s
    perm = torch.randperm(n, generator=g).reshape(*sizes)
    if dt in cg.FLOATS:
        return (perm.double() * 0.25 - n / 8).to(DTYPES[dt])
    if dt == "uint8":
        return perm.to(torch.uint8)
    return (perm - n // 2).to(DTYPES[dt])


def write_sort(w):
    g = torch.Generator().manual_seed(15)

    def sort(t, dim, descending, stable):
        return torch.sort(t, dim=dim, descending=bool(descending), stable=bool(stable))

    for dt in cg.ALL:
        if dt == "bool":
            x = torch.rand(3, 7, generator=g) > 0.5
        else:
            x = (torch.randint(-4, 5, (3, 7), generator=g)).to(DTYPES[dt])
            if dt == "uint8":
                x = torch.randint(0, 9, (3, 7), generator=g).to(torch.uint8)
            if dt in cg.FLOATS:
                x = x * 0.5
        for dim in [0, 1, -1]:
            for desc in [0, 1]:
                w.case("sort", "%s_d%s_%s" % (dt, str(dim).replace("-", "m"), "desc" if desc
                                               else "asc"), sort, x, Int(dim), Int(desc), Int(1))
    for dt in cg.FLOATS:
        x = T([[1.0, nan, -inf, 0.0, -0.0, inf, nan, -2.5], [-0.0, 0.0, 3.0, nan, 1.0, 1.0, -1.0,
                                                              0.0]], dt)
        for desc in [0, 1]:
            w.case("sort", "%s_nan_zero_%d" % (dt, desc), sort, x, Int(1), Int(desc), Int(1))
    x = distinct(g, 2, 3, 40, dt="float32")
    for dim in [0, 1, 2]:
        w.case("sort", "float32_3d_d%d" % dim, sort, x, Int(dim), Int(0), Int(0))
    w.case("sort", "float32_long", sort, distinct(g, 3, 700, dt="float32"), Int(1), Int(1), Int(0))
    w.case("sort", "int64_long", sort, distinct(g, 2, 300, dt="int64"), Int(1), Int(0), Int(0))
    w.case("sort", "float64_0dim", sort, T(2.5, "float64"), Int(0), Int(0), Int(0))
    w.case("sort", "float32_empty", sort, torch.zeros(2, 0), Int(1), Int(0), Int(0))
    w.case("argsort", "float32", lambda t, d, desc: torch.argsort(t, d, bool(desc)),
           distinct(g, 4, 6, dt="float32"), Int(1), Int(1))
    w.case("msort", "int32", torch.msort, distinct(g, 5, 3, dt="int32"))

    def topk(t, k, dim, largest, sort_):
        return torch.topk(t, k, dim=dim, largest=bool(largest), sorted=bool(sort_))

    for dt in cg.NUMERIC:
        x = distinct(g, 4, 9, dt=dt)
        for k, dim, largest in [(3, 1, 1), (3, 1, 0), (2, 0, 1), (0, 1, 1), (9, 1, 1), (4, 0, 0),
                                (1, -1, 1)]:
            w.case("topk", "%s_k%d_d%d_%d" % (dt, k, dim % 2, largest), topk, x, Int(k), Int(dim),
                   Int(largest), Int(1))
    for dt in ["float32", "float64"]:
        x = T([[1.0, nan, 5.0, -inf, 2.0, inf, 0.5]], dt)
        for largest in [0, 1]:
            w.case("topk", "%s_nan_%d" % (dt, largest), topk, x, Int(3), Int(1), Int(largest),
                   Int(1))
    w.case("topk", "float32_long", topk, distinct(g, 3, 5000, dt="float32"), Int(7), Int(1), Int(1),
           Int(1))
    w.case("topk", "float32_long_k", topk, distinct(g, 2, 900, dt="float32"), Int(300), Int(1),
           Int(0), Int(1))
    w.case("topk", "float32_0dim", topk, T(3.0, "float32"), Int(1), Int(0), Int(1), Int(1))


def write_selection(w):
    g = torch.Generator().manual_seed(16)

    def kth(t, k, dim, keep):
        return torch.kthvalue(t, k, dim, bool(keep))

    for dt in ["float32", "float64", "int64", "int16"]:
        x = distinct(g, 3, 7, dt=dt)
        for k, dim, keep in [(1, 1, 0), (4, 1, 1), (7, 1, 0), (2, 0, 0), (3, -2, 1)]:
            w.case("kthvalue", "%s_k%d_d%d_%d" % (dt, k, dim % 2, keep), kth, x, Int(k), Int(dim),
                   Int(keep))
    w.case("kthvalue", "float32_nan", kth, T([[3.0, nan, 1.0, 2.0]], "float32"), Int(4), Int(1),
           Int(0))

    def med(t, dim, keep):
        return torch.median(t, dim, bool(keep))

    def nanmed(t, dim, keep):
        return torch.nanmedian(t, dim, bool(keep))

    for dt in ["float32", "float64", "int64", "uint8"]:
        for n in [7, 8]:
            x = distinct(g, 3, n, dt=dt)
            for dim, keep in [(1, 0), (0, 1), (-1, 1)]:
                w.case("median_dim", "%s_n%d_d%d_%d" % (dt, n, dim % 2, keep), med, x, Int(dim),
                       Int(keep))
            w.case("median", "%s_n%d" % (dt, n), torch.median, x)
    xn = T([[3.0, nan, 1.0, 2.0, nan], [5.0, 1.5, 4.0, 2.0, 0.0], [nan, nan, nan, nan, nan]],
           "float32")
    w.case("median_dim", "float32_nan", med, xn, Int(1), Int(0))
    w.case("nanmedian_dim", "float32_nan", nanmed, xn[:2], Int(1), Int(0))
    w.case("nanmedian_dim", "float64_plain", nanmed, distinct(g, 4, 5), Int(0), Int(1))
    w.case("median", "float32_nan", torch.median, xn)
    w.case("nanmedian", "float32_nan", torch.nanmedian, xn)
    w.case("nanmedian", "float64", torch.nanmedian, distinct(g, 6))

    for dt in ["float32", "float64", "int32", "int64", "bool", "uint8"]:
        if dt == "bool":
            x = torch.rand(3, 6, generator=g) > 0.5
        else:
            x = torch.randint(0, 6, (3, 6), generator=g).to(DTYPES[dt])
        for dim in [0, 1]:
            w.case("cummax", "%s_d%d" % (dt, dim), torch.cummax, x, Int(dim))
            w.case("cummin", "%s_d%d" % (dt, dim), torch.cummin, x, Int(dim))
    xn = T([[1.0, nan, 2.0, nan, 5.0], [3.0, 3.0, -inf, 4.0, inf]], "float32")
    w.case("cummax", "float32_nan", torch.cummax, xn, Int(1))
    w.case("cummin", "float32_nan", torch.cummin, xn, Int(1))
    w.case("cummax", "float64_0dim", torch.cummax, T(2.0, "float64"), Int(0))

    def ss(seq, v, out_int32, right):
        return torch.searchsorted(seq, v, out_int32=bool(out_int32), right=bool(right))

    seq = T([-1.0, 0.0, 0.0, 2.5, 4.0], "float32")
    vals = T([[-3.0, 0.0, 1.0], [2.5, 4.0, 9.0]], "float32")
    for oi, right in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        w.case("searchsorted", "float32_%d_%d" % (oi, right), ss, seq, vals, Int(oi), Int(right))
    seq2 = torch.sort(torch.randint(0, 10, (2, 6), generator=g), dim=1)[0]
    w.case("searchsorted", "int64_2d", ss, seq2, torch.randint(-1, 11, (2, 4), generator=g),
           Int(0), Int(1))
    w.case("searchsorted", "mixed_int_float", ss, T([1, 3, 5, 7], "int64"),
           T([0.5, 3.0, 6.5], "float64"), Int(0), Int(0))
    w.case("bucketize", "float32", lambda v, b, r: torch.bucketize(v, b, right=bool(r)), vals,
           seq, Int(0))
    w.case("bucketize", "float32_right", lambda v, b, r: torch.bucketize(v, b, right=bool(r)),
           vals, seq, Int(1))

    def uniq(t, inverse, counts):
        return torch._unique2(t, True, bool(inverse), bool(counts))

    def uniq_consec(t, inverse, counts):
        return torch.unique_consecutive(t, return_inverse=bool(inverse),
                                        return_counts=bool(counts))

    for dt in ["float32", "int64", "uint8", "bool"]:
        x = torch.randint(0, 4, (3, 5), generator=g)
        x = (x > 1) if dt == "bool" else x.to(DTYPES[dt])
        for inv, cnt in [(1, 1), (0, 0), (1, 0)]:
            w.case("unique", "%s_%d_%d" % (dt, inv, cnt), uniq, x, Int(inv), Int(cnt))
            w.case("unique_consecutive", "%s_%d_%d" % (dt, inv, cnt), uniq_consec, x, Int(inv),
                   Int(cnt))
    w.case("unique", "float32_empty", uniq, torch.zeros(0), Int(1), Int(1))

    def mode(t, dim, keep):
        return torch.mode(t, dim, bool(keep))

    # lines under 16 elements: PyTorch's CPU sort of them is stable, so its index is the last
    for dt in ["float32", "int64", "uint8", "bool"]:
        x = torch.randint(0, 4, (3, 7), generator=g)
        x = (x > 1) if dt == "bool" else x.to(DTYPES[dt])
        for dim, keep in [(1, 0), (0, 1), (-1, 1)]:
            w.case("mode", "%s_d%d_%d" % (dt, dim % 2, keep), mode, x, Int(dim), Int(keep))
    w.case("mode", "float32_0dim", mode, T(1.5, "float32"), Int(0), Int(0))


def main():
    w = cg.Writer()
    write_sort(w)
    write_selection(w)
    import make_select_golden  # noqa: E402 (beside this script)
    make_select_golden.write(w, cg, EINSUM_EQUATIONS)
    path = os.path.join(HERE, "conformance_sort_cases.txt")
    with open(path, "w") as f:
        f.write("# PyTorch %s outputs for kiln's sorting, selection and einsum cases; written by "
                "make_sort_golden.py (format: make_conformance_golden.py's docstring)\n"
                % torch.__version__)
        for s in w.skipped:
            f.write("# skipped (PyTorch lacks it): %s\n" % s)
        f.write("\n".join(w.lines) + "\n")
    print("conformance_sort_cases.txt: %d cases (%d skipped)" % (w.count, len(w.skipped)))


if __name__ == "__main__":
    main()
