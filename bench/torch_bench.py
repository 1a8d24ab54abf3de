"""Python PyTorch counterpart of kiln-bench: prints one JSON line with the same keys.

Run with Debian's python3 (/usr/bin/python3) and python3-torch. Debian's torch takes its BLAS
from libblas.so.3: with libopenblas0-pthread installed it is OpenBLAS (printed as "blas")."""
import json
import os

import torch
from timing import median_seconds


def blas_name():
    path = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    return "openblas" if "openblas" in path else ("reference" if "blas/" in path else path)


def main():
    torch.set_num_threads(2)
    out = {}
    a1, b1 = torch.rand(1), torch.rand(1)
    out["add_1elem_ns"] = median_seconds(lambda: a1 + b1, 20000, 15) * 1e9
    for n in (256, 512, 1024, 2048):
        a, b = torch.rand(n, n) + 0.5, torch.rand(n, n) + 0.5
        inner = 2 if n >= 2048 else (5 if n >= 1024 else 20)
        s = median_seconds(lambda: torch.mm(a, b), inner, 7)
        out["matmul_%d_gflops" % n] = 2.0 * n ** 3 / s / 1e9
    big = 16 << 20
    x, y = torch.rand(big), torch.rand(big)
    out["add_16M_gbs"] = 3.0 * big * 4 / median_seconds(lambda: x + y, 3, 9) / 1e9
    mid = 1 << 20
    p, q = torch.rand(mid) - 0.5, torch.rand(mid) - 0.5
    i, j = (p * 1000).int(), (q * 10).int() + 20
    cond = p > q

    def us(f):
        return median_seconds(f, 5, 9) * 1e6
    out["exp_1M_us"] = us(lambda: torch.exp(p))
    out["maximum_1M_us"] = us(lambda: torch.maximum(p, q))
    out["gt_1M_us"] = us(lambda: torch.gt(p, q))
    out["where_1M_us"] = us(lambda: torch.where(cond, p, q))
    out["clamp_1M_us"] = us(lambda: torch.clamp(p, -0.25, 0.25))
    out["floor_divide_i32_1M_us"] = us(lambda: torch.floor_divide(i, j))
    m = torch.rand(4096, 4096)
    out["sum0_16M_gbs"] = 1.0 * big * 4 / median_seconds(lambda: torch.sum(m, 0), 3, 9) / 1e9
    out["blas"] = blas_name()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
