#!/usr/bin/python3
"""Writes the golden data of kiln's optimizer and LR-scheduler tests, computed by PyTorch 1.13.
Run with a Python that has torch (Debian's python3-torch):

    /usr/bin/python3 tests/golden/make_optim_golden.py

optim_cases.txt holds everything the C++ side needs (tests/optim/golden.cpp parses it); the test
regenerates nothing and needs no autograd for the optimizer cases, because it sets each
parameter's gradient to the recorded one before each step. Records, one per line:

    config <name> <sgd|adam|adamw|rmsprop|adagrad> <steps>   an optimizer configuration
    group <count> <param indices...> <key> <value> ...
                                                 a param group with all its options (PyTorch's
                                                 names; betas as beta1/beta2; bools as 0/1)
    param <i> <ndim> <sizes...> <values...>      initial value of parameter i (float32)
    step <s>                                     the gradients and results of step s follow
    grad <i> <values...> | grad <i> none         gradient of parameter i (none: p.grad is None)
    after <i> <values...>                        parameter i after optimizer.step()
    state <i> <key> <ndim> <sizes...> <values...>  state_dict()['state'][i][key] after the last step
    end

    scheduler <name> <steplr|cosine> <epochs> <key> <value> ...
    lrs <epoch> <lr per group...>                get_last_lr() after `epoch` scheduler steps
    end

    curvefit <steps> <lr> <batch>                Effective PyTorch's curve fit (5x^2 + 3)
    w0 <values...>                               the initial w ([3, 1])
    x <s> <values...>                            the batch of step s
    loss <s> <value>                             mse loss of step s (before its update)
    w <values...>                                w after the last step
    end

Values: floats as Python's repr of the float64 (float32 values are exact in it; nan, inf).
"""
import math
import os
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 20


def fmt(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def values(t):
    return " ".join(fmt(v) for v in t.detach().reshape(-1).double().tolist())


def shaped(t):
    return " ".join([str(t.dim())] + [str(s) for s in t.shape] + [values(t)])


def group_line(group, index_of):
    ids = [index_of[id(p)] for p in group["params"]]
    words = ["group", str(len(ids))] + [str(i) for i in ids]
    for key in ("lr", "momentum", "dampening", "weight_decay", "nesterov", "eps", "amsgrad",
                "maximize", "alpha", "centered", "lr_decay", "initial_accumulator_value"):
        if key in group:
            words += [key, fmt(group[key])]
    if "betas" in group:
        words += ["beta1", fmt(group["betas"][0]), "beta2", fmt(group["betas"][1])]
    return " ".join(words)


def make_params(gen):
    # One parameter big enough for PyTorch's vectorized loops, one small, one 0-dim.
    shapes = [(4, 5), (3,), ()]
    return [torch.randn(s, generator=gen).requires_grad_() for s in shapes]


def make_grads(gen, params, none_at):
    """Per-step gradients; none_at: set of (step, param index) whose gradient is None."""
    grads = []
    for s in range(STEPS):
        row = []
        for i, p in enumerate(params):
            if (s, i) in none_at:
                row.append(None)
            else:
                scale = 10.0 ** (i - 1)  # gradients of different magnitudes: 0.1, 1, 10
                row.append(torch.randn(p.shape, generator=gen) * scale)
        grads.append(row)
    return grads


def optim_config(out, name, kind, make_optimizer, none_at=()):
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    params = make_params(gen)
    grads = make_grads(gen, params, set(none_at))
    optimizer = make_optimizer(params)
    index_of = {id(p): i for i, p in enumerate(params)}
    out.append("config %s %s %d" % (name, kind, STEPS))
    for group in optimizer.param_groups:
        out.append(group_line(group, index_of))
    for i, p in enumerate(params):
        out.append("param %d %s" % (i, shaped(p)))
    for s in range(STEPS):
        out.append("step %d" % s)
        for i, p in enumerate(params):
            g = grads[s][i]
            p.grad = None if g is None else g.clone()
            out.append("grad %d %s" % (i, "none" if g is None else values(g)))
        optimizer.step()
        for i, p in enumerate(params):
            out.append("after %d %s" % (i, values(p)))
    for i, st in sorted(optimizer.state_dict()["state"].items()):
        for key, t in sorted(st.items()):
            if t is None:  # SGD without momentum keeps momentum_buffer = None
                continue
            out.append("state %d %s %s" % (i, key, shaped(torch.as_tensor(t))))
    out.append("end")


def optimizer_cases(out):
    O = torch.optim
    optim_config(out, "sgd_plain", "sgd", lambda ps: O.SGD(ps, lr=0.1))
    optim_config(out, "sgd_momentum", "sgd", lambda ps: O.SGD(ps, lr=0.05, momentum=0.9))
    optim_config(out, "sgd_dampening", "sgd",
                 lambda ps: O.SGD(ps, lr=0.05, momentum=0.9, dampening=0.3))
    optim_config(out, "sgd_nesterov", "sgd",
                 lambda ps: O.SGD(ps, lr=0.05, momentum=0.9, nesterov=True))
    optim_config(out, "sgd_weight_decay", "sgd",
                 lambda ps: O.SGD(ps, lr=0.05, weight_decay=0.1))
    optim_config(out, "sgd_all", "sgd",
                 lambda ps: O.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4))
    optim_config(out, "sgd_maximize_missing_grads", "sgd",
                 lambda ps: O.SGD(ps, lr=0.02, momentum=0.5, maximize=True),
                 none_at=[(0, 1), (1, 1), (5, 1), (7, 0)])
    optim_config(out, "adam", "adam", lambda ps: O.Adam(ps, lr=0.01))
    optim_config(out, "adam_options", "adam",
                 lambda ps: O.Adam(ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1))
    optim_config(out, "adam_amsgrad", "adam", lambda ps: O.Adam(ps, lr=0.01, amsgrad=True))
    optim_config(out, "adam_missing_grads", "adam", lambda ps: O.Adam(ps, lr=0.01),
                 none_at=[(0, 2), (3, 1), (4, 1), (10, 0)])
    optim_config(out, "adamw", "adamw", lambda ps: O.AdamW(ps, lr=0.01))
    optim_config(out, "adamw_amsgrad", "adamw",
                 lambda ps: O.AdamW(ps, lr=0.01, weight_decay=0.1, amsgrad=True))
    optim_config(out, "sgd_two_groups", "sgd", lambda ps: O.SGD(
        [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.01, "nesterov": True}],
        lr=0.1, momentum=0.9))
    optim_config(out, "adam_two_groups", "adam", lambda ps: O.Adam(
        [{"params": ps[:2], "amsgrad": True}, {"params": ps[2:], "lr": 0.001}], lr=0.01))
    optim_config(out, "rmsprop", "rmsprop", lambda ps: O.RMSprop(ps, lr=0.01))
    optim_config(out, "rmsprop_centered_momentum", "rmsprop",
                 lambda ps: O.RMSprop(ps, lr=0.005, alpha=0.9, eps=1e-6, weight_decay=0.1,
                                      momentum=0.8, centered=True))
    optim_config(out, "rmsprop_maximize_missing_grads", "rmsprop",
                 lambda ps: O.RMSprop(ps, lr=0.01, momentum=0.5, maximize=True),
                 none_at=[(0, 1), (2, 1), (6, 0)])
    optim_config(out, "adagrad", "adagrad", lambda ps: O.Adagrad(ps, lr=0.1))
    optim_config(out, "adagrad_options", "adagrad",
                 lambda ps: O.Adagrad(ps, lr=0.05, lr_decay=0.01, weight_decay=0.1,
                                      initial_accumulator_value=0.5, eps=1e-6))
    optim_config(out, "adagrad_two_groups_missing_grads", "adagrad", lambda ps: O.Adagrad(
        [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.01, "maximize": True}], lr=0.1),
        none_at=[(0, 0), (1, 2), (4, 2)])


