#!/usr/bin/python3
"""Writes the golden data of kiln's conformance and tensor-semantics tests, computed by PyTorch.
Run with a Python that has torch (Debian's python3-torch 1.13):

    /usr/bin/python3 tests/golden/make_conformance_golden.py

conformance_cases.txt holds, for each case, its inputs and PyTorch's outputs, so that the C++
side reads both and regenerates nothing (tools/conformance/golden.cpp parses it):

    case <case name> <label>          the case name is the one tools/conformance registers
    in <dtype> <ndim> <sizes...> <values...>      a tensor argument (row-major values)
    scalar <int|float|bool> <value>   a number argument (C++ Scalar of that kind)
    scalar none                       an absent optional number
    int <value>                       an integer argument (dim, diagonal, keepdim, ...)
    dtype <name>                      a dtype argument
    out <dtype> <ndim> <sizes...> <values...>     an expected output
    end

Values: bool as 0/1, integers in decimal, floats as Python's repr (nan, inf, -inf; 16-bit
floats widened exactly). promotion_tables.txt holds torch.promote_types for all 100 pairs and
torch.result_type for dimensioned, 0-dim and number operands:

    promote <a> <b> <result>
    dim_zerodim <dimensioned dtype> <0-dim dtype> <result>
    zerodim_dim <0-dim dtype> <dimensioned dtype> <result>
    dim_scalar <dtype> <int|float|bool> <result>
    zerodim_scalar <dtype> <int|float|bool> <result>
"""
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
}
NAMES = {v: k for k, v in DTYPES.items()}
ALL = list(DTYPES)
INTS = ["uint8", "int8", "int16", "int32", "int64"]
SIGNED_INTS = ["int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
NUMERIC = INTS + FLOATS
nan, inf = math.nan, math.inf


class Int:
    """An integer argument (dim, diagonal, keepdim)."""
    def __init__(self, v):
        self.v = int(v)


class DType:
    def __init__(self, name):
        self.name = name


class Num:
    """A number argument, with the kind the C++ Scalar gets."""
    def __init__(self, v, kind=None):
        self.v = v
        if kind is None:
            kind = "bool" if isinstance(v, bool) else ("int" if isinstance(v, int) else "float")
        self.kind = kind


NONE = Num(None, "none")


def T(values, dtype):
    return torch.tensor(values, dtype=DTYPES[dtype])


def fmt_value(v, is_float):
    if not is_float:
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def fmt_tensor(key, t):
    t = t.detach().contiguous()
    is_float = t.is_floating_point()
    flat = t.reshape(-1)
    flat = flat.double() if is_float else flat.long()
    values = [fmt_value(v, is_float) for v in flat.tolist()]
    sizes = [str(s) for s in t.shape]
    return " ".join([key, NAMES[t.dtype], str(t.dim())] + sizes + values)


def fmt_arg(a):
    if isinstance(a, torch.Tensor):
        return fmt_tensor("in", a)
    if isinstance(a, Int):
        return "int %d" % a.v
    if isinstance(a, DType):
        return "dtype " + a.name
    if isinstance(a, Num):
        if a.kind == "none":
            return "scalar none"
        if a.kind == "bool":
            return "scalar bool %d" % int(a.v)
        if a.kind == "int":
            return "scalar int %d" % int(a.v)
        return "scalar float " + fmt_value(a.v, True)
    raise TypeError(a)


def val(a):
    if isinstance(a, Int):
        return a.v
    if isinstance(a, DType):
        return DTYPES[a.name]
    if isinstance(a, Num):
        return a.v
    return a


class Writer:
    def __init__(self):
        self.lines = []
        self.count = 0
        self.skipped = []

    def case(self, name, label, fn, *args):
        """Records fn(*args) as case `name`; skipped when PyTorch lacks the op for these dtypes."""
        try:
            result = fn(*[val(a) for a in args])
        except (RuntimeError, TypeError) as e:
            self.skipped.append("%s %s: %s" % (name, label, str(e).splitlines()[0]))
            return
        if isinstance(result, torch.Tensor):
            result = (result,)
        self.lines.append("case %s %s" % (name, label))
        self.lines.extend(fmt_arg(a) for a in args)
        self.lines.extend(fmt_tensor("out", r) for r in result)
        self.lines.append("end")
        self.count += 1


# --- input families ------------------------------------------------------------------------------

def division_grid(dtype):
    """Dividends against divisors (broadcast [n, 1] x [m]), negative where the dtype allows."""
    if dtype == "uint8":
        return T([[v] for v in range(0, 15)], dtype), T([1, 2, 3, 4, 5, 6], dtype)
    if dtype in INTS:
        return T([[v] for v in range(-7, 8)], dtype), T([-3, -2, -1, 1, 2, 3], dtype)
    a = [-7.5, -3.0, -2.25, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.25, 3.0, 7.5]
    return T([[v] for v in a], dtype), T([-2.0, -0.75, -0.5, 0.5, 0.75, 2.0], dtype)


def division_cases(w, op, fn, fn_scalar):
    for dt in NUMERIC:
        a, b = division_grid(dt)
        w.case(op, dt, fn, a, b)
    for dt in FLOATS:
        w.case(op, dt + "_by_zero", fn, T([[1.0], [-1.0], [0.0], [2.5], [inf], [nan]], dt),
               T([0.0, -0.0, inf, -inf], dt))
    for dt in SIGNED_INTS:
        w.case(op + "_scalar", dt + "_int", fn_scalar, T(list(range(-7, 8)), dt), Num(-3))
        w.case(op + "_scalar", dt + "_float", fn_scalar, T(list(range(-7, 8)), dt), Num(1.5))
    w.case(op + "_scalar", "uint8_int", fn_scalar, T(list(range(0, 15)), "uint8"), Num(4))
    for dt in FLOATS:
        w.case(op + "_scalar", dt + "_int", fn_scalar,
               T([-7.5, -2.25, -0.5, 0.0, 0.5, 3.0, 7.5], dt), Num(-2))
        w.case(op + "_scalar", dt + "_float", fn_scalar, T([-7.5, -2.25, -0.5, 0.0, 3.0, 7.5], dt),
               Num(0.75))
    # mixed dtypes promote before dividing
    w.case(op, "int32_float32", fn, T([[-7], [-1], [5]], "int32"), T([-2.0, 1.5], "float32"))
    w.case(op, "int8_int64", fn, T([[-7], [-1], [5]], "int8"), T([-2, 3], "int64"))
    w.case(op, "uint8_int8", fn, T([[7], [1], [250]], "uint8"), T([-2, 3], "int8"))


def write_arithmetic(w):
    division_cases(w, "floor_divide", torch.floor_divide, torch.floor_divide)
    division_cases(w, "remainder", torch.remainder, torch.remainder)
    division_cases(w, "fmod", torch.fmod, torch.fmod)

    # pow: integer bases with non-negative exponents; floats with negative and fractional ones
    for dt in SIGNED_INTS:
        w.case("pow", dt, torch.pow, T([[v] for v in range(-3, 4)], dt), T([0, 1, 2, 3], dt))
    w.case("pow", "uint8", torch.pow, T([[v] for v in range(0, 6)], "uint8"),
           T([0, 1, 2, 3], "uint8"))
    for dt in FLOATS:
        bases = [[-2.0], [-0.5], [-0.0], [0.0], [0.5], [2.0], [inf], [nan]]
        exponents = [-2.0, -0.5, 0.0, 0.5, 1.0, 3.0, inf, -inf]
        w.case("pow", dt, torch.pow, T(bases, dt), T(exponents, dt))
    for dt in SIGNED_INTS:
        w.case("pow_scalar", dt + "_int", torch.pow, T([-3, -1, 0, 2, 5], dt), Num(2))
        w.case("pow_scalar", dt + "_float", torch.pow, T([0, 1, 2, 4, 9], dt), Num(0.5))
    for dt in FLOATS:
        w.case("pow_scalar", dt + "_int", torch.pow, T([-3.0, -0.5, 0.0, 2.0, 1.5], dt), Num(3))
        w.case("pow_scalar", dt + "_neg", torch.pow, T([-2.0, -0.5, 0.0, 2.0, 4.0], dt), Num(-1))
        w.case("pow_scalar", dt + "_frac", torch.pow, T([-2.0, 0.0, 0.25, 4.0], dt), Num(0.5))
    for dt in ["int32", "int64", "uint8", "float32", "float64", "float16"]:
        w.case("pow_scalar_base", dt + "_int", lambda e, b: torch.pow(b, e), T([0, 1, 2, 3], dt),
               Num(2))
        w.case("pow_scalar_base", dt + "_float", lambda e, b: torch.pow(b, e), T([0, 1, 2, 3], dt),
               Num(2.5))
    w.case("pow", "int32_float32", torch.pow, T([[-2], [3]], "int32"), T([0.5, 2.0], "float32"))
    w.case("pow", "int64_uint8", torch.pow, T([[-2], [3]], "int64"), T([0, 3], "uint8"))

    # true division: integers give float32, division by zero gives inf and nan
    for dt in ["bool", "uint8", "int8", "int32", "int64"]:
        a = T([[0], [1], [1]], dt) if dt == "bool" else T([[0], [1], [7]], dt)
        b = T([1, 0], dt) if dt == "bool" else T([2, 0, 3], dt)
        w.case("div", dt, torch.div, a, b)
    w.case("div_scalar", "int64_int", torch.div, T([0, 1, 7, -7], "int64"), Num(2))
    w.case("div_scalar", "int32_float", torch.div, T([0, 1, 7, -7], "int32"), Num(0.5))
    w.case("div_scalar", "float16_int", torch.div, T([0.0, 1.0, 7.0, -7.0], "float16"), Num(3))


def write_unary(w):
    floats = {
        "neg": [-0.0, 0.0, 1.5, -inf, nan],
        "abs": [-0.0, -1.5, 2.0, -inf, nan],
        "sign": [-0.0, 0.0, -2.5, 3.0, -inf, inf, nan],
        "exp": [-100.0, -1.0, 0.0, 1.0, 10.0, 88.0, 89.0, -inf, inf, nan],
        "log": [-1.0, -0.0, 0.0, 1e-30, 1.0, 10.0, inf, nan],
        "log1p": [-2.0, -1.0, -0.5, 1e-10, 0.0, 1.0, inf, nan],
        "expm1": [-50.0, -1e-10, 0.0, 1e-10, 1.0, 20.0, -inf, inf, nan],
        "sqrt": [-1.0, -0.0, 0.0, 0.25, 2.0, 1e30, inf, nan],
        "rsqrt": [-1.0, -0.0, 0.0, 0.25, 2.0, inf, nan],
        "sin": [-2.5, -0.0, 0.0, 1.0, 100.0, inf, nan],
        "cos": [-2.5, -0.0, 0.0, 1.0, 100.0, inf, nan],
        "tanh": [-20.0, -1.0, -0.0, 1e-8, 0.5, 20.0, -inf, inf, nan],
        "sigmoid": [-100.0, -10.0, -0.0, 0.5, 10.0, 100.0, -inf, inf, nan],
        "relu": [-1.0, -0.0, 0.0, 2.0, -inf, inf, nan],
    }
    for op, values in floats.items():
        fn = getattr(torch, op)
        for dt in FLOATS:
            w.case(op, dt, fn, T(values, dt))
    for op in ["neg", "abs", "sign", "relu"]:
        fn = getattr(torch, op)
        for dt in SIGNED_INTS:
            w.case(op, dt, fn, T([-5, -1, 0, 1, 7], dt))
        w.case(op, "uint8", fn, T([0, 1, 7, 200, 255], "uint8"))
    w.case("sign", "bool", torch.sign, T([True, False], "bool"))
    # floating functions of integers and bools give float32
    for op in ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid"]:
        fn = getattr(torch, op)
        for dt in ["bool", "uint8", "int32", "int64"]:
            w.case(op, dt, fn, T([0, 1] if dt == "bool" else [0, 1, 2, 9], dt))
    for dt in ["bool"] + INTS:
        if dt == "bool":
            values = [True, False]
        elif dt == "uint8":
            values = [0, 1, 5, 255]
        else:
            values = [-128 if dt == "int8" else -1000, -1, 0, 5]
        w.case("bitwise_not", dt, torch.bitwise_not, T(values, dt))
    for dt in ALL:
        w.case("logical_not", dt, torch.logical_not,
               T([True, False] if dt == "bool" else [0, 1, 2], dt) if dt not in FLOATS
               else T([0.0, -0.0, 0.5, nan, inf], dt))


def write_math(w):
    """Issue 15: math functions and activations, special values included."""
    floats = {
        "floor": [-2.5, -0.5, -0.0, 0.5, 2.5, 1e20, -inf, inf, nan],
        "ceil": [-2.5, -0.5, -0.0, 0.5, 2.5, 1e20, -inf, inf, nan],
        "round": [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6, -inf, inf, nan],
        "trunc": [-2.7, -0.5, 0.5, 2.7, -inf, inf, nan],
        "frac": [-2.75, -0.5, -0.0, 0.25, 3.0, nan],
        "reciprocal": [-2.0, -0.0, 0.0, 0.5, 4.0, -inf, inf, nan],
        "log2": [-1.0, 0.0, 0.5, 1.0, 8.0, inf, nan],
        "log10": [-1.0, 0.0, 0.5, 1.0, 1000.0, inf, nan],
        "exp2": [-200.0, -1.0, 0.0, 0.5, 10.0, 200.0, -inf, inf, nan],
        "tan": [-1.2, -0.0, 0.0, 0.5, 1.5, inf, nan],
        "sinh": [-100.0, -1.0, -0.0, 0.5, 3.0, -inf, inf, nan],
        "cosh": [-100.0, -1.0, 0.0, 0.5, 3.0, -inf, inf, nan],
        "asin": [-2.0, -1.0, -0.0, 0.5, 1.0, nan],
        "acos": [-2.0, -1.0, 0.0, 0.5, 1.0, nan],
        "atan": [-1e10, -1.0, -0.0, 0.5, 3.0, -inf, inf, nan],
        "asinh": [-1e10, -1.0, -0.0, 0.5, 3.0, -inf, inf, nan],
        "acosh": [0.5, 1.0, 2.0, 10.0, inf, nan],
        "atanh": [-2.0, -1.0, -0.5, -0.0, 0.5, 1.0, nan],
        "erf": [-5.0, -0.5, -0.0, 0.0, 0.5, 5.0, -inf, inf, nan],
        "erfc": [-5.0, -0.5, 0.0, 0.5, 5.0, 30.0, -inf, inf, nan],
        "erfinv": [-2.0, -1.0, -0.999, -0.5, -0.0, 0.0, 0.3, 0.9, 0.999999, 1.0, nan],
        "silu": [-100.0, -2.0, -0.0, 0.0, 1.0, 100.0, inf, nan],
        "mish": [-100.0, -2.0, -0.0, 0.0, 1.0, 30.0, 100.0, inf, nan],
        "logsigmoid": [-200.0, -2.0, 0.0, 1.0, 200.0, -inf, inf, nan],
        "softsign": [-1e30, -2.0, -0.0, 0.0, 1.0, -inf, inf, nan],
        "tanhshrink": [-20.0, -1.0, 0.0, 0.5, 20.0, nan],
    }
    functional = {"logsigmoid", "softsign", "tanhshrink", "silu", "mish"}
    for op, values in floats.items():
        fn = getattr(torch.nn.functional if op in functional else torch, op)
        for dt in FLOATS:
            w.case(op, dt, fn, T(values, dt))
    for op in ["floor", "ceil", "round", "trunc"]:
        fn = getattr(torch, op)
        for dt in ["uint8", "int32", "int64"]:
            w.case(op, dt, fn, T([0, 1, 7, 100], dt))
    # floating functions of integers and bools give float32
    for op in ["reciprocal", "log2", "log10", "exp2", "atan", "erf", "erfc", "erfinv", "sinh"]:
        fn = getattr(torch, op)
        for dt in ["bool", "int32", "int64"]:
            w.case(op, dt, fn, T([0, 1] if dt == "bool" else [0, 1, 2, -3], dt))
    act = [-1e4, -3.0, -0.5, -0.25, -0.0, 0.0, 0.25, 0.5, 1.0, 3.0, 1e4, -inf, inf, nan]
    for dt in FLOATS:
        F = torch.nn.functional
        w.case("gelu_none", dt, F.gelu, T(act, dt))
        w.case("gelu_tanh", dt, lambda x: F.gelu(x, approximate="tanh"), T(act, dt))
        for v in [0.01, 0.2]:
            w.case("leaky_relu", f"{dt}_{v}", F.leaky_relu, T(act, dt), Num(v))
        for v in [0.25, 0.5]:
            w.case("hardshrink", f"{dt}_{v}", F.hardshrink, T(act, dt), Num(v))
            w.case("softshrink", f"{dt}_{v}", F.softshrink, T(act, dt), Num(v))
    for dt in ["float32", "float64"]:
        for decimals in [-2, -1, 1, 3]:
            w.case("round_decimals", f"{dt}_{decimals}", lambda x, d: torch.round(x, decimals=d),
                   T([-1234.5678, -0.125, 0.0, 0.45, 2.675, 1e10, nan], dt), Int(decimals))


def write_bitwise_logical(w):
    for op in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
        fn = getattr(torch, op)
        w.case(op, "bool", fn, T([[True], [False]], "bool"), T([True, False], "bool"))
        w.case(op, "uint8", fn, T([[0], [5], [255]], "uint8"), T([3, 12, 255], "uint8"))
        for dt in SIGNED_INTS:
            w.case(op, dt, fn, T([[-3], [0], [5], [-128]], dt), T([3, -12, 127], dt))
        w.case(op, "int8_int32", fn, T([[-3], [5]], "int8"), T([300, -1], "int32"))
        w.case(op, "bool_int16", fn, T([[True], [False]], "bool"), T([3, -2], "int16"))
    for op in ["logical_and", "logical_or", "logical_xor"]:
        fn = getattr(torch, op)
        for dt in ALL:
            if dt in FLOATS:
                a, b = T([[0.0], [-0.0], [0.5], [nan]], dt), T([0.0, 2.0, nan], dt)
            elif dt == "bool":
                a, b = T([[True], [False]], dt), T([True, False], dt)
            else:
                a, b = T([[0], [1], [3]], dt), T([0, 2], dt)
            w.case(op, dt, fn, a, b)
        w.case(op, "int32_float32", fn, T([[0], [3]], "int32"), T([0.0, 0.5], "float32"))


def write_compare(w):
    ops = ["eq", "ne", "lt", "le", "gt", "ge"]
    for op in ops:
        fn = getattr(torch, op)
        for dt in ALL:
            if dt in FLOATS:
                a, b = T([[-1.5], [0.0], [2.0], [nan], [inf]], dt), T([-0.0, 2.0, nan, inf], dt)
            elif dt == "bool":
                a, b = T([[True], [False]], dt), T([True, False], dt)
            elif dt == "uint8":
                a, b = T([[0], [3], [200]], dt), T([0, 3, 255], dt)
            else:
                a, b = T([[-3], [0], [3]], dt), T([-3, 0, 3], dt)
            w.case(op, dt, fn, a, b)
        # mixed dtypes compare in the promoted dtype
        w.case(op, "int64_float32", fn, T([[1], [2], [3]], "int64"), T([1.5, 2.0], "float32"))
        w.case(op, "uint8_int8", fn, T([[0], [255]], "uint8"), T([-1, 0], "int8"))
        w.case(op, "float16_float64", fn, T([[0.1], [0.5]], "float16"), T([0.1, 0.5], "float64"))
        w.case(op, "bool_int32", fn, T([[True], [False]], "bool"), T([1, 0, 2], "int32"))
        w.case(op + "_scalar", "int32_float", fn, T([1, 2, 3], "int32"), Num(2.5))
        w.case(op + "_scalar", "uint8_int", fn, T([0, 200, 255], "uint8"), Num(200))
        w.case(op + "_scalar", "float16_float", fn, T([0.1, 0.5], "float16"), Num(0.1))


def write_min_max_clamp(w):
    for op in ["maximum", "minimum"]:
        fn = getattr(torch, op)
        for dt in FLOATS:
            w.case(op, dt, fn, T([[-1.0], [nan], [2.0], [-0.0]], dt), T([0.0, nan, -inf, 1.0], dt))
        for dt in INTS:
            w.case(op, dt, fn, T([[0], [3], [100]], dt), T([1, 50], dt))
        w.case(op, "bool", fn, T([[True], [False]], "bool"), T([True, False], "bool"))
        w.case(op, "int32_float32", fn, T([[1], [5]], "int32"), T([2.5, nan], "float32"))
    for dt in SIGNED_INTS + ["int64"]:
        x = T([-5, -2, 0, 3, 9], dt)
        w.case("clamp", dt + "_both", torch.clamp, x, Num(-1), Num(4))
        w.case("clamp", dt + "_min", torch.clamp, x, Num(0), NONE)
        w.case("clamp", dt + "_max", torch.clamp, x, NONE, Num(2))
        w.case("clamp", dt + "_crossed", torch.clamp, x, Num(4), Num(1))
        w.case("clamp", dt + "_float_bound", torch.clamp, x, Num(-1.5), Num(2.5))
    w.case("clamp", "uint8_both", torch.clamp, T([0, 2, 9, 255], "uint8"), Num(1), Num(200))
    for dt in FLOATS:
        x = T([-inf, -2.5, -0.0, 0.5, 3.0, inf, nan], dt)
        w.case("clamp", dt + "_both", torch.clamp, x, Num(-1.0), Num(2.0))
        w.case("clamp", dt + "_min", torch.clamp, x, Num(0), NONE)
        w.case("clamp", dt + "_max", torch.clamp, x, NONE, Num(0.5))
        w.case("clamp", dt + "_crossed", torch.clamp, x, Num(2.0), Num(-1.0))


def write_promotion(w):
    """add over every pair of dtypes: dimensioned with dimensioned, with 0-dim, and with numbers."""
    def values(dt, zero_dim=False):
        if dt == "bool":
            return T(True, dt) if zero_dim else T([True, False], dt)
        if dt in FLOATS:
            return T(1.5, dt) if zero_dim else T([0.5, 2.0], dt)
        return T(3, dt) if zero_dim else T([1, 2], dt)
    for a in ALL:
        for b in ALL:
            w.case("add", a + "_" + b, torch.add, values(a), values(b))
            w.case("add", a + "_" + b + "_0dim", torch.add, values(a), values(b, True))
            w.case("mul", b + "_0dim_" + a, torch.mul, values(b, True), values(a))
    for a in ALL:
        for num in [Num(True), Num(3), Num(2.5)]:
            w.case("add_scalar", a + "_" + num.kind, torch.add, values(a), num)
            w.case("mul_scalar", a + "_" + num.kind + "_0dim", torch.mul, values(a, True), num)
    w.case("add_scalar", "uint8_1000", torch.add, T([1, 200], "uint8"), Num(1000))
    # integer arithmetic wraps around (two's complement)
    w.case("add", "int8_wrap", torch.add, T([127, -128, 100], "int8"), T([1, -1, 100], "int8"))
    w.case("mul", "int16_wrap", torch.mul, T([300, -300, 256], "int16"),
           T([300, 300, 256], "int16"))
    w.case("mul", "int32_wrap", torch.mul, T([65536, -2147483648], "int32"),
           T([65536, -1], "int32"))
    w.case("sub", "uint8_wrap", torch.sub, T([0, 5, 255], "uint8"), T([1, 10, 255], "uint8"))
    w.case("neg", "int8_min", torch.neg, T([-128, 127], "int8"))
    w.case("abs", "int8_min", torch.abs, T([-128, -127], "int8"))
    w.case("sub", "int32_int64_0dim", torch.sub, T([1, 2], "int32"), T(5, "int64"))
    w.case("sub", "int64_float32_0dim", torch.sub, T([1, 2], "int64"), T(0.5, "float32"))
    w.case("sub_scalar", "float16_float", torch.sub, T([1.0, 2.0], "float16"), Num(2.5))


# Reductions with the argument order of the C++ golden cases (tools/conformance/cases_reduce.cpp):
# keepdim first, then the dims (all when none).
def sum_dims(t, keep, *dims):
    return torch.sum(t, dims, bool(keep)) if dims else torch.sum(t)


def mean_dims(t, keep, *dims):
    return torch.mean(t, dims, bool(keep)) if dims else torch.mean(t)


def amax_dims(t, keep, *dims):
    return torch.amax(t, dims, bool(keep))


def amin_dims(t, keep, *dims):
    return torch.amin(t, dims, bool(keep))


def logsumexp_dims(t, keep, *dims):
    return torch.logsumexp(t, dims if dims else tuple(range(t.dim())), bool(keep))


def var_dims(t, correction, keep, *dims):
    return torch.var(t, dims if dims else None, correction=correction, keepdim=bool(keep))


def std_dims(t, correction, keep, *dims):
    return torch.std(t, dims if dims else None, correction=correction, keepdim=bool(keep))


def norm_dims(t, p, keep, *dims):
    return torch.linalg.vector_norm(t, p, dims if dims else None, bool(keep))


def prod_dim(t, dim, keep):
    return torch.prod(t, dim, bool(keep))


def over_dim(fn):
    """fn(t, dim, keepdim) with the outputs as a tuple (max and min return a named tuple)."""
    def call(t, dim, keep):
        r = fn(t, dim, bool(keep))
        return r if isinstance(r, torch.Tensor) else tuple(r)
    return call


def addmm_scaled(bias, a, b, beta, alpha):
    return torch.addmm(bias, a, b, beta=beta, alpha=alpha)


def write_reductions(w):
    x = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4).sin() * 3
    for dt in ["float32", "float64"]:
        xt = x.to(DTYPES[dt])
        for dims, keep in [((), 0), ((0,), 0), ((1,), 1), ((0, 2), 0), ((-1,), 1), ((2, 0), 1)]:
            label = dt + "_" + "_".join(str(d) for d in dims).replace("-", "m") + "_k%d" % keep
            dim_args = [Int(d) for d in dims]
            w.case("sum_dims", label, sum_dims, xt, Int(keep), *dim_args)
            w.case("mean_dims", label, mean_dims, xt, Int(keep), *dim_args)
            w.case("amax", label, amax_dims, xt, Int(keep), *dim_args)
            w.case("amin", label, amin_dims, xt, Int(keep), *dim_args)
            w.case("logsumexp", label, logsumexp_dims, xt, Int(keep), *dim_args)
            for corr in (0, 1):
                w.case("var", label + "_c%d" % corr, var_dims, xt, Int(corr), Int(keep), *dim_args)
                w.case("std", label + "_c%d" % corr, std_dims, xt, Int(corr), Int(keep), *dim_args)
            for p in [2, 1, inf, -inf, 0, 3, 0.5]:
                w.case("norm", label + "_p" + str(p).replace("-", "m").replace(".", "_"),
                       norm_dims, xt, Num(p), Int(keep), *dim_args)
    # logsumexp is stable for large magnitudes and all -inf rows
    for dt in ["float32", "float64", "float16", "bfloat16"]:
        big = T([[1000.0, 1001.0, 999.0], [-1000.0, -1000.5, -999.0], [-inf, -inf, -inf],
                 [inf, 1.0, 2.0]], dt)
        w.case("logsumexp", dt + "_large_1_k0", logsumexp_dims, big, Int(0), Int(1))
    # integer and bool sums are int64, prod too
    for dt in ["bool"] + INTS:
        if dt == "bool":
            v = T([[True, False, True], [True, True, False]], dt)
        else:
            v = T([[1, 2, 3], [4, 5, 6]], dt)
        w.case("sum_dims", dt + "_all", sum_dims, v, Int(0))
        w.case("sum_dims", dt + "_1_k0", sum_dims, v, Int(0), Int(1))
        w.case("prod_dim", dt + "_0_k1", prod_dim, v, Int(0), Int(1))
        w.case("prod_dim", dt + "_1_k0", prod_dim, v, Int(1), Int(0))
    w.case("sum_dims", "int8_overflow_all", sum_dims, T([100, 100, 100], "int8"), Int(0))
    # all / any
    for dt in ALL:
        if dt in FLOATS:
            v = T([[0.0, nan, 1.0], [0.5, 2.0, -1.0]], dt)
        elif dt == "bool":
            v = T([[False, True, True], [True, True, True]], dt)
        else:
            v = T([[0, 1, 2], [3, 4, 5]], dt)
        if dt != "uint8":  # PyTorch keeps uint8 for all/any of uint8; kiln returns bool
            w.case("all", dt, torch.all, v)
            w.case("any", dt, torch.any, v)
            w.case("all_dim", dt + "_1_k0", over_dim(torch.all), v, Int(1), Int(0))
            w.case("any_dim", dt + "_0_k1", over_dim(torch.any), v, Int(0), Int(1))


