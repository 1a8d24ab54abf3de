"""PyTorch counterpart of kiln-jit-bench: a chain of 8 pointwise operators on 16 floats, eager
and torch.jit.trace'd, in nanoseconds per operator (no grad), and the MLP of the examples (2 ->
64 -> 64 -> 1, batch 64) forward, eager and traced, in microseconds. Prints one JSON line. Run by
kiln-jit-bench with Debian's python3-torch; two threads."""
import json

import torch
from timing import median_seconds


def chain(x):
    y = x * 1.5
    y = y + 0.25
    y = torch.sin(y)
    y = y * y
    y = y - x
    y = torch.exp(y)
    y = torch.relu(y)
    return y / 3.0


def main():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    out = {}
    x = torch.rand(16)
    traced = torch.jit.trace(chain, x)
    mlp = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                              torch.nn.ReLU(), torch.nn.Linear(64, 1))
    xm = torch.rand(64, 2)
    traced_mlp = torch.jit.trace(mlp, xm)
    with torch.no_grad():
        out["chain8_eager_ns_per_op"] = median_seconds(lambda: chain(x), 5000, 15) * 1e9 / 8
        out["chain8_traced_ns_per_op"] = median_seconds(lambda: traced(x), 5000, 15) * 1e9 / 8
        out["mlp_eager_us"] = median_seconds(lambda: mlp(xm), 2000, 15) * 1e6
        out["mlp_traced_us"] = median_seconds(lambda: traced_mlp(xm), 2000, 15) * 1e6
    print(json.dumps(out))


if __name__ == "__main__":
    main()
