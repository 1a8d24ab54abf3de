#!/usr/bin/env python3
"""PyTorch's side of kiln-sort-bench, with 2 threads: sort of [1024, 1024] float32 along the last
dim (and descending, along dim 0, int64), argsort, topk k=5 and k=500 of [64, 50000], cumsum, and
einsum's batched matmul and bilinear forms. Prints one JSON object of median milliseconds."""
import json

import torch
from timing import median_ms

torch.set_num_threads(2)


torch.manual_seed(0)
square = torch.randn(1024, 1024)
wide = torch.randn(64, 50000)
ints = torch.randint(0, 1000, (1024, 1024))
a, b = torch.randn(32, 64, 128), torch.randn(32, 128, 64)
x1, w, x2 = torch.randn(64, 256), torch.randn(32, 256, 128), torch.randn(64, 128)
OPS = {
    "sort_1024x1024": lambda: torch.sort(square, -1),
    "sort_desc_1024x1024": lambda: torch.sort(square, -1, descending=True),
    "sort_dim0_1024x1024": lambda: torch.sort(square, 0),
    "sort_int64_1024x1024": lambda: torch.sort(ints, -1),
    "argsort_1024x1024": lambda: torch.argsort(square, -1),
    "topk5_64x50000": lambda: torch.topk(wide, 5),
    "topk500_64x50000": lambda: torch.topk(wide, 500),
    "cumsum_1024x1024": lambda: torch.cumsum(square, -1),
    "einsum_bmm": lambda: torch.einsum("bij,bjk->bik", a, b),
    "einsum_bilinear": lambda: torch.einsum("bn,anm,bm->ba", x1, w, x2),
}
results = {}
with torch.no_grad():
    for name, op in OPS.items():
        results[name + "_ms"] = median_ms(op, 3, 9)
print(json.dumps(results))