def write_arg_reductions(w):
    """argmax/argmin and max/min over a dim: the first index of ties; NaN is the extreme."""
    for dt in ALL:
        if dt == "bool":
            v = T([[False, True, True, False], [False, False, False, False],
                   [True, True, True, True]], dt)
        elif dt in FLOATS:
            v = T([[1.0, 3.0, 3.0, 2.0], [-1.0, -1.0, -5.0, -5.0], [0.5, 0.5, 0.5, 0.5]], dt)
        elif dt == "uint8":
            v = T([[1, 3, 3, 2], [9, 9, 0, 0], [5, 5, 5, 5]], dt)
        else:
            v = T([[1, 3, 3, 2], [-1, -1, -5, -5], [5, 5, 5, 5]], dt)
        for op in ["argmax", "argmin"]:
            fn = getattr(torch, op)
            w.case(op, dt, fn, v)
            for d, k in [(0, 0), (1, 0), (-1, 1)]:
                w.case(op + "_dim", "%s_%d_k%d" % (dt, d, k), over_dim(fn), v, Int(d), Int(k))
        for op in ["max", "min"]:
            fn = getattr(torch, op)
            for d, k in [(0, 0), (1, 1)]:
                w.case(op + "_dim", "%s_%d_k%d" % (dt, d, k), over_dim(fn), v, Int(d), Int(k))
    for dt in ["float32", "float64", "float16"]:
        v = T([[1.0, nan, 3.0, nan], [2.0, 1.0, 0.0, -inf], [inf, 1.0, inf, -inf]], dt)
        for op in ["argmax", "argmin"]:
            fn = getattr(torch, op)
            w.case(op, dt + "_nan", fn, v)
            w.case(op + "_dim", dt + "_nan_1_k0", over_dim(fn), v, Int(1), Int(0))
        for op in ["max", "min"]:
            fn = getattr(torch, op)
            w.case(op + "_dim", dt + "_nan_1_k0", over_dim(fn), v, Int(1), Int(0))
        w.case("amax", dt + "_nan_1_k0", amax_dims, v, Int(0), Int(1))
        w.case("amin", dt + "_nan_1_k0", amin_dims, v, Int(0), Int(1))


