"""PyTorch counterpart of kiln-fused-bench: a chain of 8 pointwise operators on 16M floats, eager
and torch.jit.script'ed (TorchScript's fuser on the CPU, when it has one), in milliseconds per
call, and a copy of 16M floats (the STREAM copy bandwidth torch reaches). Prints one JSON line.
Run by kiln-fused-bench with Debian's python3-torch; two threads."""
import json

import torch
from timing import median_seconds


def chain(x, y):
    t = x * y
    t = t + 1.5
    t = torch.sigmoid(t)
    t = t - x
    t = torch.tanh(t)
    t = t * 2.0
    t = torch.relu(t)
    return t / (y + 3.0)


def main():
    torch.set_num_threads(2)
    n = 16 * 1024 * 1024
    x, y = torch.randn(n), torch.randn(n)
    out = {}
    with torch.no_grad():
        out["torch_eager_ms"] = median_seconds(lambda: chain(x, y), 3) * 1e3
        scripted = torch.jit.script(chain)
        for _ in range(3):
            scripted(x, y)  # the profiling executor specializes after a few calls
        out["torch_script_ms"] = median_seconds(lambda: scripted(x, y), 3) * 1e3
        dst = torch.empty(n)
        out["torch_copy_ms"] = median_seconds(lambda: dst.copy_(x), 5) * 1e3
    print(json.dumps(out))


if __name__ == "__main__":
    main()
