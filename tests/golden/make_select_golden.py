"""The selection, diagonal, product and einsum records of conformance_sort_cases.txt (written by
make_sort_golden.py, which calls write())."""
import torch


def write(w, cg, equations):
    T, Int, Num, DTYPES = cg.T, cg.Int, cg.Num, cg.DTYPES
    g = torch.Generator().manual_seed(17)

    def rnd(*sizes, dt="float64"):
        if dt in cg.INTS:
            return torch.randint(-3, 4, sizes, generator=g).to(DTYPES[dt])
        return (torch.rand(*sizes, generator=g, dtype=torch.float64) * 4 - 2).to(DTYPES[dt])

    # meshgrid: int 0 (no indexing), 1 ("ij") or 2 ("xy")
    def mesh(*args):
        *ts, mode = args
        if mode == 0:
            return torch.meshgrid(*ts, indexing="ij")
        return torch.meshgrid(*ts, indexing="ij" if mode == 1 else "xy")
    a, b, c = T([1, 2, 3], "int64"), T([4.0, 5.0], "float32"), T([7, 8, 9, 10], "int64")
    for mode in [0, 1, 2]:
        w.case("meshgrid", "two_%d" % mode, mesh, a, c, Int(mode))
        w.case("meshgrid", "three_%d" % mode, mesh, a, c, T([0, 1], "int64"), Int(mode))
    w.case("meshgrid", "one_float_2", mesh, b, Int(2))

    for dt in ["float32", "int64", "bool"]:
        x = rnd(3, 4, dt="float32") if dt != "bool" else torch.rand(3, 4, generator=g) > 0.5
        if dt == "int64":
            x = rnd(3, 4, dt="int64")
        mask = torch.rand(3, 4, generator=g) > 0.4
        w.case("masked_select", dt, torch.masked_select, x, mask)
        w.case("masked_select", dt + "_broadcast", torch.masked_select, x, mask[0])
        src = torch.arange(20).to(x.dtype).reshape(4, 5) if dt != "bool" else torch.rand(
            20, generator=g) > 0.5
        w.case("masked_scatter", dt, torch.masked_scatter, x, mask, src)
        w.case("masked_scatter", dt + "_broadcast", torch.masked_scatter, x, mask[1:2], src)

    x = rnd(3, 5)
    for dim, idx in [(0, [0, 2]), (1, [4, -1, 1]), (-1, [])]:
        w.case("index_fill", "d%d_%d" % (dim % 2, len(idx)),
               lambda t, d, i, v: torch.index_fill(t, d, i, v), x, Int(dim), T(idx, "int64"),
               Num(2.5))
    w.case("index_fill", "int64", lambda t, d, i, v: torch.index_fill(t, d, i, v),
           rnd(2, 4, dt="int64"), Int(1), T([1, 3], "int64"), Num(-7))
    w.case("take", "float64", torch.take, x, T([[0, 14], [-1, 7]], "int64"))
    w.case("take", "int32", torch.take, rnd(2, 3, dt="int32"), T([5, 0, -6, 2], "int64"))
    ind = torch.argsort(x, dim=1)
    w.case("take_along_dim", "d1", lambda t, i, d: torch.take_along_dim(t, i, d), x, ind, Int(1))
    w.case("take_along_dim", "broadcast", lambda t, i, d: torch.take_along_dim(t, i, d), x,
           T([[0], [4], [2]], "int64").expand(3, 2).contiguous()[:, :1], Int(1))
    w.case("take_along_dim", "flat", lambda t, i: torch.take_along_dim(t, i), x,
           T([3, 0, 14], "int64"))
    y = torch.randint(-1, 2, (3, 4, 2), generator=g).to(torch.float32)
    w.case("count_nonzero", "all", lambda t: torch.count_nonzero(t), y)
    w.case("count_nonzero", "d1", lambda t, d: torch.count_nonzero(t, d), y, Int(1))
    w.case("count_nonzero", "d02", lambda t, d0, d1: torch.count_nonzero(t, (d0, d1)), y, Int(0),
           Int(2))

    # diagonals: offset, dim1, dim2
    z = rnd(3, 4, 5)
    for off, d1, d2 in [(0, 0, 1), (1, 0, 1), (-2, 0, 1), (2, 1, 2), (0, 2, 0), (-1, -1, -3),
                        (9, 0, 1)]:
        w.case("diagonal", "o%d_%d_%d" % (off, d1 % 3, d2 % 3), torch.diagonal, z, Int(off),
               Int(d1), Int(d2))
    v = rnd(2, 3)
    for off, d1, d2 in [(0, -2, -1), (1, 0, 2), (-2, 2, 0), (1, 1, 2)]:
        w.case("diag_embed", "o%d_%d_%d" % (off, d1 % 3, d2 % 3), torch.diag_embed, v, Int(off),
               Int(d1), Int(d2))
    for off in [0, 2, -1]:
        w.case("diag", "vec_%d" % off, torch.diag, rnd(3), Int(off))
        w.case("diag", "mat_%d" % off, torch.diag, rnd(3, 4), Int(off))
    w.case("trace", "float64", torch.trace, rnd(4, 3))
    w.case("trace", "int64", torch.trace, rnd(3, 3, dt="int64"))

    for dt in ["float32", "float64"]:
        w.case("vdot", dt, torch.vdot, rnd(5, dt=dt), rnd(5, dt=dt))
        w.case("mv", dt, torch.mv, rnd(3, 5, dt=dt), rnd(5, dt=dt))
        w.case("outer", dt, torch.outer, rnd(3, dt=dt), rnd(4, dt=dt))
        for beta, alpha in [(1, 1), (0.5, -2.0), (0, 1.5)]:
            lab = "%s_b%s_a%s" % (dt, str(beta).replace(".", "p"), str(alpha).replace(".", "p")
                                  .replace("-", "m"))
            bn, an = Num(beta), Num(alpha)
            w.case("addmv", lab, lambda s, m, vv, bt, al: torch.addmv(s, m, vv, beta=bt, alpha=al),
                   rnd(3, dt=dt), rnd(3, 4, dt=dt), rnd(4, dt=dt), bn, an)
            w.case("addr", lab, lambda s, x1, x2, bt, al: torch.addr(s, x1, x2, beta=bt, alpha=al),
                   rnd(3, 1, dt=dt), rnd(3, dt=dt), rnd(2, dt=dt), bn, an)
            w.case("baddbmm", lab,
                   lambda s, b1, b2, bt, al: torch.baddbmm(s, b1, b2, beta=bt, alpha=al),
                   rnd(2, 3, 5, dt=dt), rnd(2, 3, 4, dt=dt), rnd(2, 4, 5, dt=dt), bn, an)
            w.case("addbmm", lab,
                   lambda s, b1, b2, bt, al: torch.addbmm(s, b1, b2, beta=bt, alpha=al),
                   rnd(5, dt=dt), rnd(3, 2, 4, dt=dt), rnd(3, 4, 5, dt=dt), bn, an)
    nan_self = T([[float("nan"), 1.0]], "float32")
    w.case("baddbmm", "beta0_nan", lambda s, b1, b2, bt, al: torch.baddbmm(s, b1, b2, beta=bt,
                                                                           alpha=al),
           nan_self, rnd(2, 2, 3, dt="float32"), rnd(2, 3, 2, dt="float32"), Num(0), Num(1))
    w.case("cross", "d1", lambda p, q, d: torch.cross(p, q, d), rnd(2, 3), rnd(2, 3), Int(1))
    w.case("cross", "d0_broadcast", lambda p, q, d: torch.cross(p, q, d), rnd(3, 4), rnd(3, 1),
           Int(0))
    w.case("cross", "default", lambda p, q: torch.cross(p, q), rnd(4, 3, 3), rnd(4, 3, 3))
    w.case("cross", "int64", lambda p, q, d: torch.cross(p, q, d), rnd(3, dt="int64"),
           rnd(3, dt="int64"), Int(0))

    shapes = [
        [(3, 4), (4, 5)], [(2, 3, 4), (2, 4, 5)], [(3,), (4,)], [(4, 4)], [(4, 4)], [(5,), (5,)],
        [(3, 4)], [(3, 4)], [(3, 4)], [(2, 3), (5, 3, 4), (2, 4)],
        [(2, 1, 3, 4), (5, 4, 2)], [(2, 3, 4), (2, 3, 4)], [(3, 4), (3, 4)], [(2, 3, 4)],
        [(3, 3, 2)], [(2, 2, 3, 4), (2, 2, 5, 4)], [(2,), (3, 4)], [(3, 4), (4, 2)],
    ]
    assert len(shapes) == len(equations)
    for i, (eq, sz) in enumerate(zip(equations, shapes)):
        for dt in ["float64", "float32"]:
            ops = [rnd(*s, dt=dt) for s in sz]
            w.case("einsum", "eq%d_%s" % (i, dt), lambda k, *ts: torch.einsum(equations[k], *ts),
                   Int(i), *ops)
    w.case("einsum", "eq0_int64", lambda k, *ts: torch.einsum(equations[k], *ts), Int(0),
           rnd(3, 4, dt="int64"), rnd(4, 5, dt="int64"))

    w.case("cartesian_prod", "three", lambda *ts: torch.cartesian_prod(*ts), a, c,
           T([0, 1], "int64"))
    w.case("cartesian_prod", "one", lambda *ts: torch.cartesian_prod(*ts), b)
    for r, rep in [(2, 0), (3, 0), (2, 1), (1, 0), (0, 0)]:
        w.case("combinations", "r%d_%d" % (r, rep),
               lambda t, rr, wr: torch.combinations(t, rr, bool(wr)), T([1.5, 2.5, -1.0, 4.0],
                                                                      "float32"), Int(r), Int(rep))
    xb = T([0, 3, 1, 1, 5, 3, 3], "int64")
    w.case("bincount", "plain", lambda t, m: torch.bincount(t, minlength=m), xb, Int(0))
    w.case("bincount", "minlength", lambda t, m: torch.bincount(t, minlength=m), xb, Int(9))
    w.case("bincount", "weights_f32", lambda t, ww, m: torch.bincount(t, ww, m), xb,
           rnd(7, dt="float32"), Int(0))
    w.case("bincount", "weights_int", lambda t, ww, m: torch.bincount(t, ww, m), xb,
           rnd(7, dt="int64"), Int(2))
    w.case("bincount", "empty", lambda t, m: torch.bincount(t, minlength=m),
           torch.zeros(0, dtype=torch.int64), Int(3))
    hx = T([1.0, 2.0, 1.0, 4.0, 2.5, -3.0, 7.25, 0.0], "float32")
    for bins, lo, hi in [(4, 0, 0), (5, 0, 4), (3, -1, 1), (10, -5, 10)]:
        w.case("histc", ("b%d_%d_%d" % (bins, lo, hi)).replace("-", "m"),
               lambda t, bb, mn, mx: torch.histc(t, bb, mn, mx), hx, Int(bins), Num(float(lo)),
               Num(float(hi)))
    w.case("histc", "float64", lambda t, bb, mn, mx: torch.histc(t, bb, mn, mx), rnd(20), Int(6),
           Num(0.0), Num(0.0))