def write_shapes(w):
    for dt in ["int64", "float32", "bool", "uint8"]:
        for sizes in [(3, 4), (4, 3), (2, 3, 3)]:
            n = 1
            for s in sizes:
                n *= s
            x = (torch.arange(n) + 1).reshape(sizes)
            x = (x % 2 == 0) if dt == "bool" else x.to(DTYPES[dt])
            for d in [-2, -1, 0, 1, 2, 5]:
                label = "%s_%s_d%s" % (dt, "x".join(map(str, sizes)), str(d).replace("-", "m"))
                w.case("tril", label, torch.tril, x, Int(d))
                w.case("triu", label, torch.triu, x, Int(d))
    w.case("one_hot", "auto", torch.nn.functional.one_hot, T([0, 2, 1, 3], "int64"), Int(-1))
    w.case("one_hot", "classes6", torch.nn.functional.one_hot, T([0, 2, 1, 3], "int64"), Int(6))
    w.case("one_hot", "2d", torch.nn.functional.one_hot, T([[0, 1], [2, 0]], "int64"), Int(-1))
    w.case("one_hot", "0dim", torch.nn.functional.one_hot, T(2, "int64"), Int(4))
    for dt in ["float32", "int64", "float16", "bool"]:
        x = torch.arange(12).reshape(3, 4)
        x = (x % 3 == 0) if dt == "bool" else x.to(DTYPES[dt])
        idx = T([[0, 2, 1, 0], [2, 2, 0, 1]], "int64")
        w.case("gather", dt + "_0", torch.gather, x, Int(0), idx)
        w.case("gather", dt + "_1", torch.gather, x, Int(1), T([[3, 0], [1, 1], [0, 2]], "int64"))
        w.case("gather", dt + "_m1", torch.gather, x, Int(-1), T([[3], [1], [0]], "int64"))
        w.case("index_select", dt + "_0", torch.index_select, x, Int(0), T([2, 0, 2], "int64"))
        w.case("index_select", dt + "_1", torch.index_select, x, Int(1), T([3, 1], "int64"))
        w.case("index_select", dt + "_1_int32", torch.index_select, x, Int(1),
               T([0, 0, 3], "int32"))
        mask = T([[True, False, False, True]], "bool")
        w.case("masked_fill", dt + "_int", torch.masked_fill, x, mask, Num(7))
        w.case("masked_fill", dt + "_bool", torch.masked_fill, x, mask, Num(True))
        if dt in ("float32", "float16"):
            w.case("masked_fill", dt + "_float", torch.masked_fill, x, mask, Num(-2.5))
            w.case("masked_fill", dt + "_inf", torch.masked_fill, x, mask, Num(-inf))
        w.case("repeat", dt + "_2_1", lambda t, *r: t.repeat(r), x, Int(2), Int(1))
        w.case("repeat", dt + "_2_1_3", lambda t, *r: t.repeat(r), x, Int(2), Int(1), Int(3))
        w.case("where", dt, torch.where, T([[True], [False], [True]], "bool"), x, x.flip(0))
    # where and cat promote their operands
    w.case("where", "int32_float32", torch.where, T([True, False, True], "bool"),
           T([1, 2, 3], "int32"), T([0.5], "float32"))
    w.case("where", "uint8_int8", torch.where, T([True, False], "bool"), T([200, 1], "uint8"),
           T([-1, -2], "int8"))
    w.case("where_scalar_other", "int64_float", lambda c, a, s: torch.where(c, a, s),
           T([True, False], "bool"), T([1, 2], "int64"), Num(2.5))
    w.case("where_scalar_other", "float16_float", lambda c, a, s: torch.where(c, a, s),
           T([True, False], "bool"), T([1.0, 2.0], "float16"), Num(2.5))
    w.case("cat", "int32_float16_0", lambda d, *t: torch.cat(t, d), Int(0), T([[1, 2]], "int32"),
           T([[0.5, 1.5], [2.5, 3.5]], "float16"))
    w.case("cat", "bool_uint8_1", lambda d, *t: torch.cat(t, d), Int(1),
           T([[True], [False]], "bool"), T([[7, 8], [9, 10]], "uint8"))
    w.case("cat", "int64_empty_0", lambda d, *t: torch.cat(t, d), Int(0), T([[1, 2]], "int64"),
           torch.zeros(0, dtype=torch.int64), T([[3, 4]], "int64"))
    w.case("stack", "float32_1", lambda d, *t: torch.stack(t, d), Int(1), T([1.0, 2.0], "float32"),
           T([3.0, 4.0], "float32"), T([5.0, 6.0], "float32"))
    w.case("stack", "int64_m1", lambda d, *t: torch.stack(t, d), Int(-1),
           T([[1, 2], [3, 4]], "int64"), T([[5, 6], [7, 8]], "int64"))


