#!/usr/bin/env python3
"""Writes tests/golden/loss_cases.txt: inputs, outputs and input gradients of the losses and
distances beyond kiln's first five (tests/nn/test_libtorch_losses.cpp), computed by PyTorch 1.13
in float64 (run with Debian's /usr/bin/python3).

The format is make_nn_golden.py's (tests/nn/golden.h reads both files): one tensor a line,
  t <case> <field> <dtype> [<d0>,<d1>,...] <values...>
Inputs that require grad have a "grad_<input>" field: the gradient of sum(out * gy) when the
case has a "gy" field (unreduced outputs), else of the scalar output.
"""
import os

import torch
import torch.nn.functional as F

torch.manual_seed(15)
torch.set_default_dtype(torch.float64)
lines = []


def put(case, field, t):
    t = t.detach()
    dtype = "int64" if t.dtype in (torch.int64, torch.int32) else "float64"
    values = t.reshape(-1).tolist()
    shape = ",".join(str(s) for s in t.shape)
    text = " ".join(str(int(v)) if dtype == "int64" else repr(float(v)) for v in values)
    lines.append(f"t {case} {field} {dtype} [{shape}] {text}".rstrip())


def leaf(*shape, low=-1.0, high=1.0):
    return (torch.rand(*shape) * (high - low) + low).requires_grad_()


def signs(*shape):
    return torch.randint(0, 2, shape).double() * 2 - 1


def record(case, inputs, out):
    """Stores inputs, out, and the gradients of the inputs that require grad."""
    for name, t in inputs.items():
        put(case, name, t)
    put(case, "out", out)
    if out.dim() == 0:
        loss = out
    else:
        gy = torch.rand(out.shape) * 2 - 1
        put(case, "gy", gy)
        loss = (out * gy).sum()
    wanted = [t for t in inputs.values() if t.requires_grad]
    grads = torch.autograd.grad(loss, wanted, allow_unused=True) if wanted else []
    names = [n for n, t in inputs.items() if t.requires_grad]
    for name, g in zip(names, grads):
        put(case, "grad_" + name, g if g is not None else torch.zeros_like(inputs[name]))


REDUCTIONS = ("mean", "sum", "none")


def regression_cases():
    for red in REDUCTIONS:
        x, t = leaf(3, 4, low=-2, high=2), torch.rand(3, 4) * 4 - 2
        record(f"l1_{red}", {"x": x, "t": t}, F.l1_loss(x, t, reduction=red))
        record(f"smooth_l1_{red}", {"x": x, "t": t},
               F.smooth_l1_loss(x, t, reduction=red, beta=0.5))
        record(f"huber_{red}", {"x": x, "t": t}, F.huber_loss(x, t, reduction=red, delta=0.7))
    x, t = leaf(3, 4, low=-2, high=2), torch.rand(3, 4) * 4 - 2
    record("smooth_l1_beta0", {"x": x, "t": t}, F.smooth_l1_loss(x, t, beta=0.0))
    record("smooth_l1_default", {"x": x, "t": t}, F.smooth_l1_loss(x, t))
    record("l1_broadcast", {"x": x, "t": t[0]}, F.l1_loss(x, t[0].expand(3, 4)))
    for red in REDUCTIONS + ("batchmean",):
        x = torch.log_softmax(torch.randn(3, 5), 1).requires_grad_()
        t = torch.softmax(torch.randn(3, 5), 1)
        t[0, 1] = 0.0
        record(f"kl_{red}", {"x": x, "t": t}, F.kl_div(x, t, reduction=red))
    x = torch.log_softmax(torch.randn(3, 5), 1).requires_grad_()
    t = torch.log_softmax(torch.randn(3, 5), 1).requires_grad_()
    record("kl_log_target", {"x": x, "t": t}, F.kl_div(x, t, reduction="sum", log_target=True))
    for red in REDUCTIONS:
        x, t = leaf(3, 4), torch.rand(3, 4) * 5
        record(f"poisson_{red}", {"x": x, "t": t}, F.poisson_nll_loss(x, t, reduction=red))
    x, t = leaf(3, 4, low=0.1, high=3), torch.tensor([[0., 1, 2, 3], [4, 0.5, 1.5, 7], [1, 2, 9, 0]])
    record("poisson_rate_full", {"x": x, "t": t},
           F.poisson_nll_loss(x, t, log_input=False, full=True, eps=1e-6))
    for red in REDUCTIONS:
        x, t, v = leaf(4, 3), torch.randn(4, 3), leaf(4, 3, low=0.1, high=2)
        with torch.no_grad():
            v[0, 0] = 1e-8  # below eps: counts as eps
        record(f"gauss_{red}", {"x": x, "t": t, "v": v},
               F.gaussian_nll_loss(x, t, v, reduction=red))
    x, t, v = leaf(4, 3), torch.randn(4, 3), leaf(4, low=0.1, high=2)
    record("gauss_homo", {"x": x, "t": t, "v": v}, F.gaussian_nll_loss(x, t, v, full=True))
    x, t, v = leaf(4, 3), torch.randn(4, 3), leaf(4, 1, low=0.1, high=2)
    record("gauss_homo1", {"x": x, "t": t, "v": v},
           F.gaussian_nll_loss(x, t, v, reduction="sum", eps=0.5))


