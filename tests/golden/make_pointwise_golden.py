#!/usr/bin/python3
"""Writes pointwise_cases.txt: PyTorch's results for the edge cases of the scalar formulas in
sdk/include/kiln/sdk/pointwise.hpp (tests/sdk/test_pointwise.cpp reads it). Run with a Python
that has torch (Debian's python3-torch 1.13):

    /usr/bin/python3 tests/golden/make_pointwise_golden.py

One case a line, each computed on one-element tensors:

    <op> <dtype> <inputs...> = <output>       the output in the op's result dtype
    <op> <dtype> <inputs...> ! <message>      PyTorch raises; the message of its error

Values: bool as 0/1, integers in decimal, floats as Python's repr (nan, inf, -inf, -0.0).
add/sub take a third input, alpha; clamp takes x, min and max. Pairs PyTorch itself cannot
compute are left out: INT_MIN // -1 and INT_MIN % -1 on int32/int64 trap (SIGFPE) in PyTorch,
where kiln wraps; so are those where PyTorch's result depends on its code path (see below).
"""
import itertools
import math
import os

import torch

DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int32": torch.int32,
    "int64": torch.int64, "float32": torch.float32, "float64": torch.float64,
}
INF, NAN = math.inf, math.nan
VALUES = {
    "bool": [False, True],
    "uint8": [0, 1, 7, 255],
    "int8": [-128, -7, -1, 0, 1, 7, 127],
    "int32": [-2**31, -7, -1, 0, 3, 2**31 - 1],
    "int64": [-2**63, -7, -1, 0, 3, 2**63 - 1],
    "float32": [NAN, -INF, -7.5, -1.0, -0.0, 0.0, 0.5, 3.0, INF],
    "float64": [NAN, -INF, -7.5, -1.0, -0.0, 0.0, 0.5, 3.0, INF],
}
# transcendental functions: only inputs whose results are exact in every libm
SPECIAL = [NAN, -INF, -0.0, 0.0, INF]
INTEGRAL = ["uint8", "int8", "int32", "int64"]
FLOATING = ["float32", "float64"]
NUMERIC = INTEGRAL + FLOATING
ALL = ["bool"] + NUMERIC

UNARY = {
    "neg": (torch.neg, NUMERIC), "abs": (torch.abs, NUMERIC), "sign": (torch.sign, ALL),
    "relu": (torch.relu, NUMERIC), "bitwise_not": (torch.bitwise_not, ["bool"] + INTEGRAL),
    "logical_not": (torch.logical_not, ALL),
}
TRANSCENDENTAL = {
    "exp": torch.exp, "log": torch.log, "log1p": torch.log1p, "expm1": torch.expm1,
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos,
    "tanh": torch.tanh, "sigmoid": torch.sigmoid,
}
# issue 15: math functions and activations, on inputs whose results are exact in every libm
MATH = {
    "floor": (torch.floor, NUMERIC, [-2.5, -0.5, 0.5, 2.5]),
    "ceil": (torch.ceil, NUMERIC, [-2.5, -0.5, 0.5, 2.5]),
    "round": (torch.round, NUMERIC, [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]),
    "trunc": (torch.trunc, NUMERIC, [-2.5, -0.5, 0.5, 2.5]),
    "frac": (torch.frac, FLOATING, [-2.75, 0.25, 3.0]),
    "reciprocal": (torch.reciprocal, FLOATING, [-2.0, 0.5, 4.0]),
    "log2": (torch.log2, FLOATING, [-1.0, 1.0, 0.5, 8.0]),
    "log10": (torch.log10, FLOATING, [-1.0, 1.0, 1000.0]),
    "exp2": (torch.exp2, FLOATING, [-1.0, 3.0]),
    "tan": (torch.tan, FLOATING, []),
    "sinh": (torch.sinh, FLOATING, []),
    "cosh": (torch.cosh, FLOATING, []),
    "asin": (torch.asin, FLOATING, [-2.0, 2.0]),
    "acos": (torch.acos, FLOATING, [-2.0, 1.0]),
    "atan": (torch.atan, FLOATING, []),
    "asinh": (torch.asinh, FLOATING, []),
    "acosh": (torch.acosh, FLOATING, [0.5, 1.0]),
    "atanh": (torch.atanh, FLOATING, [-2.0, -1.0, 1.0]),
    "erf": (torch.erf, FLOATING, [-30.0, 30.0]),
    "erfc": (torch.erfc, FLOATING, [30.0]),
    "erfinv": (torch.erfinv, FLOATING, [-2.0, -1.0, 1.0, 2.0]),
    "silu": (torch.nn.functional.silu, FLOATING, [-1000.0, 1000.0]),
    "mish": (torch.nn.functional.mish, FLOATING, [-1000.0, 1000.0]),
}
BINARY = {
    "mul": (torch.mul, ALL), "div": (torch.div, FLOATING),
    "floor_divide": (torch.floor_divide, NUMERIC), "remainder": (torch.remainder, NUMERIC),
    "fmod": (torch.fmod, NUMERIC), "pow": (torch.pow, NUMERIC),
    "maximum": (torch.maximum, ALL), "minimum": (torch.minimum, ALL),
    "bitwise_and": (torch.bitwise_and, ["bool"] + INTEGRAL),
    "bitwise_or": (torch.bitwise_or, ["bool"] + INTEGRAL),
    "bitwise_xor": (torch.bitwise_xor, ["bool"] + INTEGRAL),
    "eq": (torch.eq, ALL), "ne": (torch.ne, ALL), "lt": (torch.lt, ALL), "le": (torch.le, ALL),
    "gt": (torch.gt, ALL), "ge": (torch.ge, ALL),
    "logical_and": (torch.logical_and, ALL), "logical_or": (torch.logical_or, ALL),
    "logical_xor": (torch.logical_xor, ALL),
}


