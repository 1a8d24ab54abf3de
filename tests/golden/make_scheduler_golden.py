#!/usr/bin/python3
"""Writes tests/golden/scheduler_cases.txt: the rates of PyTorch 1.13's LinearLR,
CosineAnnealingWarmRestarts, OneCycleLR, ReduceLROnPlateau and SequentialLR, for kiln's test
(tests/optim/test_more_schedulers.cpp, which builds the same schedulers by case name). Run with
a Python that has torch:

    /usr/bin/python3 tests/golden/make_scheduler_golden.py

Records, one per line:

    case <name> <lr per group...>     an SGD (or Adam, for names with "adam") optimizer, one
                                      group per lr; the test knows the scheduler of each name
    rates <step> <lr per group...> [momentum <per group...>]
                                      get_last_lr() (and each group's momentum or beta1) after
                                      construction (step 0) and after each step
    metric <step> <value>             ReduceLROnPlateau: the metric given to that step
    end

Values: Python's repr of the float64.
"""
import os
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
S = torch.optim.lr_scheduler


def momentum_of(group):
    return group["betas"][0] if "betas" in group else group["momentum"]


def case(out, name, lrs, make, steps, step=None, momentum=False, metrics=None):
    params = [torch.zeros(1, requires_grad=True) for _ in lrs]
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, lrs)]
    if "adam" in name:
        optimizer = torch.optim.Adam(groups, lr=1.0)
    else:
        optimizer = torch.optim.SGD(groups, lr=1.0, momentum=0.9 if momentum else 0)
    scheduler = make(optimizer)
    out.append("case %s %s" % (name, " ".join(repr(lr) for lr in lrs)))

    def record(s):
        # ReduceLROnPlateau of 1.13 has no get_last_lr(): its _last_lr is the groups' lrs
        last = getattr(scheduler, "get_last_lr", lambda: scheduler._last_lr)()
        words = ["rates", str(s)] + [repr(float(v)) for v in last]
        if momentum:
            words += ["momentum"] + [repr(float(momentum_of(g))) for g in optimizer.param_groups]
        out.append(" ".join(words))

    if not isinstance(scheduler, S.ReduceLROnPlateau):
        record(0)
    else:
        out.append("rates 0 " + " ".join(repr(g["lr"]) for g in optimizer.param_groups))
    for s in range(1, steps + 1):
        optimizer.step()
        if metrics is not None:
            out.append("metric %d %r" % (s, metrics[s - 1]))
            scheduler.step(metrics[s - 1])
        elif step is not None:
            step(scheduler, s)
        else:
            scheduler.step()
        record(s)
    out.append("end")


def main():
    warnings.simplefilter("ignore")  # step(epoch) is deprecated; SequentialLR uses it
    out = ["# PyTorch %s LR scheduler rates; written by make_scheduler_golden.py (see its "
           "docstring for the format)" % torch.__version__]
    case(out, "linear", [0.1, 0.05],
         lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4), 8)
    case(out, "linear_default", [1.0], lambda o: S.LinearLR(o), 7)
    case(out, "linear_decay", [0.3], lambda o: S.LinearLR(o, 1.0, 0.1, 6), 9)
    case(out, "warm_restarts", [0.1, 0.02],
         lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001), 20)
    case(out, "warm_restarts_mult1", [0.5], lambda o: S.CosineAnnealingWarmRestarts(o, 4), 10)
    # fractional epochs, as the documentation's example: step(epoch + i / iters)
    case(out, "warm_restarts_fractional", [0.1],
         lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
         24, step=lambda sch, s: sch.step((s - 1) // 4 + ((s - 1) % 4) / 4))
    case(out, "onecycle", [0.1, 0.05],
         lambda o: S.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=20), 20, momentum=True)
    case(out, "onecycle_adam_three_phase_linear", [0.001],
         lambda o: S.OneCycleLR(o, max_lr=0.01, epochs=3, steps_per_epoch=5,
                                anneal_strategy="linear", three_phase=True, pct_start=0.25,
                                div_factor=10, final_div_factor=100), 15, momentum=True)
    case(out, "onecycle_no_momentum", [0.1],
         lambda o: S.OneCycleLR(o, max_lr=0.3, total_steps=7, cycle_momentum=False), 7)
    metrics = [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.45, 0.46,
               0.47, 0.48, 0.49, 0.5, 0.51, 0.52]
    case(out, "plateau_min", [0.1, 0.2],
         lambda o: S.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1,
                                       min_lr=[0.01, 0.08]), len(metrics), metrics=metrics)
    case(out, "plateau_max_abs", [1.0],
         lambda o: S.ReduceLROnPlateau(o, mode="max", factor=0.1, patience=1, threshold=0.1,
                                       threshold_mode="abs"), len(metrics),
         metrics=[-m for m in metrics])
    case(out, "sequential", [0.1, 0.05],
         lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.5, total_iters=3),
                                      S.StepLR(o, step_size=2, gamma=0.5)], milestones=[3]), 10)
    case(out, "sequential_three", [1.0],
         lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.2, total_iters=2),
                                      S.CosineAnnealingLR(o, T_max=4, eta_min=0.1),
                                      S.CosineAnnealingWarmRestarts(o, T_0=2)],
                                  milestones=[2, 6]), 12)
    path = os.path.join(HERE, "scheduler_cases.txt")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %s (%d lines)" % (path, len(out)))


if __name__ == "__main__":
    main()
