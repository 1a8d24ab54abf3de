#!/usr/bin/python3
"""Writes print_cases.txt: PyTorch's repr() of ~70 tensors, the golden data for
tests/test_print_format.cpp. Run with a Python that has torch (Debian's python3-torch 1.13):

    /usr/bin/python3 tests/golden/make_print_golden.py

Each case is
    case <name>
    dtype <name> default <0|1> kind <bool|int|float> requires_grad <0|1>
    grad_fn <name>            (only when the tensor has one)
    device <name>             (only when the device is printed)
    sizes <n0> <n1> ...
    values <v0> <v1> ...      (row-major; floats as repr(float), 16-bit floats widened)
    expect <number of lines>
    <the printed lines, with "torch." replaced by "kiln.">
    end
"""
import contextlib
import math
import os

import torch

DEFAULT_DTYPES = (torch.float32, torch.int64, torch.bool)
nan, inf = math.nan, math.inf


def randn(*sizes, dtype=torch.float32):
    return torch.randn(*sizes, dtype=torch.float64).to(dtype)


@contextlib.contextmanager
def pretend_default_device(name):
    """Makes PyTorch print device='cpu' for CPU tensors, to exercise the device suffix."""
    saved = torch._C._get_default_device
    torch._C._get_default_device = lambda: name
    try:
        yield
    finally:
        torch._C._get_default_device = saved


def scalar_cases():
    return [
        ("scalar_float32", torch.tensor(3.0)),
        ("scalar_float32_frac", torch.tensor(3.14159)),
        ("scalar_float32_neg", torch.tensor(-0.25)),
        ("scalar_float32_tiny", torch.tensor(1e-5)),
        ("scalar_float32_huge", torch.tensor(3e9)),
        ("scalar_float32_zero", torch.tensor(0.0)),
        ("scalar_float32_nan", torch.tensor(nan)),
        ("scalar_float32_neginf", torch.tensor(-inf)),
        ("scalar_float64", torch.tensor(2.5, dtype=torch.float64)),
        ("scalar_float16", torch.tensor(1.5, dtype=torch.float16)),
        ("scalar_bfloat16", torch.tensor(0.1, dtype=torch.bfloat16)),
        ("scalar_int64", torch.tensor(7)),
        ("scalar_int32_neg", torch.tensor(-7, dtype=torch.int32)),
        ("scalar_int8", torch.tensor(-128, dtype=torch.int8)),
        ("scalar_uint8", torch.tensor(255, dtype=torch.uint8)),
        ("scalar_int16", torch.tensor(300, dtype=torch.int16)),
        ("scalar_bool", torch.tensor(True)),
        ("scalar_bool_false", torch.tensor(False)),
    ]


def vector_cases():
    return [
        ("int64_arange", torch.arange(10)),
        ("int64_negative", torch.tensor([-100, 5, 20])),
        ("int64_mixed_width", torch.tensor([1, -1000, 50, 123456789012])),
        ("float_integral", torch.tensor([1.0, 2.0, 3.0])),
        ("float_integral_neg", torch.tensor([-1.0, 20.0, -300.0])),
        ("float_negative", torch.tensor([-1.5, 2.25, 0.0])),
        ("float_randn", randn(5)),
        ("float_single", torch.tensor([5.0])),
        ("float_rounding", torch.tensor([0.12345, 2.00005, 0.5, 1.25, 99.99995])),
        ("float_sci_small", torch.tensor([1e-5, 2e-5, -3.5e-6])),
        ("float_sci_ratio", torch.tensor([1e-3, 1.0, 1e4])),
        ("float_sci_large", torch.tensor([1e9, 2.5])),
        ("float_int_sci_ratio", torch.tensor([1.0, 10000.0])),
        ("float_int_sci_large", torch.tensor([1e9, -2.0])),
        ("float_int_no_sci", torch.tensor([1e4, 1e7, -5e6])),
        ("float_nan_inf", torch.tensor([nan, inf, -inf, 1.5])),
        ("float_nan_inf_int", torch.tensor([nan, -inf, 2.0, 100.0])),
        ("float_nan_inf_sci", torch.tensor([nan, inf, 1e-6, 1.0])),
        ("float_only_nonfinite", torch.tensor([nan, inf])),
        ("float_zeros", torch.zeros(3)),
        ("float_zero_inf", torch.tensor([0.0, inf])),
        ("float_frac_inf", torch.tensor([0.5, inf])),
        ("float_negative_zero", torch.tensor([-0.0, 1.0])),
        ("float_negative_zero_frac", torch.tensor([-0.0, 1.5])),
        ("float64_extreme", torch.tensor([1e-300, 1e300], dtype=torch.float64)),
    ]


def nd_cases():
    return [
        ("float_2d", randn(3, 4)),
        ("int_2d", torch.randint(-50, 50, (3, 5))),
        ("float_2d_column", randn(5, 1)),
        ("float_2d_row", randn(1, 5)),
        ("float_3d", randn(2, 3, 4)),
        ("float_3d_ones", torch.ones(1, 1, 1)),
        ("float_4d", randn(2, 2, 2, 3)),
        ("int_4d", torch.arange(24).reshape(2, 1, 3, 4)),
        ("float_5d", randn(2, 1, 2, 1, 2)),
    ]