def text(v):
    if isinstance(v, bool):
        return str(int(v))
    return repr(v)


def scalar(t):
    return t.item() if t.dtype != torch.bool else bool(t.item())


def case(lines, op, dtype, f, args):
    tensors = [torch.tensor([a], dtype=DTYPES[dtype]) for a in args]
    if op == "pow" and dtype in INTEGRAL and args[1] < 0:
        # kiln raises for every negative integer exponent, as PyTorch does for a number exponent
        # (PyTorch 1.13 gives 0, 1 or -1 for a tensor exponent)
        tensors[1] = args[1]
    head = f"{op} {dtype} " + " ".join(text(a) for a in args)
    try:
        out = f(*tensors)
    except RuntimeError as e:
        lines.append(f"{head} ! {str(e).splitlines()[0]}")
        return
    lines.append(f"{head} = {text(scalar(out))}")


def main():
    lines = []
    for op, (f, dtypes) in UNARY.items():
        for dtype in dtypes:
            for x in VALUES[dtype]:
                case(lines, op, dtype, f, [x])
    for op, f in TRANSCENDENTAL.items():
        for dtype in FLOATING:
            for x in SPECIAL + ([-1000.0, 1000.0] if op == "sigmoid" else []):
                case(lines, op, dtype, f, [x])
    for op, (f, dtypes, extra) in MATH.items():
        for dtype in dtypes:
            values = SPECIAL + extra if dtype in FLOATING else VALUES[dtype]
            for x in values:
                case(lines, op, dtype, f, [x])
    # activations with a parameter: inputs x, parameter (gelu's: 1 for the tanh approximation)
    F = torch.nn.functional
    params = {
        "gelu": (lambda x, p: F.gelu(x, approximate="tanh" if p else "none"), [0, 1]),
        "leaky_relu": (F.leaky_relu, [0.5, 2.0]),
        "hardshrink": (F.hardshrink, [0.5, 3.0]),
        "softshrink": (F.softshrink, [0.5, 3.0]),
    }
    for op, (f, values) in params.items():
        for dtype in FLOATING:
            for x in SPECIAL + ([-3.0, -0.5, 0.5, 3.0] if op != "gelu" else []):
                for p in values:
                    out = f(torch.tensor([x], dtype=DTYPES[dtype]), p)
                    lines.append(f"{op} {dtype} {text(x)} {text(p)} = {text(scalar(out))}")
    for op, (f, dtypes) in BINARY.items():
        for dtype in dtypes:
            for a, b in itertools.product(VALUES[dtype], repeat=2):
                traps = (dtype in ("int32", "int64") and b == -1 and a == VALUES[dtype][0]
                         and op in ("floor_divide", "remainder", "fmod"))
                # max/min of +0.0 and -0.0: PyTorch's scalar loop returns a, its vectorized one
                # (like kiln) b
                zeros = op in ("maximum", "minimum") and a == 0 and b == 0 and dtype in FLOATING
                if not traps and not zeros:
                    case(lines, op, dtype, f, [a, b])
    for dtype in ALL:
        for alpha in ([True, False] if dtype == "bool" else [1, -1, 3]):
            for a, b in itertools.product(VALUES[dtype][:4], repeat=2):
                x, y = (torch.tensor([v], dtype=DTYPES[dtype]) for v in (a, b))
                lines.append(f"add {dtype} {text(a)} {text(b)} {text(alpha)} = "
                             f"{text(scalar(torch.add(x, y, alpha=alpha)))}")
                if dtype != "bool":
                    lines.append(f"sub {dtype} {text(a)} {text(b)} {text(alpha)} = "
                                 f"{text(scalar(torch.sub(x, y, alpha=alpha)))}")
    for dtype in NUMERIC:
        # kiln saturates integer bounds outside the dtype (uint8 at -2 is 0), PyTorch 1.13 wraps
        # them (to 254): no such bound here
        bounds = [(2 if dtype == "uint8" else -2, 3), (5, 1)]
        bounds += [(-1.5, 0.5), (NAN, 1.0)] if dtype in FLOATING else []
        for x in VALUES[dtype]:
            for lo, hi in bounds:
                out = torch.clamp(torch.tensor([x], dtype=DTYPES[dtype]), lo, hi)
                lines.append(f"clamp {dtype} {text(x)} {text(lo)} {text(hi)} = "
                             f"{text(scalar(out))}")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pointwise_cases.txt")
    with open(path, "w") as f:
        f.write(f"# written by make_pointwise_golden.py with torch {torch.__version__}\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases in {path}")


if __name__ == "__main__":
    main()