def write_rearrange(w):
    """flip, roll, rot90, movedim, tile, repeat_interleave, split_with_sizes, tensor_split: ints
    after the tensor are the op's lists, a count first where two lists follow."""
    for dt in ["float32", "int64", "bool", "float16"]:
        x = torch.arange(24).reshape(2, 3, 4)
        x = (x % 3 == 0) if dt == "bool" else x.to(DTYPES[dt])
        for dims in [(0,), (-1,), (0, 2), (2, 1, 0), ()]:
            label = dt + "_" + ("_".join(str(d).replace("-", "m") for d in dims) or "none")
            w.case("flip", label, lambda t, *d: torch.flip(t, d), x, *[Int(d) for d in dims])
        w.case("fliplr", dt, torch.fliplr, x)
        w.case("flipud", dt, torch.flipud, x)
        for shifts, dims in [((1,), (0,)), ((-5,), (2,)), ((7, -1), (1, -1)), ((3,), ()),
                             ((0, 2), (0, 1))]:
            label = "%s_s%s_d%s" % (dt, "_".join(map(str, shifts)), "_".join(map(str, dims)))
            w.case("roll", label.replace("-", "m"),
                   lambda t, n, *r: torch.roll(t, r[:n], r[n:]), x, Int(len(shifts)),
                   *[Int(v) for v in shifts + dims])
        for k, dims in [(1, (0, 1)), (2, (1, 2)), (3, (2, 0)), (-1, (0, 1)), (4, (1, 2)),
                        (5, (-1, -2))]:
            label = "%s_k%d_%d_%d" % (dt, k, dims[0], dims[1])
            w.case("rot90", label.replace("-", "m"), lambda t, k, a, b: torch.rot90(t, k, (a, b)),
                   x, Int(k), Int(dims[0]), Int(dims[1]))
        for src, dst in [((0,), (2,)), ((-1, 0), (0, 1)), ((0, 1, 2), (2, 0, 1)), ((), ())]:
            label = "%s_%s_to_%s" % (dt, "_".join(map(str, src)) or "none",
                                     "_".join(map(str, dst)) or "none")
            w.case("movedim", label.replace("-", "m"),
                   lambda t, n, *r: torch.movedim(t, r[:n], r[n:]), x, Int(len(src)),
                   *[Int(v) for v in src + dst])
        for reps in [(2,), (1, 2), (2, 1, 1, 2), (0, 1, 1)]:
            w.case("tile", dt + "_" + "_".join(map(str, reps)),
                   lambda t, *r: torch.tile(t, r), x, *[Int(r) for r in reps])
        for reps, dim in [(2, 0), (3, -1), (2, None), (0, 1)]:
            label = "%s_r%d_%s" % (dt, reps, "none" if dim is None else str(dim).replace("-", "m"))
            if dim is None:
                w.case("repeat_interleave", label, lambda t, r: torch.repeat_interleave(t, r), x,
                       Int(reps))
            else:
                w.case("repeat_interleave", label, torch.repeat_interleave, x, Int(reps), Int(dim))
        w.case("split_with_sizes", dt + "_1_3_0_d2",
               lambda t, d, *s: torch.split(t, list(s), d), x, Int(2), Int(1), Int(3), Int(0))
        w.case("split_with_sizes", dt + "_2_1_d1",
               lambda t, d, *s: torch.split(t, list(s), d), x, Int(1), Int(2), Int(1))
        for sections, dim in [(3, 2), (2, -2), (5, 1)]:
            w.case("tensor_split_sections", "%s_%d_%d" % (dt, sections, dim),
                   torch.tensor_split, x, Int(sections), Int(dim))
        for idx, dim in [((1, 3), 2), ((3, 1), 2), ((-2, 7), 2), ((2,), 0)]:
            label = "%s_%s_d%d" % (dt, "_".join(map(str, idx)), dim)
            w.case("tensor_split_indices", label.replace("-", "m"),
                   lambda t, d, *i: torch.tensor_split(t, i, d), x, Int(dim),
                   *[Int(i) for i in idx])
    w.case("flip", "float32_0dim", lambda t, *d: torch.flip(t, d), T(3.5, "float32"), Int(0))
    w.case("flip", "float32_empty", lambda t, *d: torch.flip(t, d), torch.zeros(0, 3), Int(0),
           Int(1))
    w.case("roll", "float32_0dim", lambda t, n, *r: torch.roll(t, r[:n], r[n:]),
           T(3.5, "float32"), Int(1), Int(2))
    w.case("roll", "float32_empty", lambda t, n, *r: torch.roll(t, r[:n], r[n:]),
           torch.zeros(0, 3), Int(2), Int(1), Int(1), Int(0), Int(1))
    w.case("repeat_interleave", "float32_0dim", lambda t, r: torch.repeat_interleave(t, r),
           T(3.5, "float32"), Int(3))