def scheduler_case(out, name, kind, epochs, lrs, make, args):
    params = [torch.zeros(1, requires_grad=True) for _ in lrs]
    optimizer = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, lrs)], lr=1.0)
    scheduler = make(optimizer)
    words = ["scheduler", name, kind, str(epochs)]
    for key, v in args:
        words += [key, fmt(v)]
    out.append(" ".join(words))
    out.append("lrs 0 " + " ".join(fmt(v) for v in scheduler.get_last_lr()))
    for epoch in range(1, epochs + 1):
        optimizer.step()
        scheduler.step()
        out.append("lrs %d %s" % (epoch, " ".join(fmt(v) for v in scheduler.get_last_lr())))
    out.append("end")


def scheduler_cases(out):
    S = torch.optim.lr_scheduler
    scheduler_case(out, "steplr", "steplr", 12, [0.1, 0.05],
                   lambda o: S.StepLR(o, step_size=3, gamma=0.5),
                   [("step_size", 3), ("gamma", 0.5)])
    scheduler_case(out, "steplr_default_gamma", "steplr", 7, [1.0],
                   lambda o: S.StepLR(o, step_size=2), [("step_size", 2)])
    scheduler_case(out, "cosine", "cosine", 45, [0.1, 0.02],
                   lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
                   [("T_max", 10), ("eta_min", 0.001)])
    scheduler_case(out, "cosine_no_min", "cosine", 9, [0.3],
                   lambda o: S.CosineAnnealingLR(o, T_max=4), [("T_max", 4)])


def curve_fit(out, steps=50, lr=0.1, batch=100):
    """Effective PyTorch's curve fit, with its random draws replaced by recorded ones."""
    gen = torch.Generator().manual_seed(2024)
    w = torch.randn([3, 1], generator=gen).requires_grad_()
    opt = torch.optim.Adam([w], lr)
    out.append("curvefit %d %s %d" % (steps, fmt(lr), batch))
    out.append("w0 " + values(w))
    for s in range(steps):
        x = torch.rand(batch, generator=gen) * 20 - 10
        y = 5 * x * x + 3
        f = torch.stack([x * x, x, torch.ones_like(x)], 1)
        yhat = torch.squeeze(f @ w, 1)
        loss = torch.nn.functional.mse_loss(yhat, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append("x %d %s" % (s, values(x)))
        out.append("loss %d %s" % (s, fmt(loss.item())))
    out.append("w " + values(w))
    out.append("end")


def main():
    torch.set_num_threads(1)
    out = ["# PyTorch %s optimizer, scheduler and curve-fit trajectories; written by "
           "make_optim_golden.py (see its docstring for the format)" % torch.__version__]
    optimizer_cases(out)
    scheduler_cases(out)
    curve_fit(out)
    path = os.path.join(HERE, "optim_cases.txt")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %s (%d lines)" % (path, len(out)))


if __name__ == "__main__":
    main()
