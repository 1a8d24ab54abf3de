#!/usr/bin/env python3
"""Writes tests/golden/nn_cases.txt: inputs, weights, outputs and gradients of kiln::nn's modules,
functional layers and losses, computed by PyTorch (run with Debian's /usr/bin/python3).

Format, one item per line ('#' starts a comment):
  t <case> <field> <dtype> [<d0>,<d1>,...] <values...>    a tensor, values in row-major order
  s <case> <field> <text...>                             a string field (the rest of the line)
Tensors are float64 unless the dtype says int64; gradients are named "grad_<input>" and are the
gradients of sum(out * gy) (gy given) or of a scalar output. (Modules print in libtorch's C++
format, not Python's repr: tests/nn/test_module.cpp has libtorch's strings.) The tests parse this
file without a library (tests/nn/golden.h).
"""
import math
import os

import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
lines = []


def fmt(v):
    return repr(float(v)) if not isinstance(v, int) else str(v)


def put(case, field, t):
    t = t.detach()
    dtype = "int64" if t.dtype == torch.int64 else "float64"
    values = t.reshape(-1).tolist()
    shape = ",".join(str(s) for s in t.shape)
    text = " ".join(str(v) if dtype == "int64" else repr(float(v)) for v in values)
    lines.append(f"t {case} {field} {dtype} [{shape}] {text}".rstrip())


def put_str(case, field, text):
    lines.append(f"s {case} {field} {text}")


def leaf(*shape, low=-1.0, high=1.0):
    return (torch.rand(*shape) * (high - low) + low).requires_grad_()


def record(case, inputs, out, scalar=False):
    """Stores inputs, out and the gradients of inputs that require grad."""
    for name, t in inputs.items():
        put(case, name, t)
    put(case, "out", out)
    if scalar:
        out.backward()
    else:
        gy = torch.rand(out.shape) * 2 - 1
        put(case, "gy", gy)
        (out * gy).sum().backward()
    for name, t in inputs.items():
        if t.requires_grad:
            put(case, "grad_" + name, t.grad)


def linear_cases():
    x, w, b = leaf(4, 3), leaf(2, 3), leaf(2)
    record("linear", {"x": x, "w": w, "b": b}, F.linear(x, w, b))
    x, w = leaf(2, 3, 4), leaf(5, 4)
    record("linear_3d_nobias", {"x": x, "w": w}, F.linear(x, w))


def conv_cases():
    configs = [
        ("conv_basic", 2, 3, 7, 6, 4, (3, 3), 1, 0, 1, 1, True),
        ("conv_stride_pad", 2, 3, 7, 6, 4, (3, 3), 2, 1, 1, 1, True),
        ("conv_dilation", 1, 2, 9, 8, 3, (3, 3), 1, 2, 2, 1, True),
        ("conv_groups", 2, 6, 5, 5, 9, (3, 3), 1, 1, 1, 3, True),
        ("conv_depthwise", 1, 4, 6, 6, 4, (3, 3), 1, 1, 1, 4, False),
        ("conv_rect", 2, 3, 8, 7, 5, (3, 2), (2, 1), (1, 0), (1, 2), 1, True),
        ("conv_1x1", 3, 4, 5, 5, 6, (1, 1), 1, 0, 1, 1, True),
        ("conv_odd_stride", 1, 2, 6, 6, 2, (1, 1), 2, 0, 1, 1, True),
        ("conv_c16", 2, 16, 6, 6, 32, (3, 3), 1, 1, 1, 1, True),
        ("conv_c32_groups", 1, 32, 5, 5, 32, (3, 3), 2, 1, 1, 2, True),
    ]
    for name, n, c, h, w_, o, k, s, p, d, g, bias in configs:
        x = leaf(n, c, h, w_)
        w = leaf(o, c // g, *k)
        inputs = {"x": x, "w": w}
        b = None
        if bias:
            b = leaf(o)
            inputs["b"] = b
        out = F.conv2d(x, w, b, s, p, d, g)
        two = lambda v: v if isinstance(v, tuple) else (v, v)
        put_str(name, "geometry", " ".join(str(v) for v in (*two(s), *two(p), *two(d), g)))
        record(name, inputs, out)


def norm_cases():
    x, w, b = leaf(2, 3, 4), leaf(4), leaf(4)
    record("layer_norm_1", {"x": x, "w": w, "b": b}, F.layer_norm(x, [4], w, b))
    x, w, b = leaf(2, 3, 4), leaf(3, 4), leaf(3, 4)
    record("layer_norm_2", {"x": x, "w": w, "b": b}, F.layer_norm(x, [3, 4], w, b, 1e-3))
    # BatchNorm2d: three training steps, then evaluation
    bn = torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.weight.copy_(torch.rand(3) + 0.5)
        bn.bias.copy_(torch.rand(3) - 0.5)
    put("batchnorm", "weight", bn.weight)
    put("batchnorm", "bias", bn.bias)
    for step in range(3):
        x = (torch.rand(4, 3, 5, 5) * (step + 1) + step).requires_grad_()
        out = bn(x)
        gy = torch.rand(out.shape) * 2 - 1
        (out * gy).sum().backward()
        put("batchnorm", f"x{step}", x)
        put("batchnorm", f"out{step}", out)
        put("batchnorm", f"gy{step}", gy)
        put("batchnorm", f"grad_x{step}", x.grad)
    put("batchnorm", "grad_weight", bn.weight.grad)
    put("batchnorm", "grad_bias", bn.bias.grad)
    put("batchnorm", "running_mean", bn.running_mean)
    put("batchnorm", "running_var", bn.running_var)
    bn.eval()
    x = torch.rand(2, 3, 5, 5) * 3
    put("batchnorm", "x_eval", x)
    put("batchnorm", "out_eval", bn(x))


def embedding_cases():
    w = leaf(10, 3)
    idx = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])
    record("embedding", {"w": w, "idx": idx}, F.embedding(idx, w))
    w = leaf(6, 2)
    idx = torch.tensor([0, 2, 0, 5, 2])
    record("embedding_pad", {"w": w, "idx": idx}, F.embedding(idx, w, padding_idx=0))