def margin_cases():
    for red in REDUCTIONS:
        x1, x2, t = leaf(6), leaf(6), signs(6)
        record(f"ranking_{red}", {"x1": x1, "x2": x2, "t": t},
               F.margin_ranking_loss(x1, x2, t, margin=0.3, reduction=red))
        x = leaf(3, 4, low=-2, high=2)
        t = signs(3, 4)
        t[1, 2] = 2.0  # neither 1 nor -1: both terms
        record(f"hinge_{red}", {"x": x, "t": t},
               F.hinge_embedding_loss(x, t, margin=1.5, reduction=red))
        x, t = leaf(4, 5), torch.tensor([0, 3, 4, 1])
        record(f"multi_margin_{red}", {"x": x, "t": t}, F.multi_margin_loss(x, t, reduction=red))
        x = leaf(3, 5)
        t = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 4, -1, -1], [2, 4, 0, 1, 3]])
        record(f"multilabel_margin_{red}", {"x": x, "t": t},
               F.multilabel_margin_loss(x, t, reduction=red))
        x, t = leaf(3, 4, low=-3, high=3), signs(3, 4)
        record(f"soft_margin_{red}", {"x": x, "t": t}, F.soft_margin_loss(x, t, reduction=red))
        x, t, w = leaf(3, 4, low=-3, high=3), torch.rand(3, 4).round(), torch.rand(4)
        record(f"multilabel_soft_{red}", {"x": x, "t": t, "w": w},
               F.multilabel_soft_margin_loss(x, t, weight=w, reduction=red))
        x1, x2, t = leaf(4, 5), leaf(4, 5), signs(4)
        record(f"cos_emb_{red}", {"x1": x1, "x2": x2, "t": t},
               F.cosine_embedding_loss(x1, x2, t, margin=0.2, reduction=red))
        a, p, n = leaf(4, 5), leaf(4, 5), leaf(4, 5)
        record(f"triplet_{red}", {"a": a, "p": p, "n": n},
               F.triplet_margin_loss(a, p, n, margin=1.0, reduction=red))
    x, t, w = leaf(4, 5), torch.tensor([2, 2, 0, 4]), torch.rand(5)
    record("multi_margin_p2_weight", {"x": x, "t": t, "w": w},
           F.multi_margin_loss(x, t, p=2, margin=0.8, weight=w))
    x, t = leaf(5), torch.tensor(3)
    record("multi_margin_unbatched", {"x": x, "t": t}, F.multi_margin_loss(x, t, reduction="none"))
    x, t = leaf(5), torch.tensor([4, 4, 1, -1, 0])
    record("multilabel_margin_unbatched", {"x": x, "t": t},
           F.multilabel_margin_loss(x, t, reduction="none"))
    x, t = (torch.tensor([-100.0, 100.0, 40.0, -40.0]).requires_grad_(),
            torch.tensor([1.0, 1.0, -1.0, -1.0]))
    record("soft_margin_extreme", {"x": x, "t": t}, F.soft_margin_loss(x, t, reduction="none"))
    x1, x2, t = leaf(5), leaf(5), torch.tensor(-1.0)
    record("cos_emb_unbatched", {"x1": x1, "x2": x2, "t": t},
           F.cosine_embedding_loss(x1, x2, t, margin=-0.5))
    a, p, n = leaf(4, 5), leaf(4, 5), leaf(4, 5)
    record("triplet_swap_p1", {"a": a, "p": p, "n": n},
           F.triplet_margin_loss(a, p, n, margin=0.5, p=1, swap=True))
    record("triplet_distance_cos", {"a": a, "p": p, "n": n},
           F.triplet_margin_with_distance_loss(
               a, p, n, distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v),
               margin=0.7, swap=True, reduction="sum"))