def write_scans(w):
    """cumsum and cumprod: int dim, then the dtype argument when given."""
    def scan(fn):
        return lambda t, d, *dt: fn(t, d, dtype=dt[0] if dt else None)
    for name, fn in [("cumsum", torch.cumsum), ("cumprod", torch.cumprod)]:
        for dt in ALL:
            x = torch.arange(24).reshape(2, 3, 4) % 5 - 1
            x = (x > 0) if dt == "bool" else x.to(DTYPES[dt])
            if dt in FLOATS:
                x = x * 0.75
            for d in [0, 1, 2, -1]:
                w.case(name, "%s_d%s" % (dt, str(d).replace("-", "m")), scan(fn), x, Int(d))
        for dt, out in [("int32", "int32"), ("int64", "float64"), ("float32", "float64"),
                        ("float16", "float32"), ("uint8", "uint8"), ("int8", "int16")]:
            x = (torch.arange(12).reshape(3, 4) * 7 % 11).to(DTYPES[dt])
            w.case(name, "%s_to_%s" % (dt, out), scan(fn), x, Int(1), DType(out))
        w.case(name, "float32_0dim", scan(fn), T(2.5, "float32"), Int(0))
        w.case(name, "float32_empty", scan(fn), torch.zeros(2, 0, 3), Int(1))
        w.case(name, "float32_nan_inf", scan(fn), T([1.0, nan, 2.0, inf, -inf], "float32"), Int(0))
        w.case(name, "uint8_wrap", scan(fn), T([200, 100, 250], "uint8"), Int(0), DType("uint8"))
        w.case(name, "int64_wrap", scan(fn), T([2 ** 62, 2 ** 62, 2 ** 62], "int64"), Int(0))
    # float32 rounding: PyTorch keeps the running sum in double on the CPU
    x = torch.full((1000,), 0.1, dtype=torch.float32)
    w.case("cumsum", "float32_long", scan(torch.cumsum), x, Int(0))


