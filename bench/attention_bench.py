#!/usr/bin/env python3
"""PyTorch's side of kiln-attention-bench: batch 4, 8 heads, head dim 64, self-attention of
length L = 128 .. 2048, float32 and bfloat16, forward (no_grad) and forward+backward, 2 threads:
torch 1.13's explicit attention (q @ k^T * scale, softmax, @ v; 1.13 has no
F.scaled_dot_product_attention) and nn.MultiheadAttention (embed 512, 8 heads, need_weights
False, its projections included). Prints one JSON object: median milliseconds ("torch_..._ms",
"mha_..._ms") and the peak RSS in MB of a fresh process running the configuration once, over
its RSS before ("..._mb"; this script re-runs itself with --memory).
"""
import json
import math
import subprocess
import sys

import torch
from timing import median_ms

torch.set_num_threads(2)
B, H, D = 4, 8, 64
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def make(kind, dtype, length, backward):
    """A function running one configuration once."""
    if kind == "torch":
        q, k, v, gy = (torch.randn(B, H, length, D, dtype=dtype) for _ in range(4))
        for t in (q, k, v):
            t.requires_grad_(backward)

        def attend():
            attn = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / math.sqrt(D)), -1)
            return attn @ v

        inputs = (q, k, v)
    else:
        mha = torch.nn.MultiheadAttention(H * D, H, batch_first=True).to(dtype)
        x = torch.randn(B, length, H * D, dtype=dtype, requires_grad=backward)
        gy = torch.randn(B, length, H * D, dtype=dtype)

        def attend():
            return mha(x, x, x, need_weights=False)[0]

        inputs = (x,)

    def run():
        if backward:
            torch.autograd.grad(attend(), inputs, gy)
        else:
            with torch.no_grad():
                attend()

    return run


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024.0
    return 0.0


def hwm_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) / 1024.0
    return 0.0


def memory_child(kind, dtype, length, passes):
    run = make(kind, DTYPES[dtype], int(length), passes == "fwdbwd")
    before = rss_mb()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS: the peak of the setup does not count
    run()
    print("%.1f" % (hwm_mb() - before))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--memory":
        memory_child(*sys.argv[2:])
        return
    lengths = [128, 512] if "--quick" in sys.argv else [128, 256, 512, 1024, 2048]
    torch.manual_seed(0)
    results = {}
    for dname, dtype in DTYPES.items():
        for length in lengths:
            for passes in ("fwd", "fwdbwd"):
                for kind in ("torch", "mha"):
                    name = "%s_%s_L%d_%s" % (kind, dname, length, passes)
                    run = make(kind, dtype, length, passes == "fwdbwd")
                    results[name + "_ms"] = median_ms(run, 1, 3 if length >= 1024 else 7)
                    out = subprocess.run([sys.executable, __file__, "--memory", kind, dname,
                                          str(length), passes], capture_output=True, text=True)
                    results[name + "_mb"] = float(out.stdout.strip() or 0)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