def empty_cases():
    return [
        ("empty_1d", torch.tensor([])),
        ("empty_2d", torch.zeros(0, 3)),
        ("empty_3d_float64", torch.zeros(2, 0, 3, dtype=torch.float64)),
        ("empty_int64", torch.tensor([], dtype=torch.int64)),
        ("empty_bool_2d", torch.zeros(3, 0, dtype=torch.bool)),
        ("empty_int32", torch.zeros(0, dtype=torch.int32)),
        ("empty_requires_grad", torch.zeros(0, requires_grad=True)),
    ]


def summary_cases():
    return [
        ("summary_int_1d", torch.arange(2000)),
        ("summary_float_1d", randn(2000)),
        ("summary_float_2d", randn(40, 40)),
        ("summary_float_3d", randn(20, 10, 10)),
        ("summary_float_3d_narrow", randn(10, 3, 50)),
        ("summary_float_4d", randn(8, 8, 4, 5)),
        ("summary_column", randn(1001, 1)),
        ("summary_bool", torch.rand(2000) > 0.5),
        ("summary_float16", randn(1100, dtype=torch.float16)),
        ("summary_sci_hidden_middle", torch.cat([torch.ones(3), torch.full((1000,), 1e-9),
                                                 torch.full((3,), 2.0)])),
        ("summary_exactly_threshold", torch.arange(1000.0)),
    ]


def wrap_cases():
    return [
        ("wrap_float_1d", randn(30)),
        ("wrap_int_1d", torch.arange(100)),
        ("wrap_float_2d", randn(4, 25)),
        ("wrap_float64_1d", randn(20, dtype=torch.float64)),
        ("wrap_sci_1d", randn(12) * 1e-6),
        ("wrap_3d", randn(2, 2, 15)),
        ("suffix_wraps_dtype", torch.rand(9, dtype=torch.float64)),
        ("suffix_wraps_grad", torch.rand(9, dtype=torch.float64).requires_grad_()),
        ("suffix_second_wraps", torch.rand(4, dtype=torch.float64).requires_grad_()),
        # "dtype=torch.int32" passes column 80 where "dtype=kiln.int32" would not.
        ("suffix_wraps_torch_length", torch.arange(34).remainder(10).reshape(2, 17).int()),
        ("suffix_wraps_torch_length_f64", torch.arange(34.0).remainder(10).reshape(2, 17).double()),
    ]


def dtype_cases():
    return [
        ("float16_1d", randn(6, dtype=torch.float16)),
        ("bfloat16_1d", randn(6, dtype=torch.bfloat16)),
        ("bfloat16_2d", randn(2, 3, dtype=torch.bfloat16) * 100),
        ("float64_1d", randn(5, dtype=torch.float64)),
        ("int32_1d", torch.arange(-3, 4, dtype=torch.int32)),
        ("int8_1d", torch.tensor([-128, 0, 127], dtype=torch.int8)),
        ("uint8_1d", torch.tensor([0, 7, 255], dtype=torch.uint8)),
        ("bool_1d", torch.tensor([True, False, True])),
        ("bool_all_true", torch.tensor([True, True])),
        ("bool_2d", torch.tensor([[True, False], [False, False]])),
    ]


def grad_cases():
    x = randn(3).requires_grad_()
    return [
        ("grad_1d", x),
        ("grad_scalar", torch.tensor(2.0, requires_grad=True)),
        ("grad_float64_2d", randn(2, 2, dtype=torch.float64).requires_grad_()),
        ("grad_fn_mul", x * 2),
        ("grad_fn_sum", x.sum()),
    ]


def device_cases():
    return [
        ("device_1d", torch.tensor([1.0, 2.0])),
        ("device_int32", torch.tensor([1, 2], dtype=torch.int32)),
        ("device_float64_grad", torch.tensor([0.5, 1.5], dtype=torch.float64).requires_grad_()),
        ("device_empty", torch.zeros(0, 2)),
        ("device_wraps", torch.rand(9, dtype=torch.float64)),
    ]


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def kind_of(t):
    if t.dtype == torch.bool:
        return "bool"
    return "float" if t.dtype.is_floating_point else "int"


def value_text(t):
    flat = t.detach().reshape(-1)
    if kind_of(t) == "float":
        return [repr(v) for v in flat.to(torch.float64).tolist()]
    return [str(int(v)) for v in flat.to(torch.int64).tolist()]


def case_text(name, t, device=""):
    lines = repr(t).replace("torch.", "kiln.").split("\n")
    head = "dtype {} default {} kind {} requires_grad {}".format(
        dtype_name(t.dtype), int(t.dtype in DEFAULT_DTYPES), kind_of(t), int(t.requires_grad))
    out = ["case " + name, head]
    if t.grad_fn is not None:
        out.append("grad_fn " + type(t.grad_fn).__name__)
    if device:
        out.append("device " + device)
    out.append(" ".join(["sizes"] + [str(s) for s in t.shape]))
    out.append(" ".join(["values"] + value_text(t)))
    out.append("expect {}".format(len(lines)))
    return out + lines + ["end"]


def main():
    torch.manual_seed(0)
    groups = [scalar_cases, vector_cases, nd_cases, empty_cases, summary_cases, wrap_cases,
              dtype_cases, grad_cases]
    out = []
    count = 0
    for group in groups:
        for name, t in group():
            out += case_text(name, t)
            count += 1
    with pretend_default_device("cuda"):
        for name, t in device_cases():
            out += case_text(name, t, device=str(t.device))
            count += 1
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "print_cases.txt")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote {} cases to {}".format(count, path))


if __name__ == "__main__":
    main()
