#!/usr/bin/env python3
"""PyTorch's side of kiln-resample-bench: on [8, 64, 56, 56] float32 with 2 threads, the forward
and forward+backward of reflect padding by 1, nearest and bilinear upsampling by 2, and 3x3
stride-2 max and average pooling. Prints one JSON object of median milliseconds."""
import json

import torch
import torch.nn.functional as F
from timing import median_ms

torch.set_num_threads(2)


OPS = {
    "pad_reflect": lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"),
    "nearest_x2": lambda x: F.interpolate(x, scale_factor=2.0, mode="nearest"),
    "bilinear_x2": lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear",
                                           align_corners=False),
    "max_pool_3s2": lambda x: F.max_pool2d(x, 3, 2, 1),
    "avg_pool_3s2": lambda x: F.avg_pool2d(x, 3, 2, 1),
}

torch.manual_seed(0)
x = torch.randn(8, 64, 56, 56, requires_grad=True)
results = {}
for name, op in OPS.items():
    gy = torch.randn(op(x).shape)

    def forward():
        with torch.no_grad():
            op(x)

    def forward_backward():
        torch.autograd.grad(op(x), (x,), gy)

    results[name + "_fwd_ms"] = median_ms(forward, 3, 7)
    results[name + "_fwdbwd_ms"] = median_ms(forward_backward, 3, 7)
print(json.dumps(results))