def ctc_cases():
    # The gradients are those of logits z through log_softmax, as ctc_loss is used: PyTorch's
    # gradient with respect to log_probs itself has an extra exp(log_probs) term (its formula
    # assumes a log_softmax before it), which cancels through log_softmax; kiln's is the true one.
    steps, batch, classes = 6, 3, 5

    def ctc(z, targets, il, tl, **kwargs):
        return F.ctc_loss(z.log_softmax(-1), targets, torch.tensor(il), torch.tensor(tl),
                          **kwargs)

    for red in REDUCTIONS:
        z = leaf(steps, batch, classes, low=-2, high=2)
        targets = torch.tensor([[1, 2, 2], [3, 1, 0], [4, 0, 0]])
        record(f"ctc_{red}", {"z": z, "t": targets, "il": torch.tensor([6, 5, 4]),
                              "tl": torch.tensor([3, 2, 1])},
               ctc(z, targets, [6, 5, 4], [3, 2, 1], reduction=red))
    z = leaf(steps, batch, classes, low=-2, high=2)
    flat = torch.tensor([1, 1, 2, 3, 3])
    record("ctc_concat_blank4", {"z": z, "t": flat, "il": torch.tensor([6, 6, 5]),
                                 "tl": torch.tensor([2, 0, 3])},
           ctc(z, flat, [6, 6, 5], [2, 0, 3], blank=4, reduction="sum"))
    z = leaf(steps, batch, classes, low=-2, high=2)
    # sample 0 cannot be aligned: 4 labels with a repeat need 5 steps, it has 3
    targets = torch.tensor([[1, 1, 2, 3], [2, 3, 0, 0], [1, 0, 0, 0]])
    record("ctc_zero_infinity", {"z": z, "t": targets, "il": torch.tensor([3, 6, 6]),
                                 "tl": torch.tensor([4, 2, 1])},
           ctc(z, targets, [3, 6, 6], [4, 2, 1], reduction="none", zero_infinity=True))
    z = leaf(steps, classes, low=-2, high=2)
    targets = torch.tensor([2, 3, 3])
    record("ctc_unbatched", {"z": z, "t": targets, "il": torch.tensor([6]),
                             "tl": torch.tensor([3])},
           ctc(z, targets, [6], [3]))
    z = torch.rand(steps, batch, classes) * 4 - 2  # values only: sample 1 cannot be aligned
    targets = torch.tensor([[1, 2, 2], [3, 1, 0], [4, 0, 0]])
    record("ctc_impossible", {"z": z, "t": targets, "il": torch.tensor([6, 1, 4]),
                              "tl": torch.tensor([3, 2, 1])},
           ctc(z, targets, [6, 1, 4], [3, 2, 1], reduction="none"))


def classification_cases():
    for red in REDUCTIONS:
        x, t, w = leaf(5, 4, low=-2, high=2), torch.tensor([0, 3, -1, 2, 1]), torch.rand(4)
        record(f"ce_smooth_{red}", {"x": x, "t": t, "w": w},
               F.cross_entropy(x, t, weight=w, ignore_index=-1, reduction=red,
                               label_smoothing=0.15))
        x, t, w = leaf(2, 3, 2, 2), torch.tensor([[[0, 2], [1, -5]], [[2, 2], [0, 1]]]), torch.rand(3)
        record(f"nll_spatial_{red}", {"x": x, "t": t, "w": w},
               F.nll_loss(x, t, weight=w, ignore_index=-5, reduction=red))
    x, t = leaf(3, 4), torch.softmax(torch.randn(3, 4), 1)
    record("ce_prob_smooth", {"x": x, "t": t}, F.cross_entropy(x, t, label_smoothing=0.2))
    x, t, w = leaf(2, 3, 2), torch.softmax(torch.randn(2, 3, 2), 1), torch.rand(3)
    record("ce_prob_smooth_weight", {"x": x, "t": t, "w": w},
           F.cross_entropy(x, t, weight=w, label_smoothing=0.4))
    x, t = leaf(2, 3, 4), torch.tensor([[0, 1, 2, 1], [2, 2, 0, 1]])
    record("ce_spatial_smooth", {"x": x, "t": t}, F.cross_entropy(x, t, label_smoothing=0.3))
    x, t = leaf(4), torch.tensor(2)
    record("ce_unbatched_smooth", {"x": x, "t": t}, F.cross_entropy(x, t, label_smoothing=0.1))
    x, t, w = leaf(3, 4), torch.tensor([1, 0, 3]), torch.tensor([1.0, 0.0, 2.0, 0.5])
    record("ce_zero_weight_sum", {"x": x, "t": t, "w": w},
           F.cross_entropy(x, t, weight=w, reduction="sum", label_smoothing=0.1))
    x, t, w, pw = leaf(3, 4), torch.rand(3, 4), torch.rand(3, 1), torch.rand(4) * 3
    record("bce_logits_weights", {"x": x, "t": t, "w": w, "pw": pw},
           F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, reduction="none"))


def distance_cases():
    x1, x2 = leaf(3, 4), leaf(3, 4)
    with torch.no_grad():
        x1[0] = torch.tensor([1e-9, 2e-9, 0.0, 0.0])  # below eps: the clamped norm
    record("cos_sim", {"x1": x1, "x2": x2}, F.cosine_similarity(x1, x2, dim=1))
    x1, x2 = leaf(2, 3, 4), leaf(4)
    record("cos_sim_broadcast", {"x1": x1, "x2": x2}, F.cosine_similarity(x1, x2, dim=-1))
    for p in (2.0, 1.0, 3.0):
        x1, x2 = leaf(3, 4), leaf(3, 4)
        record(f"pairwise_p{int(p)}", {"x1": x1, "x2": x2}, F.pairwise_distance(x1, x2, p=p))
    x1, x2 = leaf(3, 4), leaf(3, 4)
    record("pairwise_keepdim", {"x1": x1, "x2": x2},
           F.pairwise_distance(x1, x2, eps=1e-3, keepdim=True))


def main():
    for make in (regression_cases, margin_cases, ctc_cases, classification_cases,
                 distance_cases):
        make()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loss_cases.txt")
    with open(path, "w") as f:
        f.write(f"# Written by make_loss_golden.py with PyTorch {torch.__version__}; "
                "do not edit.\n")
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} lines to {path}")


if __name__ == "__main__":
    main()