def write_linalg(w):
    g = torch.Generator().manual_seed(3)

    def rnd(*sizes, dt="float64"):
        if dt in INTS:
            return torch.randint(-3, 4, sizes, generator=g).to(DTYPES[dt])
        return (torch.rand(*sizes, generator=g, dtype=torch.float64) * 4 - 2).to(DTYPES[dt])

    shapes = [
        ("vec_vec", (5,), (5,)), ("mat_vec", (3, 5), (5,)), ("vec_mat", (5,), (5, 2)),
        ("mat_mat", (3, 5), (5, 2)), ("batched", (2, 3, 5), (2, 5, 4)),
        ("broadcast", (2, 1, 3, 4), (3, 4, 2)), ("b3d_2d", (2, 3, 4), (4, 5)),
        ("b3d_1d", (2, 3, 4), (4,)), ("b1d_3d", (4,), (2, 4, 3)),
    ]
    for dt in ["float64", "float32", "int64", "int32"]:
        for name, sa, sb in shapes:
            w.case("matmul", dt + "_" + name, torch.matmul, rnd(*sa, dt=dt), rnd(*sb, dt=dt))
        w.case("mm", dt, torch.mm, rnd(4, 3, dt=dt), rnd(3, 2, dt=dt))
        w.case("bmm", dt, torch.bmm, rnd(2, 4, 3, dt=dt), rnd(2, 3, 2, dt=dt))
    for dt in ["float64", "float32"]:
        w.case("addmm", dt + "_bias_row", torch.addmm, rnd(2, dt=dt), rnd(3, 4, dt=dt),
               rnd(4, 2, dt=dt))
        w.case("addmm_scaled", dt + "_full", addmm_scaled, rnd(3, 2, dt=dt), rnd(3, 4, dt=dt),
               rnd(4, 2, dt=dt), Num(0.5), Num(2.0))
        w.case("addmm_scaled", dt + "_beta0", addmm_scaled,
               T([[nan, 1.0], [2.0, 3.0], [4.0, 5.0]], dt), rnd(3, 4, dt=dt), rnd(4, 2, dt=dt),
               Num(0), Num(1))
    w.case("addmm", "int64", torch.addmm, rnd(3, 2, dt="int64"), rnd(3, 4, dt="int64"),
           rnd(4, 2, dt="int64"))


