#!/usr/bin/python3
"""Writes tests/golden/amp_cases.txt: the mixed-precision training patterns of PyTorch's
"Automatic Mixed Precision examples" run by PyTorch
1.13 on the CPU under torch.autocast("cpu", torch.bfloat16), for tests/amp/test_patterns.cpp.

PyTorch 1.13's GradScaler has no CPU kernels (torch.cuda.amp.GradScaler disables itself without
CUDA, and _amp_update_scale_ / _amp_foreach_non_finite_check_and_unscale_ have no CPU backend),
so RefScaler below transcribes torch/amp/grad_scaler.py line by line with ordinary tensor
operations: float32 scale, int32 growth tracker, inf/NaN checked before multiplying by the
float32 inverse scale.

Weights and data come from closed-form formulas (no RNG), shared with test_patterns.cpp.
Run with a Python that has torch (Debian's python3-torch):
    python3 tests/golden/make_amp_golden.py > tests/golden/amp_cases.txt
Format: one line per record, "<case> <what> <values...>" with float values in repr form.
"""
import math

import torch

torch.set_num_threads(1)


class RefScaler:
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self.scale_t = None
        self.init_scale = init_scale
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.tracker = torch.zeros((), dtype=torch.int32)
        self.per_opt = {}

    def _state(self, opt):
        return self.per_opt.setdefault(id(opt), {"stage": "ready", "found_inf": None})

    def scale(self, out):
        if self.scale_t is None:
            self.scale_t = torch.full((), self.init_scale, dtype=torch.float32)
        return out * self.scale_t

    def unscale_(self, opt):
        st = self._state(opt)
        assert st["stage"] == "ready"
        inv = self.scale_t.double().reciprocal().float()
        found = torch.zeros((), dtype=torch.float32)
        with torch.no_grad():
            for group in opt.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not torch.isfinite(p.grad).all():
                        found.fill_(1.0)
                    p.grad.mul_(inv)
        st["found_inf"] = found
        st["stage"] = "unscaled"

    def step(self, opt):
        st = self._state(opt)
        if st["stage"] == "ready":
            self.unscale_(opt)
        if st["found_inf"].item() == 0:
            opt.step()
        st["stage"] = "stepped"

    def update(self):
        found = sum(st["found_inf"] for st in self.per_opt.values())
        if found.item() != 0:
            self.scale_t = self.scale_t * self.backoff_factor
            self.tracker.fill_(0)
        else:
            successful = int(self.tracker.item()) + 1
            if successful == self.growth_interval:
                grown = (self.scale_t * self.growth_factor).float()
                if torch.isfinite(grown):
                    self.scale_t = grown
                self.tracker.fill_(0)
            else:
                self.tracker.fill_(successful)
        self.per_opt = {}

    def get_scale(self):
        return float(self.scale_t.item()) if self.scale_t is not None else self.init_scale


def formula(rows, cols, a, b, amplitude):
    """amplitude * sin(a * (i * cols + j) + b), the same in test_patterns.cpp."""
    idx = torch.arange(rows * cols, dtype=torch.float64).reshape(rows, cols)
    return (amplitude * torch.sin(a * idx + b)).float()


