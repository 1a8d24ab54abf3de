#!/usr/bin/env python3
"""PyTorch's side of kiln-conv-bench: Conv2d 64->64 3x3, padding 1, on [8, 64, 56, 56], forward
and forward+backward (gradients of input, weight and bias) in float32 and bfloat16, on 2 threads.
Prints one JSON object of GFLOP/s (forward FLOPs = 2*N*O*C*kH*kW*oH*oW; forward+backward counts
three times that)."""
import json

import torch
from timing import median_seconds

torch.set_num_threads(2)
N, C, O, H, W, K = 8, 64, 64, 56, 56, 3
FLOPS = 2.0 * N * O * C * K * K * H * W


def measure(dtype, name, out):
    torch.manual_seed(0)
    x = torch.randn(N, C, H, W, dtype=dtype, requires_grad=True)
    w = (torch.randn(O, C, K, K) * 0.05).to(dtype).requires_grad_()
    b = torch.zeros(O, dtype=dtype, requires_grad=True)
    gy = torch.randn(N, O, H, W, dtype=dtype)

    def forward():
        with torch.no_grad():
            torch.nn.functional.conv2d(x, w, b, 1, 1)

    def forward_backward():
        y = torch.nn.functional.conv2d(x, w, b, 1, 1)
        torch.autograd.grad(y, (x, w, b), gy)

    out[f"conv_fwd_{name}_gflops"] = FLOPS / median_seconds(forward, 3, 7) / 1e9
    out[f"conv_fwdbwd_{name}_gflops"] = 3 * FLOPS / median_seconds(forward_backward, 2, 7) / 1e9


results = {}
measure(torch.float32, "f32", results)
measure(torch.bfloat16, "bf16", results)
print(json.dumps(results))