def conv2d(x, weight, *rest):
    """conv2d(input, weight[, bias], stride (2), padding (2), dilation (2), groups)."""
    bias = rest[0] if isinstance(rest[0], torch.Tensor) else None
    s0, s1, p0, p1, d0, d1, groups = rest[1:] if bias is not None else rest
    return torch.nn.functional.conv2d(x, weight, bias, (s0, s1), (p0, p1), (d0, d1), groups)


def write_conv_and_scatter(w):
    g = torch.Generator().manual_seed(5)

    def rnd(*sizes, dt="float64"):
        return (torch.rand(*sizes, generator=g, dtype=torch.float64) * 4 - 2).to(DTYPES[dt])

    geometries = [  # label, input, weight, bias, stride, padding, dilation, groups
        ("plain", (2, 3, 5, 4), (2, 3, 3, 2), True, (1, 1), (0, 0), (1, 1), 1),
        ("strided_padded", (1, 2, 6, 7), (3, 2, 3, 3), True, (2, 3), (1, 2), (1, 1), 1),
        ("dilated", (1, 2, 7, 6), (2, 2, 2, 3), False, (1, 1), (0, 1), (3, 2), 1),
        ("groups", (2, 4, 4, 4), (6, 2, 3, 1), True, (1, 2), (1, 0), (1, 1), 2),
    ]
    for dt in ["float64", "float32"]:
        for label, si, sw, bias, st, pad, dil, groups in geometries:
            args = [rnd(*si, dt=dt), rnd(*sw, dt=dt)]
            if bias:
                args.append(rnd(sw[0], dt=dt))
            ints = [Int(v) for v in st + pad + dil + (groups,)]
            w.case("conv2d", dt + "_" + label, conv2d, *args, *ints)
    for dt in ["float32", "int64", "float64"]:
        x = torch.arange(12).reshape(4, 3).to(DTYPES[dt])
        w.case("index_add", dt + "_0", torch.index_add, x, Int(0), T([2, 0, 2], "int64"),
               torch.arange(9).reshape(3, 3).to(DTYPES[dt]))
        w.case("index_add", dt + "_1", torch.index_add, x, Int(1), T([1, 1, 0, 2], "int64"),
               torch.ones(4, 4, dtype=DTYPES[dt]))
        w.case("scatter_add", dt + "_0", torch.scatter_add, x, Int(0),
               T([[3, 0, 3], [3, 1, 0]], "int64"), torch.arange(6).reshape(2, 3).to(DTYPES[dt]))
        w.case("scatter_add", dt + "_1", torch.scatter_add, x, Int(1),
               T([[2, 2], [0, 1], [1, 1], [0, 0]], "int64"),
               torch.arange(12).reshape(4, 3).to(DTYPES[dt]))


def write_conversions(w):
    """to(dtype) between every pair: truncation toward zero, != 0 for bool, rounding to 16 bits."""
    src = {
        "bool": [True, False, True],
        "uint8": [0, 1, 127, 200, 255],
        "int8": [-128, -1, 0, 1, 127],
        "int16": [-300, -1, 0, 1, 127],
        "int32": [-70000, -1, 0, 1, 127],
        "int64": [-(2 ** 40), -1, 0, 1, 127],
        "float16": [-2.5, -0.5, 0.0, 0.75, 1.0, 65504.0, -inf, nan],
        "bfloat16": [-2.5, -0.5, 0.0, 0.75, 1.0, 3.0e38, -inf, nan],
        "float32": [-2.75, -0.5, -0.0, 0.99, 1.00390625, 100000.0, 1e-8, inf, nan],
        "float64": [-2.75, -0.5, -0.0, 0.99, 1.00390625, 1.0000001, 1e300, 1e-40, inf, nan],
    }
    for s, values in src.items():
        for d in ALL:
            v = values
            if d in INTS + ["bool"] and s in FLOATS:
                # float -> int is only defined for values in the target's range
                v = [x for x in values if not (math.isnan(x) or math.isinf(x) or abs(x) > 100)]
                if d == "uint8":
                    v = [x for x in v if x > -1.0]
            elif d in INTS and s in INTS:
                info = torch.iinfo(DTYPES[d])
                v = [x for x in values if info.min <= x <= info.max]
            w.case("to", s + "_" + d, lambda t, dd: t.to(dd), T(v, s), DType(d))


PAD_MODES = ["constant", "reflect", "replicate", "circular"]
INTERP_MODES = ["nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact"]


