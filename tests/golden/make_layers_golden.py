#!/usr/bin/env python3
"""Writes tests/golden/layers_cases.txt: inputs, outputs and gradients of kiln::nn's pooling,
normalization and convolution layers beyond Conv2d/BatchNorm2d, computed by PyTorch (run with
Debian's /usr/bin/python3). The format is nn_cases.txt's (see make_nn_golden.py); every case
stores its inputs, "out" (and "indices" where a pooling returns them), "gy" and the gradients
"grad_<input>" of sum(out * gy), in float64.
"""
import os

import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
lines = []


def put(case, field, t):
    t = t.detach()
    dtype = "int64" if t.dtype == torch.int64 else "float64"
    values = t.reshape(-1).tolist()
    shape = ",".join(str(s) for s in t.shape)
    text = " ".join(str(v) if dtype == "int64" else repr(float(v)) for v in values)
    lines.append(f"t {case} {field} {dtype} [{shape}] {text}".rstrip())


def leaf(*shape, low=-1.0, high=1.0):
    return (torch.rand(*shape) * (high - low) + low).requires_grad_()


def record(case, inputs, out, indices=None):
    for name, t in inputs.items():
        put(case, name, t)
    put(case, "out", out)
    if indices is not None:
        put(case, "indices", indices)
    gy = torch.rand(out.shape) * 2 - 1
    put(case, "gy", gy)
    (out * gy).sum().backward()
    for name, t in inputs.items():
        if t.requires_grad:
            put(case, "grad_" + name, t.grad)


def pool_cases():
    # max pooling: (case, input shape, kernel, stride, padding, dilation, ceil_mode)
    for name, shape, k, s, p, d, ceil in [
        ("max_pool1d", (2, 3, 9), 3, 2, 1, 1, False),
        ("max_pool1d_ceil_dilated", (1, 2, 10), 2, 3, 1, 2, True),
        ("max_pool2d", (2, 3, 7, 6), 3, 2, 1, 1, False),
        ("max_pool2d_rect_ceil", (1, 2, 8, 7), (3, 2), (2, 1), (1, 0), (1, 2), True),
        ("max_pool2d_unbatched", (3, 5, 5), 2, None, 0, 1, False),
        ("max_pool3d", (1, 2, 5, 6, 4), (2, 3, 2), (2, 2, 1), (1, 1, 0), 1, True),
    ]:
        x = leaf(*shape)
        fn = {"1": F.max_pool1d, "2": F.max_pool2d, "3": F.max_pool3d}[name[8]]
        out, idx = fn(x, k, s, p, d, ceil, return_indices=True)
        record(name, {"x": x}, out, idx)
    # average pooling: (case, shape, kernel, stride, padding, ceil_mode, count_include_pad,
    # divisor_override)
    for name, shape, k, s, p, ceil, cip, div in [
        ("avg_pool1d", (2, 3, 9), 3, 2, 1, False, True, None),
        ("avg_pool1d_ceil_nopad", (1, 2, 10), 4, 3, 2, True, False, None),
        ("avg_pool2d", (2, 3, 7, 6), 3, 2, 1, False, True, None),
        ("avg_pool2d_ceil_exclude", (1, 2, 8, 7), (3, 2), (2, 3), (1, 1), True, False, None),
        ("avg_pool2d_divisor", (2, 2, 6, 5), 2, 1, 1, False, True, 3),
        ("avg_pool3d", (1, 2, 5, 6, 4), (2, 3, 2), (2, 2, 1), (1, 1, 0), True, True, None),
        ("avg_pool3d_exclude_divisor", (1, 1, 4, 5, 5), 3, 2, 1, True, False, 5),
    ]:
        x = leaf(*shape)
        if name.startswith("avg_pool1d"):
            out = F.avg_pool1d(x, k, s, p, ceil, cip)
        elif name.startswith("avg_pool2d"):
            out = F.avg_pool2d(x, k, s, p, ceil, cip, div)
        else:
            out = F.avg_pool3d(x, k, s, p, ceil, cip, div)
        record(name, {"x": x}, out)
    for name, shape, size in [
        ("adaptive_max_pool1d", (2, 3, 10), 4),
        ("adaptive_max_pool2d", (2, 2, 7, 9), (3, 4)),
        ("adaptive_max_pool2d_none", (1, 2, 5, 6), (2, None)),
        ("adaptive_max_pool3d", (1, 2, 5, 4, 7), (2, 3, 3)),
    ]:
        x = leaf(*shape)
        fn = {3: F.adaptive_max_pool1d, 4: F.adaptive_max_pool2d, 5: F.adaptive_max_pool3d}
        out, idx = fn[len(shape)](x, size, return_indices=True)
        record(name, {"x": x}, out, idx)
    for name, shape, size in [
        ("adaptive_avg_pool1d", (2, 3, 10), 4),
        ("adaptive_avg_pool2d", (2, 2, 7, 9), (3, 4)),
        ("adaptive_avg_pool2d_global", (2, 3, 5, 5), 1),
        ("adaptive_avg_pool3d", (1, 2, 5, 4, 7), (2, None, 3)),
    ]:
        x = leaf(*shape)
        fn = {3: F.adaptive_avg_pool1d, 4: F.adaptive_avg_pool2d, 5: F.adaptive_avg_pool3d}
        record(name, {"x": x}, fn[len(shape)](x, size))
    # LP pooling on positive inputs (a fractional power of a negative sum is 0 in both)
    x = leaf(2, 3, 9, low=0.1, high=1.0)
    record("lp_pool1d", {"x": x}, F.lp_pool1d(x, 2.0, 3, 2))
    x = leaf(1, 2, 7, 6, low=0.1, high=1.0)
    record("lp_pool2d", {"x": x}, F.lp_pool2d(x, 3.0, (3, 2), (2, 1), True))
    # max unpooling of a max pooling, with overlapping windows (repeated indices) in 2d
    for name, shape, k, s, p, size in [
        ("max_unpool1d", (2, 2, 9), 3, 2, 1, None),
        ("max_unpool2d_overlap", (1, 2, 7, 6), 3, 2, 1, (7, 6)),
        ("max_unpool2d_size", (1, 2, 6, 6), 2, 2, 0, (7, 7)),
        ("max_unpool3d", (1, 1, 4, 4, 6), 2, 2, 0, None),
    ]:
        pooled_input = torch.rand(*shape)
        pool = {3: F.max_pool1d, 4: F.max_pool2d, 5: F.max_pool3d}[len(shape)]
        unpool = {3: F.max_unpool1d, 4: F.max_unpool2d, 5: F.max_unpool3d}[len(shape)]
        pooled, idx = pool(pooled_input, k, s, p, return_indices=True)
        x = pooled.detach().clone().requires_grad_()
        put(name, "indices", idx)
        record(name, {"x": x}, unpool(x, idx, k, s, p, size))


