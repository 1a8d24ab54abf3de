#!/usr/bin/python3
"""Writes conformance_activation_cases.txt: PyTorch's outputs for the conformance cases of issue
15's remaining activations and pointwise math (elu, selu, celu, hardtanh, relu6, hardswish,
hardsigmoid, threshold, prelu, rrelu, glu, softmin; atan2, logaddexp, logaddexp2, hypot,
copysign, xlogy, lerp, addcmul, addcdiv, nan_to_num, sgn, deg2rad, rad2deg, clamp with tensor
bounds), in the format of make_conformance_golden.py (whose Writer it uses), and grad_activation_
cases.txt: their input gradients in float64, in the format of make_grad_golden.py. A file of its
own, so that conformance_cases.txt is never regenerated. Run with Debian's python3-torch 1.13:

    /usr/bin/python3 tests/golden/make_activation_golden.py

tools/conformance/golden.cpp reads both conformance files; tests/nn/test_activations2.cpp reads
the gradients.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_conformance_golden import FLOATS, Int, Num, T, Writer  # noqa: E402

nan, inf = math.nan, math.inf
ACT = [-1e4, -3.0, -2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 2.5, 3.0, 6.0, 1e4, -inf, inf, nan]


def write_activations(w):
    for dt in FLOATS:
        x = T(ACT, dt)
        for alpha in [1.0, 0.5, -0.5]:
            w.case("elu", f"{dt}_{alpha}", lambda t, a: F.elu(t, a), x, Num(alpha))
        w.case("selu", dt, F.selu, x)
        for alpha in [1.0, 2.0]:
            w.case("celu", f"{dt}_{alpha}", lambda t, a: F.celu(t, a), x, Num(alpha))
        for lo, hi in [(-1.0, 1.0), (-2.5, 0.5)]:
            w.case("hardtanh", f"{dt}_{lo}_{hi}", F.hardtanh, x, Num(lo), Num(hi))
        w.case("relu6", dt, F.relu6, x)
        w.case("hardswish", dt, F.hardswish, x)
        w.case("hardsigmoid", dt, F.hardsigmoid, x)
        w.case("threshold", dt, F.threshold, x, Num(0.5), Num(-2.0))
        w.case("rrelu_eval", dt, lambda t: F.rrelu(t, 0.1, 0.3, training=False), x)
        w.case("sgn", dt, torch.sgn, x)
        w.case("deg2rad", dt, torch.deg2rad, T([-360.0, -90.0, 0.0, 45.0, 180.0, inf, nan], dt))
        w.case("rad2deg", dt, torch.rad2deg, T([-6.5, -1.0, 0.0, 0.5, 3.0, inf, nan], dt))
        w.case("nan_to_num", dt, torch.nan_to_num, T([-inf, -1.5, 0.0, 2.5, inf, nan], dt))
        w.case("nan_to_num_values", dt, lambda t: torch.nan_to_num(t, 1.5, 100.0, -200.0),
               T([-inf, -1.5, 0.0, 2.5, inf, nan], dt))
        g = torch.arange(-12, 12, dtype=torch.float64).reshape(4, 6) / 4
        w.case("glu", dt + "_last", F.glu, g.to(torch.__dict__[dt]), Int(-1))
        w.case("glu", dt + "_0", F.glu, g.to(torch.__dict__[dt]), Int(0))
        w.case("softmin", dt, lambda t, d: F.softmin(t, d), g.to(torch.__dict__[dt]), Int(1))
        p = torch.arange(-12, 12, dtype=torch.float64).reshape(2, 3, 4) / 5
        w.case("prelu", dt + "_channels", F.prelu, p.to(torch.__dict__[dt]),
               T([0.25, -0.5, 2.0], dt))
        w.case("prelu", dt + "_one", F.prelu, p.to(torch.__dict__[dt]), T([0.1], dt))
        w.case("prelu", dt + "_1d", F.prelu, T([-2.0, -0.5, 0.0, 1.5], dt), T([0.3], dt))
    # integer tensors: hardtanh and relu6 clamp with integer bounds; threshold keeps the dtype
    for dt in ["uint8", "int32", "int64"]:
        v = [0, 1, 2, 5, 7, 100] if dt == "uint8" else [-7, -2, -1, 0, 1, 2, 5, 7, 100]
        if dt != "uint8":
            w.case("hardtanh", dt + "_int", F.hardtanh, T(v, dt), Num(-1.5), Num(2.5))
        w.case("relu6", dt, F.relu6, T(v, dt))
        w.case("threshold", dt, F.threshold, T(v, dt), Num(2), Num(10))
        w.case("threshold", dt + "_float", F.threshold, T(v, dt), Num(1.5), Num(-1))
        w.case("nan_to_num", dt, torch.nan_to_num, T(v, dt))
        w.case("deg2rad", dt, torch.deg2rad, T(v, dt))
        w.case("rad2deg", dt, torch.rad2deg, T(v, dt))
        w.case("sgn", dt, torch.sgn, T(v, dt))


def write_binary(w):
    a_vals = [[-2.0], [-0.5], [-0.0], [0.0], [1.0], [3.0], [inf], [-inf], [nan]]
    b_vals = [-1.5, -0.0, 0.0, 0.5, 2.0, inf, -inf, nan]
    for dt in FLOATS:
        a, b = T(a_vals, dt), T(b_vals, dt)
        for op in ["atan2", "logaddexp", "logaddexp2", "hypot", "copysign", "xlogy"]:
            w.case(op, dt, getattr(torch, op), a, b)
    for op in ["atan2", "copysign", "xlogy"]:
        fn = getattr(torch, op)
        w.case(op, "int32", fn, T([[-3], [0], [2]], "int32"), T([-2, 0, 5], "int32"))
        w.case(op, "int64_float32", fn, T([[-3], [0], [2]], "int64"), T([-2.5, 0.5], "float32"))
        w.case(op, "bool", fn, T([[True], [False]], "bool"), T([True, False], "bool"))
    w.case("copysign_scalar", "float32", torch.copysign, T([-2.0, -0.0, 0.0, 3.0], "float32"),
           Num(-1.0))
    w.case("xlogy_scalar", "float32", torch.xlogy, T([-2.0, 0.0, 3.0, nan], "float32"), Num(2.5))


def write_ternary(w):
    for dt in FLOATS:
        s = T([[-2.0], [0.0], [1.5], [inf]], dt)
        e = T([4.0, -1.0, 0.5], dt)
        wt = T([[0.0, 0.25, 0.5]], dt).expand(2, 3).contiguous() * T([[1.0], [2.0]], dt)
        w.case("lerp", dt, torch.lerp, T([[-2.0, 0.0, 1.5], [3.0, -1.0, 7.0]], dt), e, wt)
        for weight in [0.3, 0.75, -1.5]:
            w.case("lerp_scalar", f"{dt}_{weight}", torch.lerp, s, e, Num(weight))
        t1, t2 = T([[1.0], [-2.0], [0.5]], dt), T([3.0, -0.25, 0.0, 2.0], dt)
        for value in [1, 0.5, -2.0]:
            w.case("addcmul", f"{dt}_{value}", lambda a, b, c, v: torch.addcmul(a, b, c, value=v),
                   T([0.5, -1.0, 2.0, 4.0], dt), t1, t2, Num(value))
            w.case("addcdiv", f"{dt}_{value}", lambda a, b, c, v: torch.addcdiv(a, b, c, value=v),
                   T([0.5, -1.0, 2.0, 4.0], dt), t1, t2, Num(value))
    for dt in ["int32", "int64", "uint8"]:
        w.case("addcmul", dt, lambda a, b, c, v: torch.addcmul(a, b, c, value=v),
               T([1, 2, 3], dt), T([[1], [4]], dt), T([2, 3, 5], dt), Num(3))
    w.case("addcmul", "int32_float32", lambda a, b, c, v: torch.addcmul(a, b, c, value=v),
           T([1, 2, 3], "int32"), T([[1.5], [4.0]], "float32"), T([2, 3, 5], "int32"), Num(2))
    w.case("addcdiv", "int32_float32", lambda a, b, c, v: torch.addcdiv(a, b, c, value=v),
           T([1, 2, 3], "int32"), T([[1.5], [4.0]], "float32"), T([2, 3, 5], "int32"), Num(2))
    for dt in FLOATS:
        x = T([-3.0, -1.0, 0.0, 0.5, 2.0, 9.0, nan], dt)
        lo = T([-1.0, 0.0, 0.5, 1.0, -5.0, 3.0, 0.0], dt)
        w.case("clamp_tensor", dt, lambda a, b, c: torch.clamp(a, b, c), x, lo, T([2.0], dt))
        w.case("clamp_tensor", dt + "_nan_bound", lambda a, b, c: torch.clamp(a, b, c),
               T([-1.0, 0.0, 5.0], dt), T([nan, -2.0, 0.0], dt), T([1.0, nan, 2.0], dt))
    w.case("clamp_tensor", "int32", lambda a, b, c: torch.clamp(a, b, c),
           T([[-5], [0], [5]], "int32"), T([-1, 1], "int32"), T([3], "int32"))


# --- gradients (float64, double backward not included) --------------------------------------
# name: (function of the input list, shapes, lo, hi)
GRADS = {
    "elu": (lambda x: F.elu(x[0], 0.7), [[(3, 4)]], -2, 2),
    "elu_negative_alpha": (lambda x: F.elu(x[0], -0.5), [[(3, 4)]], -2, 2),
    "selu": (lambda x: F.selu(x[0]), [[(3, 4)]], -2, 2),
    "celu": (lambda x: F.celu(x[0], 1.5), [[(3, 4)]], -2, 2),
    "hardtanh": (lambda x: F.hardtanh(x[0], -0.5, 0.75), [[(3, 4)]], -1, 1),
    "relu6": (lambda x: F.relu6(x[0] * 8 - 1), [[(3, 4)]], -1, 1),
    "hardswish": (lambda x: F.hardswish(x[0] * 5), [[(3, 4)]], -1, 1),
    "hardsigmoid": (lambda x: F.hardsigmoid(x[0] * 5), [[(3, 4)]], -1, 1),
    "threshold": (lambda x: F.threshold(x[0], 0.1, -3.0), [[(3, 4)]], -1, 1),
    "prelu": (lambda x: F.prelu(x[0], x[1]), [[(2, 3, 4), (3,)], [(5, 3), (1,)]], -1, 1),
    "glu": (lambda x: F.glu(x[0], 1), [[(3, 4)]], -1, 1),
    "softmin": (lambda x: F.softmin(x[0], 1), [[(3, 4)]], -1, 1),
    "atan2": (lambda x: torch.atan2(x[0], x[1]), [[(3, 4), (4,)]], -1, 1),
    "logaddexp": (lambda x: torch.logaddexp(x[0], x[1]), [[(3, 4), (4,)]], -1, 1),
    "logaddexp2": (lambda x: torch.logaddexp2(x[0], x[1]), [[(3, 4), (4,)]], -1, 1),
    "hypot": (lambda x: torch.hypot(x[0], x[1]), [[(3, 4), (4,)]], -1, 1),
    "copysign": (lambda x: torch.copysign(x[0], x[1]), [[(3, 4), (4,)]], -1, 1),
    "xlogy": (lambda x: torch.xlogy(x[0], x[1] + 1.5), [[(3, 4), (4,)]], -1, 1),
    "lerp": (lambda x: torch.lerp(x[0], x[1], x[2]), [[(3, 4), (4,), (3, 1)]], -1, 1),
    "lerp_scalar": (lambda x: torch.lerp(x[0], x[1], 0.3), [[(3, 4), (4,)]], -1, 1),
    "addcmul": (lambda x: torch.addcmul(x[0], x[1], x[2], value=0.5), [[(3, 4), (4,), (3, 1)]],
                -1, 1),
    "addcdiv": (lambda x: torch.addcdiv(x[0], x[1], x[2] + 2, value=-1.5),
                [[(3, 4), (4,), (3, 1)]], -1, 1),
    "clamp_tensor": (lambda x: torch.clamp(x[0], x[1], x[2] + 0.5), [[(3, 4), (4,), (3, 1)]], -1,
                     1),
    "nan_to_num": (lambda x: torch.nan_to_num(torch.log(x[0])), [[(3, 4)]], -1, 1),
}


def fmt(t):
    return " ".join(repr(v) for v in t.detach().double().reshape(-1).tolist())


def shaped(t):
    return " ".join([str(t.dim())] + [str(s) for s in t.shape] + [fmt(t)])


def write_grads(path):
    gen = torch.Generator().manual_seed(20261128)
    lines = ["# PyTorch %s forward results and input gradients (float64); written by "
             "make_activation_golden.py (format: make_grad_golden.py's docstring)"
             % torch.__version__]
    for name, (fn, shape_sets, lo, hi) in GRADS.items():
        for shapes in shape_sets:
            inputs = [(torch.rand(s, generator=gen, dtype=torch.float64) * (hi - lo) + lo)
                      .requires_grad_() for s in shapes]
            out = fn(inputs)
            gout = torch.rand(out.shape, generator=gen, dtype=torch.float64) * 2 - 1
            grads = torch.autograd.grad(out, inputs, gout, allow_unused=True)
            lines.append("case %s %d" % (name, len(inputs)))
            lines += ["in " + shaped(t) for t in inputs]
            lines.append("gout " + shaped(gout))
            lines.append("out " + shaped(out))
            for i, g in enumerate(grads):
                lines.append("grad %d %s" % (i, "none" if g is None else fmt(g)))
            lines.append("end")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(lines)


def main():
    w = Writer()
    write_activations(w)
    write_binary(w)
    write_ternary(w)
    path = os.path.join(HERE, "conformance_activation_cases.txt")
    with open(path, "w") as f:
        f.write("# PyTorch %s outputs for kiln's conformance cases of issue 15's activations and "
                "pointwise math; written by make_activation_golden.py\n" % torch.__version__)
        for s in w.skipped:
            f.write("# skipped (PyTorch lacks it): %s\n" % s)
        f.write("\n".join(w.lines) + "\n")
    n = write_grads(os.path.join(HERE, "grad_activation_cases.txt"))
    print("conformance_activation_cases.txt: %d cases (%d skipped); grad_activation_cases.txt: "
          "%d lines" % (w.count, len(w.skipped), n))


if __name__ == "__main__":
    main()