def write_resample(w):
    """constant_pad_nd (ints: pad; scalar: value), pad (ints: mode number, pad), interpolate
    (ints: mode number, align_corners and recompute_scale_factor as 0/1 or -1 for none, then the
    sizes, or scalars: the scale factors), pixel_shuffle and pixel_unshuffle (int: factor)."""
    x4 = torch.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5).double() * 0.37 % 3 - 1.2
    x3 = x4[:, :, 0]
    x5 = torch.arange(1 * 2 * 3 * 4 * 5).reshape(1, 2, 3, 4, 5).double() * 0.53 % 2.5 - 1
    for dt in ["float32", "float64", "int64", "bool"]:
        x = x4.to(DTYPES[dt]) if dt != "bool" else x4 > 0
        for pad, value in [((1, 2), Num(1.5)), ((0, 0, 2, -1), Num(0)), ((-1, -2, 1, 0, 1, 1),
                                                                         Num(2)),
                           ((1, 1, 1, 1, 1, 1, 1, 1), Num(-1))]:
            if dt in ("int64", "bool"):
                value = Num(int(value.v) if dt == "int64" else bool(value.v))
            label = "%s_%s" % (dt, "_".join(str(p).replace("-", "m") for p in pad))
            w.case("constant_pad_nd", label, lambda t, v, *p: torch.constant_pad_nd(t, p, v),
                   x, value, *[Int(p) for p in pad])
    for dt in ["float32", "float64"]:
        for mode, inp, pad in [(1, x3, (2, 3)), (1, x4, (1, 2, 3, 0)), (1, x4[0], (-1, 2, 1, 1)),
                               (1, x5, (1, 2, 0, 1, 2, 1)), (2, x3, (4, -1)),
                               (2, x4, (3, 1, 0, 5)), (2, x5, (1, 1, 2, 2, 3, 3)),
                               (3, x3, (2, 5)), (3, x4, (1, -2, 4, 2)),
                               (3, x5, (1, 0, 2, 3, 3, 1)), (0, x4, (1, 1, 2, 2))]:
            label = "%s_%s_%dd_%s" % (dt, PAD_MODES[mode], inp.dim(),
                                     "_".join(str(p).replace("-", "m") for p in pad))
            w.case("pad", label,
                   lambda t, m, *p: torch.nn.functional.pad(t, p, mode=PAD_MODES[m]),
                   inp.to(DTYPES[dt]), Int(mode), *[Int(p) for p in pad])

    def interp(t, mode, align, recompute, *rest):
        kw = dict(mode=INTERP_MODES[mode])
        if align >= 0:
            kw["align_corners"] = bool(align)
        if recompute >= 0:
            kw["recompute_scale_factor"] = bool(recompute)
        return torch.nn.functional.interpolate(t, size=list(rest), **kw)

    def interp_scale(t, mode, align, recompute, *factors):
        kw = dict(mode=INTERP_MODES[mode])
        if align >= 0:
            kw["align_corners"] = bool(align)
        if recompute >= 0:
            kw["recompute_scale_factor"] = bool(recompute)
        return torch.nn.functional.interpolate(t, scale_factor=list(factors), **kw)

    for dt in ["float32", "float64"]:
        cases = [(0, x3, [7]), (0, x4, [7, 3]), (0, x4, [8, 10]), (0, x5, [5, 2, 9]),
                 (6, x4, [7, 3]), (6, x3, [11]), (1, x3, [9]), (2, x4, [7, 9]),
                 (2, x4, [3, 2]), (3, x4, [6, 7]), (3, x4, [2, 3]), (4, x5, [4, 6, 3]),
                 (5, x4, [3, 7]), (5, x3, [3])]
        for mode, inp, size in cases:
            for align in ([-1] if mode in (0, 5, 6) else [0, 1]):
                label = "%s_%s_%dd_a%d_%s" % (dt, INTERP_MODES[mode].replace("-", "_"),
                                             inp.dim(), align,
                                             "_".join(map(str, size)))
                w.case("interpolate", label.replace("-", "m"), interp, inp.to(DTYPES[dt]),
                       Int(mode), Int(align), Int(-1), *[Int(s) for s in size])
        scales = [(0, x4, [1.5, 2.3], -1), (0, x4, [1.5, 2.3], 1), (0, x3, [0.6], -1),
                  (6, x4, [1.7, 0.5], -1), (2, x4, [1.5, 2.3], -1), (2, x4, [1.5, 2.3], 1),
                  (2, x4, [2.0, 2.0], -1), (1, x3, [1.3], -1), (3, x4, [1.6, 0.7], -1),
                  (4, x5, [1.5, 1.2, 0.8], -1), (5, x4, [0.5, 1.5], -1)]
        for mode, inp, factors, recompute in scales:
            for align in ([-1] if mode in (0, 5, 6) else [0, 1]):
                label = "%s_%s_%dd_a%d_r%d_%s" % (
                    dt, INTERP_MODES[mode].replace("-", "_"), inp.dim(), align, recompute,
                    "_".join(str(f).replace(".", "p") for f in factors))
                w.case("interpolate", label.replace("-", "m"), interp_scale, inp.to(DTYPES[dt]),
                       Int(mode), Int(align), Int(recompute), *[Num(float(f)) for f in factors])
    for dt in ["float32", "int64"]:
        t = torch.arange(2 * 8 * 3 * 2).reshape(2, 8, 3, 2).to(DTYPES[dt])
        w.case("pixel_shuffle", dt + "_2", torch.pixel_shuffle, t, Int(2))
        w.case("pixel_shuffle", dt + "_1", torch.pixel_shuffle, t, Int(1))
        w.case("pixel_shuffle", dt + "_3d", torch.pixel_shuffle, t[0, :, :, :], Int(2))
        u = torch.arange(2 * 2 * 6 * 4).reshape(2, 2, 6, 4).to(DTYPES[dt])
        w.case("pixel_unshuffle", dt + "_2", torch.pixel_unshuffle, u, Int(2))
        w.case("pixel_unshuffle", dt + "_5d", torch.pixel_unshuffle, u.reshape(1, 2, 2, 6, 4),
               Int(2))


def write_promotion_tables(path):
    lines = []
    for a in ALL:
        for b in ALL:
            result = torch.promote_types(DTYPES[a], DTYPES[b])
            lines.append("promote %s %s %s" % (a, b, NAMES[result]))
    for a in ALL:
        for b in ALL:
            dim, zero = torch.ones(2, dtype=DTYPES[a]), torch.ones((), dtype=DTYPES[b])
            lines.append("dim_zerodim %s %s %s" % (a, b, NAMES[torch.result_type(dim, zero)]))
            zero, dim = torch.ones((), dtype=DTYPES[a]), torch.ones(2, dtype=DTYPES[b])
            lines.append("zerodim_dim %s %s %s" % (a, b, NAMES[torch.result_type(zero, dim)]))
    for a in ALL:
        for kind, number in [("bool", True), ("int", 3), ("float", 2.5)]:
            dim = torch.result_type(torch.ones(2, dtype=DTYPES[a]), number)
            zero = torch.result_type(torch.ones((), dtype=DTYPES[a]), number)
            lines.append("dim_scalar %s %s %s" % (a, kind, NAMES[dim]))
            lines.append("zerodim_scalar %s %s %s" % (a, kind, NAMES[zero]))
    with open(path, "w") as f:
        f.write("# torch.promote_types and torch.result_type (PyTorch %s); written by "
                "make_conformance_golden.py\n" % torch.__version__)
        f.write("\n".join(lines) + "\n")
    return len(lines)


def main():
    w = Writer()
    write_arithmetic(w)
    write_unary(w)
    write_math(w)
    write_bitwise_logical(w)
    write_compare(w)
    write_min_max_clamp(w)
    write_promotion(w)
    write_reductions(w)
    write_arg_reductions(w)
    write_shapes(w)
    write_rearrange(w)
    write_scans(w)
    write_linalg(w)
    write_conv_and_scatter(w)
    write_conversions(w)
    write_resample(w)
    path = os.path.join(HERE, "conformance_cases.txt")
    with open(path, "w") as f:
        f.write("# PyTorch %s outputs for kiln's conformance cases; written by "
                "make_conformance_golden.py (see its docstring for the format)\n"
                % torch.__version__)
        for s in w.skipped:
            f.write("# skipped (PyTorch lacks it): %s\n" % s)
        f.write("\n".join(w.lines) + "\n")
    n = write_promotion_tables(os.path.join(HERE, "promotion_tables.txt"))
    print("conformance_cases.txt: %d cases (%d skipped); promotion_tables.txt: %d lines"
          % (w.count, len(w.skipped), n))


if __name__ == "__main__":
    main()