def norm_cases():
    def stats(case, c):
        rm, rv = torch.rand(c) - 0.5, torch.rand(c) + 0.5
        put(case, "rm", rm)
        put(case, "rv", rv)
        return rm, rv

    x, w, b = leaf(4, 3, 5), leaf(3), leaf(3)
    rm, rv = stats("batch_norm_3d_train", 3)
    record("batch_norm_3d_train", {"x": x, "w": w, "b": b},
           F.batch_norm(x, rm, rv, w, b, True, 0.2, 1e-5))
    put("batch_norm_3d_train", "rm_after", rm)
    put("batch_norm_3d_train", "rv_after", rv)
    x, w, b = leaf(2, 3, 2, 3, 2), leaf(3), leaf(3)
    rm, rv = stats("batch_norm_5d_eval", 3)
    record("batch_norm_5d_eval", {"x": x, "w": w, "b": b},
           F.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-3))
    x, w, b = leaf(2, 3, 4, 5), leaf(3), leaf(3)
    rm, rv = stats("instance_norm", 3)
    record("instance_norm", {"x": x, "w": w, "b": b},
           F.instance_norm(x, rm, rv, w, b, True, 0.3, 1e-5))
    put("instance_norm", "rm_after", rm)
    put("instance_norm", "rv_after", rv)
    x = leaf(2, 3, 6)
    rm, rv = stats("instance_norm_eval", 3)
    record("instance_norm_eval", {"x": x}, F.instance_norm(x, rm, rv, use_input_stats=False))
    x = leaf(3, 4, 3, 2, 2)
    record("instance_norm_3d", {"x": x}, F.instance_norm(x))
    x, w, b = leaf(2, 6, 3, 4), leaf(6), leaf(6)
    record("group_norm", {"x": x, "w": w, "b": b}, F.group_norm(x, 3, w, b, 1e-5))
    x = leaf(3, 4, 5)
    record("group_norm_noaffine", {"x": x}, F.group_norm(x, 2, eps=1e-3))
    x = leaf(2, 5, 7)
    record("local_response_norm_3d", {"x": x}, F.local_response_norm(x, 3))
    x = leaf(2, 6, 3, 4)
    record("local_response_norm_4d", {"x": x}, F.local_response_norm(x, 4, 0.01, 0.6, 2.0))
    x = leaf(3, 4, 5)
    record("normalize", {"x": x}, F.normalize(x))
    x = leaf(3, 4, 5)
    record("normalize_p1", {"x": x}, F.normalize(x, 1.0, -1, 1e-3))