def make_model(seed):
    """Linear(4, 8) -> ReLU -> Linear(8, 2) with formula weights."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    with torch.no_grad():
        model[0].weight.copy_(formula(8, 4, 0.37, seed, 0.5))
        model[0].bias.copy_(formula(1, 8, 0.53, seed + 1, 0.1).reshape(8))
        model[2].weight.copy_(formula(2, 8, 0.71, seed + 2, 0.5))
        model[2].bias.copy_(formula(1, 2, 0.29, seed + 3, 0.1).reshape(2))
    return model


def make_batch(step):
    x = formula(16, 4, 0.23, 0.1 * step, 1.0)
    y = formula(16, 2, 0.41, 0.2 * step + 1.0, 1.0)
    return x, y


def autocast():
    return torch.autocast("cpu", dtype=torch.bfloat16)


def fmt(v):
    return repr(float(v))


def emit(case, what, values):
    print(case, what, " ".join(fmt(v) for v in values))


def emit_params(case, model):
    values = []
    for p in model.parameters():
        values.extend(p.detach().reshape(-1).tolist())
    emit(case, "params", values)


def typical(case="typical", steps=5):
    model = make_model(0.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = RefScaler()
    losses = []
    for step in range(steps):
        x, y = make_batch(step)
        opt.zero_grad()
        with autocast():
            loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    emit(case, "loss", losses)
    emit(case, "scale", [scaler.get_scale(), int(scaler.tracker.item())])
    emit_params(case, model)


def clipping(case="clip", steps=5, max_norm=0.05):
    model = make_model(1.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = RefScaler()
    losses, norms = [], []
    for step in range(steps):
        x, y = make_batch(step)
        opt.zero_grad()
        with autocast():
            loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm).item())
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    emit(case, "loss", losses)
    emit(case, "norm", norms)
    emit_params(case, model)


def accumulation(case="accumulate", micro_batches=6, iters_to_accumulate=3):
    model = make_model(2.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = RefScaler()
    losses, scales = [], []
    for i in range(micro_batches):
        x, y = make_batch(i)
        with autocast():
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss = loss / iters_to_accumulate
        scaler.scale(loss).backward()
        scales.append(scaler.get_scale())
        if (i + 1) % iters_to_accumulate == 0:
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
        losses.append(loss.item())
    emit(case, "loss", losses)
    emit(case, "scales", scales)
    emit_params(case, model)


def penalty(case="penalty", steps=4):
    model = make_model(3.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = RefScaler()
    losses, penalties = [], []
    for step in range(steps):
        x, y = make_batch(step)
        opt.zero_grad()
        with autocast():
            loss = torch.nn.functional.mse_loss(model(x), y)
        params = list(model.parameters())
        scaled = torch.autograd.grad(outputs=scaler.scale(loss), inputs=params,
                                     create_graph=True)
        inv_scale = 1.0 / scaler.get_scale()
        grads = [p * inv_scale for p in scaled]
        with autocast():
            grad_norm = 0
            for g in grads:
                grad_norm = grad_norm + g.pow(2).sum()
            grad_norm = grad_norm.sqrt()
            loss = loss + grad_norm
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        penalties.append(grad_norm.item())
    emit(case, "loss", losses)
    emit(case, "penalty", penalties)
    emit_params(case, model)


def two_models(case="two_models", steps=4):
    model0, model1 = make_model(4.0), make_model(5.0)
    opt0 = torch.optim.SGD(model0.parameters(), lr=0.005)
    opt1 = torch.optim.SGD(model1.parameters(), lr=0.005, momentum=0.5)
    scaler = RefScaler()
    losses0, losses1 = [], []
    for step in range(steps):
        x, y = make_batch(step)
        opt0.zero_grad()
        opt1.zero_grad()
        with autocast():
            out0 = model0(x)
            out1 = model1(x)
            loss0 = torch.nn.functional.mse_loss(2 * out0 + 3 * out1, y)
            loss1 = torch.nn.functional.mse_loss(3 * out0 - 5 * out1, y)
        scaler.scale(loss0).backward(retain_graph=True)
        scaler.scale(loss1).backward()
        scaler.unscale_(opt0)
        scaler.step(opt0)
        scaler.step(opt1)
        scaler.update()
        losses0.append(loss0.item())
        losses1.append(loss1.item())
    emit(case, "loss0", losses0)
    emit(case, "loss1", losses1)
    emit_params(case + "_0", model0)
    emit_params(case + "_1", model1)


if __name__ == "__main__":
    print("# PyTorch", torch.__version__, "CPU bfloat16 autocast patterns; written by "
          "make_amp_golden.py (see its docstring)")
    typical()
    clipping()
    accumulation()
    penalty()
    two_models()
