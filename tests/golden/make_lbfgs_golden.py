#!/usr/bin/python3
"""Writes tests/golden/lbfgs_cases.txt: torch.optim.LBFGS trajectories computed by PyTorch 1.13,
for kiln's L-BFGS test (tests/optim/test_lbfgs.cpp). Run with a Python that has torch:

    /usr/bin/python3 tests/golden/make_lbfgs_golden.py

Records, one per line:

    case <name> <rosenbrock|lstsq> <steps> <option> <value> ...   (line_search_fn as 0/1;
                                               float64 1 when the tensors are float64)
    param <i> <ndim> <sizes...> <values...>    initial value of parameter i
    data <name> <ndim> <sizes...> <values...>  a constant of the problem (lstsq: A, Y)
    step <s> <loss> <func_evals> <n_iter>      step()'s returned loss and the state's counters
    after <i> <values...>                      parameter i after the step
    end

The float32 cases check the arithmetic of L-BFGS's scalars (see Note [L-BFGS scalars] in
core/src/optim/lbfgs.cpp) over a few iterations; over many, the rounding of the reductions (dot
products, sums: BLAS's order here, kiln's there) grows on the Rosenbrock valley, so the longer
runs are float64, where it stays far below the tolerance.

The problems, written the same way on both sides:
    rosenbrock: x [n]; a = x[:-1], b = x[1:], u = b - a*a, v = 1 - a;
                loss = (100 * (u*u) + v*v).sum()
    lstsq:      W [3, 4], b [3]; r = A @ W.T + b - Y; loss = (r*r).mean()
Values: floats as Python's repr of the float64 (float32 values are exact in it).
"""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def values(t):
    return " ".join(repr(v) for v in t.detach().reshape(-1).double().tolist())


def shaped(t):
    return " ".join([str(t.dim())] + [str(s) for s in t.shape] + [values(t)])


def rosenbrock(params, data):
    x = params[0]
    a, b = x[:-1], x[1:]
    u = b - a * a
    v = 1 - a
    return (100 * (u * u) + v * v).sum()


def lstsq(params, data):
    w, b = params
    r = data["A"] @ w.t() + b - data["Y"]
    return (r * r).mean()


def case(out, name, problem, steps, params, data, **options):
    optimizer = torch.optim.LBFGS(params, **options)
    group = optimizer.param_groups[0]
    words = ["case", name, problem.__name__, str(steps)]
    for key in ("lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change",
                "history_size"):
        words += [key, repr(float(group[key]))]
    words += ["line_search_fn", "1" if group["line_search_fn"] == "strong_wolfe" else "0"]
    words += ["float64", "1" if params[0].dtype == torch.float64 else "0"]
    out.append(" ".join(words))
    for i, p in enumerate(params):
        out.append("param %d %s" % (i, shaped(p)))
    for key, t in data.items():
        out.append("data %s %s" % (key, shaped(t)))

    def closure():
        optimizer.zero_grad()
        loss = problem(params, data)
        loss.backward()
        return loss

    for s in range(steps):
        loss = optimizer.step(closure)
        state = optimizer.state[params[0]]
        out.append("step %d %s %d %d" % (s, repr(float(loss)), state["func_evals"],
                                         state["n_iter"]))
        for i, p in enumerate(params):
            out.append("after %d %s" % (i, values(p)))
    out.append("end")


def main():
    torch.set_num_threads(1)
    out = ["# PyTorch %s LBFGS trajectories; written by make_lbfgs_golden.py (see its "
           "docstring for the format)" % torch.__version__]
    start = torch.tensor([-1.2, 1.0, -0.5, 0.8, 1.5, -0.3])
    case(out, "rosenbrock_fixed_step", rosenbrock, 3, [start.clone().requires_grad_()], {},
         lr=0.01, max_iter=10)
    case(out, "rosenbrock_strong_wolfe_f32", rosenbrock, 1, [start.clone().requires_grad_()],
         {}, lr=1, max_iter=8, history_size=4, line_search_fn="strong_wolfe")
    case(out, "rosenbrock_strong_wolfe", rosenbrock, 4,
         [start.double().requires_grad_()], {}, lr=1, max_iter=8, history_size=4,
         line_search_fn="strong_wolfe")
    gen = torch.Generator().manual_seed(15)
    data = {"A": torch.randn(8, 4, generator=gen, dtype=torch.float64),
            "Y": torch.randn(8, 3, generator=gen, dtype=torch.float64)}
    params = [torch.randn(3, 4, generator=gen, dtype=torch.float64).requires_grad_(),
              torch.zeros(3, dtype=torch.float64).requires_grad_()]
    case(out, "lstsq_strong_wolfe", lstsq, 3, params, data, lr=0.5, max_iter=6,
         line_search_fn="strong_wolfe")
    path = os.path.join(HERE, "lbfgs_cases.txt")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %s (%d lines)" % (path, len(out)))


if __name__ == "__main__":
    main()