def conv_cases():
    x, w, b = leaf(2, 4, 9), leaf(6, 2, 3), leaf(6)
    record("conv1d", {"x": x, "w": w, "b": b}, F.conv1d(x, w, b, 2, 1, 2, 2))
    x, w = leaf(2, 3, 8), leaf(4, 3, 4)
    record("conv1d_same", {"x": x, "w": w}, F.conv1d(x, w, padding="same", dilation=1))
    for mode in ["reflect", "replicate", "circular"]:
        x, w, b = leaf(2, 3, 7), leaf(2, 3, 3), leaf(2)
        record("conv1d_" + mode, {"x": x, "w": w, "b": b},
               F.conv1d(F.pad(x, (2, 2), mode=mode), w, b))
    x, w, b = leaf(1, 2, 6, 5), leaf(3, 2, 3, 2), leaf(3)
    record("conv2d_reflect_same", {"x": x, "w": w, "b": b},
           F.conv2d(F.pad(x, (0, 1, 1, 1), mode="reflect"), w, b))
    x, w, b = leaf(2, 4, 5, 6, 5), leaf(6, 2, 3, 2, 3), leaf(6)
    record("conv3d", {"x": x, "w": w, "b": b},
           F.conv3d(x, w, b, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2))
    x, w = leaf(1, 2, 4, 5, 4), leaf(3, 2, 2, 3, 3)
    record("conv3d_same", {"x": x, "w": w}, F.conv3d(x, w, padding="same"))
    x, w, b = leaf(2, 4, 5), leaf(4, 3, 3), leaf(6)
    record("conv_transpose1d", {"x": x, "w": w, "b": b},
           F.conv_transpose1d(x, w, b, 2, 1, 1, 2, 2))
    x, w, b = leaf(2, 3, 4, 5), leaf(3, 2, 3, 2), leaf(2)
    record("conv_transpose2d", {"x": x, "w": w, "b": b},
           F.conv_transpose2d(x, w, b, (2, 3), (1, 0), (1, 2), 1, (1, 2)))
    x, w, b = leaf(1, 4, 3, 4, 3), leaf(4, 1, 3, 2, 2), leaf(2)
    record("conv_transpose3d", {"x": x, "w": w, "b": b},
           F.conv_transpose3d(x, w, b, (2, 1, 2), (1, 0, 1), (1, 0, 0), 2, 1))
    x = leaf(2, 3, 6, 5)
    record("unfold", {"x": x}, F.unfold(x, (2, 3), (1, 2), (1, 0), (2, 1)))
    x = leaf(2, 12, 12)
    record("fold", {"x": x}, F.fold(x, (5, 6), (2, 3), 1, (1, 0), (2, 1)))


def tile_cases():
    """Poolings whose windows tile the input (kiln views them instead of gathering)."""
    x = leaf(2, 3, 7, 6)
    record("avg_pool2d_tiles", {"x": x}, F.avg_pool2d(x, 2))
    x = leaf(1, 2, 4, 6, 5)
    out, idx = F.max_pool3d(x, (2, 3, 2), return_indices=True)
    record("max_pool3d_tiles", {"x": x}, out, idx)
    x = leaf(2, 2, 6, 8)
    out, idx = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
    record("adaptive_max_pool2d_tiles", {"x": x}, out, idx)
    x = leaf(2, 2, 6, 8)
    record("adaptive_avg_pool2d_tiles", {"x": x}, F.adaptive_avg_pool2d(x, (3, 2)))


def main():
    pool_cases()
    norm_cases()
    conv_cases()
    tile_cases()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers_cases.txt")
    with open(path, "w") as f:
        f.write("# PyTorch %s; written by make_layers_golden.py\n" % torch.__version__)
        f.write("\n".join(lines) + "\n")
    print("layers_cases.txt: %d lines" % len(lines))


if __name__ == "__main__":
    main()