def softmax_cases():
    x = leaf(3, 5, low=-3, high=3)
    record("softmax_1", {"x": x}, F.softmax(x, 1))
    x = leaf(3, 5, low=-3, high=3)
    record("softmax_0", {"x": x}, F.softmax(x, 0))
    x = leaf(2, 3, 4, low=-3, high=3)
    record("log_softmax_1", {"x": x}, F.log_softmax(x, 1))
    x = torch.tensor([1000.0, 0.0], requires_grad=True)
    record("stable_softmax", {"x": x}, F.softmax(x, 0))
    x = torch.tensor([[1000.0, 0.0, -1000.0], [-5.0, 3.0, 1e4]], requires_grad=True)
    record("stable_log_softmax", {"x": x}, F.log_softmax(x, 1))


def loss_cases():
    for red in ("mean", "sum", "none"):
        x, t = leaf(3, 4), torch.rand(3, 4)
        record(f"mse_{red}", {"x": x, "t": t}, F.mse_loss(x, t, reduction=red), red != "none")
        x = leaf(5, 4, low=-3, high=3)
        t = torch.tensor([0, 3, 1, 3, 2])
        record(f"ce_idx_{red}", {"x": x, "t": t}, F.cross_entropy(x, t, reduction=red),
               red != "none")
        x = leaf(3, 4, low=-3, high=3)
        t = torch.softmax(torch.rand(3, 4) * 4, 1)
        record(f"ce_prob_{red}", {"x": x, "t": t}, F.cross_entropy(x, t, reduction=red),
               red != "none")
        x, t, w = leaf(3, 2, low=0.01, high=0.99), torch.rand(3, 2), torch.rand(3, 2)
        record(f"bce_{red}", {"x": x, "t": t, "w": w},
               F.binary_cross_entropy(x, t, w, reduction=red), red != "none")
        x, t = leaf(3, 2, low=-5, high=5), torch.rand(3, 2)
        pw = torch.rand(2) * 2
        record(f"bce_logits_{red}", {"x": x, "t": t, "pw": pw},
               F.binary_cross_entropy_with_logits(x, t, reduction=red, pos_weight=pw),
               red != "none")
    x, t, w = leaf(6, 4, low=-3, high=3), torch.tensor([0, 3, -1, 1, 3, -1]), torch.rand(4) + 0.5
    record("ce_weight_ignore", {"x": x, "t": t, "w": w},
           F.cross_entropy(x, t, w, ignore_index=-1), True)
    x, t, w = leaf(3, 4, low=-3, high=3), torch.softmax(torch.rand(3, 4), 1), torch.rand(4)
    record("ce_prob_weight", {"x": x, "t": t, "w": w}, F.cross_entropy(x, t, w), True)
    x, t = leaf(2, 3, 4, low=-3, high=3), torch.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])
    record("ce_spatial", {"x": x, "t": t}, F.cross_entropy(x, t), True)
    x, t = leaf(4, low=-3, high=3), torch.tensor(2)
    record("ce_unbatched", {"x": x, "t": t}, F.cross_entropy(x, t), True)
    x, t, w = leaf(5, 3, low=-3, high=0), torch.tensor([2, 0, 1, 1, 0]), torch.rand(3) + 0.5
    record("nll_weight", {"x": x, "t": t, "w": w}, F.nll_loss(x, t, w), True)
    x = torch.tensor([100.0, -100.0, 0.0, 30.0], requires_grad=True)
    t = torch.tensor([0.0, 1.0, 0.5, 1.0])
    record("bce_logits_extreme", {"x": x, "t": t}, F.binary_cross_entropy_with_logits(x, t), True)
    x = torch.tensor([0.0, 1.0, 0.5, 1.0], requires_grad=True)
    t = torch.tensor([0.0, 1.0, 0.5, 0.0])
    put("bce_extreme", "x", x)
    put("bce_extreme", "t", t)
    put("bce_extreme", "out", F.binary_cross_entropy(x, t, reduction="none"))
    # the numerical stability examples of "Effective PyTorch"
    logits = torch.tensor([1000.0, 0.0], requires_grad=True)
    labels = torch.tensor([0.5, 0.5])
    record("stable_ce", {"x": logits, "t": labels}, F.cross_entropy(logits, labels), True)


