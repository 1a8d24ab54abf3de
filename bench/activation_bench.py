#!/usr/bin/env python3
"""PyTorch's side of kiln-activation-bench: on [64, 65536] float32 with 2 threads, the forward
and forward+backward of elu, hardswish, atan2, lerp (tensor weight) and addcmul. Prints one JSON
object of median milliseconds."""
import json

import torch
import torch.nn.functional as F
from timing import median_ms

torch.set_num_threads(2)


OPS = {
    "elu": lambda x, y: F.elu(x),
    "hardswish": lambda x, y: F.hardswish(x),
    "atan2": lambda x, y: torch.atan2(x, y),
    "lerp": lambda x, y: torch.lerp(x, y, y),
    "addcmul": lambda x, y: torch.addcmul(x, y, y, value=0.5),
}

torch.manual_seed(0)
x = torch.randn(64, 65536, requires_grad=True)
y = torch.rand(64, 65536, requires_grad=True)
gy = torch.randn(64, 65536)
results = {}
for name, op in OPS.items():
    def forward():
        with torch.no_grad():
            op(x, y)

    def forward_backward():
        torch.autograd.grad(op(x, y), (x, y), gy, allow_unused=True)

    results[name + "_fwd_ms"] = median_ms(forward, 5, 9)
    results[name + "_fwdbwd_ms"] = median_ms(forward_backward, 3, 7)
print(json.dumps(results))
