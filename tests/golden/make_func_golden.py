#!/usr/bin/env python3
"""Writes tests/golden/func_cases.txt: inputs, outputs and gradients of the functional operators
and modules issue 15 added for libtorch's FunctionalTest and ModulesTest (embedding_bag,
embedding options, bilinear, pdist, affine_grid, grid_sample, fractional max pooling,
CrossMapLRN2d), computed by PyTorch (run with Debian's /usr/bin/python3). The format is
nn_cases.txt's (see make_nn_golden.py): every case stores its inputs, "out" (and "indices" where
a pooling returns them), "gy" and the gradients "grad_<input>" of sum(out * gy), in float64.
"""
import math
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
        if t.requires_grad and t.grad is not None:
            put(case, "grad_" + name, t.grad)


def embedding_cases():
    w = leaf(10, 3)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 3, 3, 6])
    record("embedding_bag_sum_padding", {"w": w, "idx": idx, "offsets": offsets},
           F.embedding_bag(idx, w, offsets, mode="sum", padding_idx=4))
    w = leaf(10, 3)
    idx = torch.tensor([[1, 2, 2, 5], [4, 3, 2, 9], [2, 2, 2, 2]])
    record("embedding_bag_mean_2d_padding", {"w": w, "idx": idx},
           F.embedding_bag(idx, w, mode="mean", padding_idx=2))
    w = leaf(8, 4)
    idx = torch.tensor([7, 0, 3, 3, 6, 1, 2])
    offsets = torch.tensor([0, 2, 2, 5, 7])
    record("embedding_bag_max_last_offset", {"w": w, "idx": idx, "offsets": offsets},
           F.embedding_bag(idx, w, offsets, mode="max", include_last_offset=True))
    w, psw = leaf(6, 3), leaf(7)
    idx = torch.tensor([0, 5, 2, 2, 4, 1, 0])
    offsets = torch.tensor([0, 4])
    record("embedding_bag_per_sample_weights",
           {"w": w, "psw": psw, "idx": idx, "offsets": offsets},
           F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=psw))
    w = leaf(6, 3)
    idx = torch.tensor([[0, 5, 5, 1], [5, 1, 3, 5]])
    record("embedding_bag_mean_scale_grad", {"w": w, "idx": idx},
           F.embedding_bag(idx, w, mode="mean", scale_grad_by_freq=True))
    w = leaf(7, 3)
    idx = torch.tensor([[1, 3, 3], [6, 1, 1]])
    record("embedding_scale_grad", {"w": w, "idx": idx},
           F.embedding(idx, w, scale_grad_by_freq=True))
    # max_norm renormalises the rows looked up, in place: the weight before and after
    w = torch.rand(6, 4) * 2
    before = w.clone()
    idx = torch.tensor([[0, 2], [5, 2]])
    out = F.embedding(idx, w, max_norm=1.5, norm_type=1.0)
    put("embedding_max_norm", "w", before)
    put("embedding_max_norm", "idx", idx)
    put("embedding_max_norm", "out", out)
    put("embedding_max_norm", "w_after", w)


def linear_cases():
    x1, x2, w, b = leaf(4, 3), leaf(4, 5), leaf(2, 3, 5), leaf(2)
    record("bilinear", {"x1": x1, "x2": x2, "w": w, "b": b}, F.bilinear(x1, x2, w, b))
    x1, x2, w = leaf(2, 3, 3), leaf(2, 3, 2), leaf(4, 3, 2)
    record("bilinear_3d_nobias", {"x1": x1, "x2": x2, "w": w}, F.bilinear(x1, x2, w))
    for name, p in [("pdist", 2.0), ("pdist_p1_5", 1.5), ("pdist_p1", 1.0),
                    ("pdist_inf", math.inf)]:
        x = leaf(5, 4)
        record(name, {"x": x}, F.pdist(x, p))


def vision_cases():
    for align in [False, True]:
        suffix = "_align" if align else ""
        theta = leaf(2, 2, 3)
        record("affine_grid_2d" + suffix, {"theta": theta},
               F.affine_grid(theta, [2, 3, 4, 5], align_corners=align))
        theta = leaf(2, 3, 4)
        record("affine_grid_3d" + suffix, {"theta": theta},
               F.affine_grid(theta, [2, 1, 3, 4, 2], align_corners=align))
    for mode in ["bilinear", "nearest"]:
        for padding in ["zeros", "border", "reflection"]:
            for align in [False, True]:
                name = f"grid_sample_{mode}_{padding}" + ("_align" if align else "")
                x, grid = leaf(2, 3, 4, 5), leaf(2, 3, 4, 2, low=-1.3, high=1.3)
                record(name, {"x": x, "grid": grid},
                       F.grid_sample(x, grid, mode, padding, align))
    for padding in ["zeros", "border", "reflection"]:
        for align in [False, True]:
            name = f"grid_sample_3d_{padding}" + ("_align" if align else "")
            x, grid = leaf(1, 2, 3, 4, 3), leaf(1, 2, 3, 2, 3, low=-1.3, high=1.3)
            record(name, {"x": x, "grid": grid},
                   F.grid_sample(x, grid, "bilinear", padding, align))
            name = f"grid_sample_3d_nearest_{padding}" + ("_align" if align else "")
            x, grid = leaf(1, 2, 3, 4, 3), leaf(1, 2, 3, 2, 3, low=-1.3, high=1.3)
            record(name, {"x": x, "grid": grid},
                   F.grid_sample(x, grid, "nearest", padding, align))


def pooling_cases():
    x, samples = leaf(2, 3, 9, 8), torch.rand(2, 3, 2)
    out, idx = F.fractional_max_pool2d(x, (3, 2), output_size=(4, 5), return_indices=True,
                                       _random_samples=samples)
    record("fractional_max_pool2d", {"x": x, "samples": samples}, out, idx)
    x, samples = leaf(3, 10, 7), torch.rand(1, 3, 2)
    out, idx = F.fractional_max_pool2d(x, 2, output_ratio=0.5, return_indices=True,
                                       _random_samples=samples)
    record("fractional_max_pool2d_ratio_unbatched", {"x": x, "samples": samples}, out, idx)
    x, samples = leaf(1, 2, 7, 7, 8), torch.rand(1, 2, 3)
    out, idx = F.fractional_max_pool3d(x, (2, 3, 2), output_size=(3, 4, 5),
                                       return_indices=True, _random_samples=samples)
    record("fractional_max_pool3d", {"x": x, "samples": samples}, out, idx)


def lrn_cases():
    for size, alpha, beta, k in [(3, 1e-2, 0.75, 1), (5, 0.3, 0.6, 2)]:
        x = leaf(2, 7, 3, 4)
        lrn = torch.nn.CrossMapLRN2d(size, alpha, beta, k)
        record(f"cross_map_lrn2d_{size}", {"x": x}, lrn(x))


embedding_cases()
linear_cases()
vision_cases()
pooling_cases()
lrn_cases()
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "func_cases.txt")
with open(path, "w") as f:
    f.write(f"# PyTorch {torch.__version__}; written by make_func_golden.py\n")
    f.write("\n".join(lines) + "\n")