def index_cases():
    x = leaf(3, 4)
    idx = torch.tensor([[0, 2, 2, 1], [1, 1, 0, 0]])
    record("gather_0", {"x": x, "idx": idx}, torch.gather(x, 0, idx))
    x = leaf(3, 4)
    idx = torch.tensor([[3, 3], [0, 1], [2, 3]])
    record("gather_1", {"x": x, "idx": idx}, torch.gather(x, 1, idx))
    x = leaf(4, 3)
    idx = torch.tensor([3, 0, 3, 3, 1])
    record("index_select_0", {"x": x, "idx": idx}, torch.index_select(x, 0, idx))
    x = leaf(2, 4, 3)
    idx = torch.tensor([2, 2, 0])
    record("index_select_1", {"x": x, "idx": idx}, torch.index_select(x, 1, idx))
    x, src = leaf(4, 3), leaf(5, 3)
    idx = torch.tensor([3, 0, 3, 3, 1])
    record("index_add", {"x": x, "idx": idx, "src": src}, torch.index_add(x, 0, idx, src))
    x, src = leaf(3, 5), leaf(3, 4)
    idx = torch.tensor([[0, 2, 2, 1], [1, 1, 0, 0], [3, 3, 3, 0]])
    record("scatter_add", {"x": x, "idx": idx, "src": src}, torch.scatter_add(x, 1, idx, src))


def clip_cases():
    for norm_type in (2.0, 1.0, math.inf):
        grads = [torch.rand(3, 2) * 4 - 2, torch.rand(4) * 4 - 2]
        case = f"clip_{norm_type}"
        params = []
        for i, g in enumerate(grads):
            p = torch.zeros(g.shape, requires_grad=True)
            p.grad = g.clone()
            params.append(p)
            put(case, f"g{i}", g)
        total = torch.nn.utils.clip_grad_norm_(params, 1.5, norm_type)
        put(case, "total", total)
        for i, p in enumerate(params):
            put(case, f"clipped{i}", p.grad)


def naming_cases():
    nn = torch.nn
    checker = nn.Sequential(
        nn.Conv2d(2, 256, 1), nn.BatchNorm2d(256), nn.ReLU(),
        nn.Conv2d(256, 256, 1), nn.BatchNorm2d(256), nn.ReLU(),
        nn.Conv2d(256, 256, 1), nn.BatchNorm2d(256), nn.ReLU(),
        nn.Conv2d(256, 1, 1))
    put_str("checkerboard", "names",
            " ".join(f"{n}:{'x'.join(map(str, p.shape))}" for n, p in checker.named_parameters()))
    put_str("checkerboard", "buffers", " ".join(n for n, _ in checker.named_buffers()))
    class Merge(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear1 = nn.Linear(5, 10)
            self.linear2 = nn.Linear(6, 10)

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.merge = Merge()
            self.head = nn.Sequential(nn.ReLU(), nn.Linear(10, 1, bias=False))

    outer = Outer()
    put_str("nested", "names", " ".join(n for n, _ in outer.named_parameters()))
    put_str("nested", "modules", " ".join(n or "<root>" for n, _ in outer.named_modules()))


def main():
    for make in (linear_cases, conv_cases, norm_cases, embedding_cases, softmax_cases,
                 loss_cases, index_cases, clip_cases, naming_cases):
        make()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_cases.txt")
    with open(path, "w") as f:
        f.write(f"# Written by make_nn_golden.py with PyTorch {torch.__version__}; do not edit.\n")
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} lines to {path}")


if __name__ == "__main__":
    main()
