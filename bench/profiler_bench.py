"""PyTorch counterpart of kiln-profiler-bench: a 1-element add in nanoseconds per call without a
profiler, under torch.profiler.profile (record_shapes and profile_memory, then neither), and a
chain of 8 pointwise operators on 16 floats, eager and torch.jit.trace'd, per operator. Prints
one JSON line. Run by kiln-profiler-bench with Debian's python3-torch; two threads."""
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
    a, b = torch.rand(1), torch.rand(1)

    def add():
        a + b

    out = {"add_off_ns": median_seconds(add, 20000, 15) * 1e9}
    acts = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=acts, record_shapes=True, profile_memory=True):
        out["add_profiled_ns"] = median_seconds(add, 20000, 5) * 1e9
    with torch.profiler.profile(activities=acts):
        out["add_profiled_bare_ns"] = median_seconds(add, 20000, 5) * 1e9
    out["add_after_ns"] = median_seconds(add, 20000, 15) * 1e9
    x = torch.rand(16)
    traced = torch.jit.trace(chain, x)
    with torch.no_grad():
        out["chain8_eager_ns_per_op"] = median_seconds(lambda: chain(x), 5000, 15) * 1e9 / 8
        out["chain8_traced_ns_per_op"] = median_seconds(lambda: traced(x), 5000, 15) * 1e9 / 8
    print(json.dumps(out))


if __name__ == "__main__":
    main()
