"""PyTorch counterpart of kiln-amp-bench: prints one JSON line with the same keys.

Run with Debian's python3 (/usr/bin/python3) and python3-torch, on the threads kiln uses.
    matmul_bf16_<n>_gflops     autocast("cpu", bfloat16) mm of float32 [n, n] operands, the
                               weight a parameter (requires grad) inside one region, no_grad
    matmul_bf16_<n>_plain_gflops   the same with a plain weight (cast on every call)
    mlp_amp_steps_per_s        784-512-512-10 MLP, batch 128, SGD step under autocast + a
                               GradScaler transcribed from the reference (1.13 has no CPU one)
    mlp_fp32_steps_per_s       the same step in float32
    checkerboard_<n>_<mode>_ms "Effective PyTorch"'s checkerboard network, one Adam step on n x n
"""
import json
import sys

import torch
from timing import median_seconds

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)


class Scaler:
    """The reference GradScaler (torch/amp/grad_scaler.py), as tests/golden/make_amp_golden.py."""

    def __init__(self):
        self.scale_t = torch.full((), 65536.0)
        self.tracker = 0

    def scale(self, loss):
        return loss * self.scale_t

    def step(self, opt):
        inv = self.scale_t.double().reciprocal().float()
        found = False
        with torch.no_grad():
            for g in opt.param_groups:
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    found = found or not bool(torch.isfinite(p.grad).all())
                    p.grad.mul_(inv)
        if not found:
            opt.step()
        self.found = found

    def update(self):
        if self.found:
            self.scale_t = self.scale_t * 0.5
            self.tracker = 0
        else:
            self.tracker += 1
            if self.tracker == 2000:
                self.scale_t = self.scale_t * 2.0
                self.tracker = 0


def matmul(results):
    for n in (1024, 2048):
        a = torch.rand(n, n) - 0.5
        w = (torch.rand(n, n) - 0.5).requires_grad_()
        inner = 20 if n == 1024 else 4
        with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
            t = median_seconds(lambda: torch.mm(a, w), inner, 11)
        results["matmul_bf16_%d_gflops" % n] = 2.0 * n ** 3 / t / 1e9
        plain = w.detach()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            t = median_seconds(lambda: torch.mm(a, plain), inner, 11)
        results["matmul_bf16_%d_plain_gflops" % n] = 2.0 * n ** 3 / t / 1e9


def mlp(results):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(128, 784)
    y = torch.randint(0, 10, (128,))
    scaler = Scaler()

    def amp_step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    def fp32_step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    results["mlp_amp_steps_per_s"] = 1.0 / median_seconds(amp_step, 50, 7)
    results["mlp_fp32_steps_per_s"] = 1.0 / median_seconds(fp32_step, 50, 7)


def checkerboard(results):
    def grid(width, height):
        hrange = torch.arange(width).unsqueeze(0).repeat([height, 1]).div(width)
        vrange = torch.arange(height).unsqueeze(1).repeat([1, width]).div(height)
        return torch.stack([hrange, vrange], 0)

    def checker(width, height, freq):
        hrange = torch.arange(width).reshape([1, width]).mul(freq / width / 2.0).fmod(1.0).gt(0.5)
        vrange = torch.arange(height).reshape([height, 1]).mul(freq / height / 2.0).fmod(1.0).gt(0.5)
        return hrange.logical_xor(vrange).float()

    for n in (128, 256):
        inputs = grid(n, n).unsqueeze(0)
        targets = checker(n, n, 8).unsqueeze(0).unsqueeze(1)
        for mode in ("fp32", "amp"):
            torch.manual_seed(0)
            layers = []
            for cin, cout in ((2, 256), (256, 256), (256, 256)):
                layers += [torch.nn.Conv2d(cin, cout, 1), torch.nn.BatchNorm2d(cout),
                           torch.nn.ReLU()]
            net = torch.nn.Sequential(*layers, torch.nn.Conv2d(256, 1, 1))
            opt = torch.optim.Adam(net.parameters(), 0.001)
            scaler = Scaler()
            mixed = mode == "amp"

            def step():
                opt.zero_grad()
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mixed):
                    loss = torch.nn.functional.mse_loss(net(inputs), targets)
                if mixed:
                    scaler.scale(loss).backward()
                    scaler.step(opt)
                    scaler.update()
                else:
                    loss.backward()
                    opt.step()

            inner = 5 if n == 128 else 2
            results["checkerboard_%d_%s_ms" % (n, mode)] = median_seconds(step, inner, 5) * 1e3


if __name__ == "__main__":
    results = {}
    matmul(results)
    mlp(results)
    checkerboard(results)
    print(json.dumps(results))
