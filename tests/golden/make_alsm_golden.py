#!/usr/bin/env python3
"""Writes tests/golden/alsm_cases.txt: torch.nn.AdaptiveLogSoftmaxWithLoss computed by PyTorch
(run with Debian's /usr/bin/python3), for kiln::nn::AdaptiveLogSoftmaxWithLoss. Each case stores
the module's weights (head_w, head_b, tail<i>_<j>_w for tail.i.j.weight), the input x and
target, forward's "out" and "loss", "log_prob" and "predict" of x, and the gradients
"grad_<name>" of loss (= -out.mean()) for the weights and x, in float64 (nn_cases.txt's format).
"""
import os

import torch

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


def record(case, in_features, n_classes, cutoffs, div_value, head_bias, x, target, scale=1.0):
    asm = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs,
                                              div_value=div_value, head_bias=head_bias)
    with torch.no_grad():  # larger weights, so that the head picks clusters for some rows
        for p in asm.parameters():
            p.mul_(scale)
    params = {"head_w": asm.head.weight}
    if head_bias:
        params["head_b"] = asm.head.bias
    for i, seq in enumerate(asm.tail):
        for j, lin in enumerate(seq):
            params[f"tail{i}_{j}_w"] = lin.weight
    for name, p in params.items():
        put(case, name, p)
    x = x.clone().requires_grad_()
    put(case, "x", x)
    put(case, "target", target)
    out, loss = asm(x, target)
    put(case, "out", out)
    put(case, "loss", loss)
    loss.backward()
    for name, p in params.items():  # tails no target falls in get no gradient
        if p.grad is not None:
            put(case, "grad_" + name, p.grad)
    put(case, "grad_x", x.grad)
    if x.dim() == 2:
        put(case, "log_prob", asm.log_prob(x))
        put(case, "predict", asm.predict(x))


record("alsm_two_tails_bias", 8, 10, [4, 8], 2.0, True, torch.randn(12, 8),
       torch.tensor([0, 9, 4, 3, 8, 5, 1, 7, 2, 6, 9, 4]), scale=3.0)
record("alsm_three_tails", 16, 20, [4, 10, 15], 2.0, False, torch.randn(9, 16),
       torch.tensor([0, 17, 4, 19, 11, 3, 15, 9, 10]), scale=2.0)
record("alsm_default_div_one_tail", 8, 4, [2], 4.0, False, torch.randn(5, 8),
       torch.tensor([3, 0, 2, 1, 3]), scale=4.0)
record("alsm_head_only_targets", 6, 7, [3, 5], 2.0, True, torch.randn(4, 6),
       torch.tensor([0, 2, 1, 2]))
record("alsm_unbatched", 8, 10, [4, 8], 2.0, False, torch.randn(8), torch.tensor(6))
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alsm_cases.txt")
with open(path, "w") as f:
    f.write(f"# PyTorch {torch.__version__}; written by make_alsm_golden.py\n")
    f.write("\n".join(lines) + "\n")
