#!/usr/bin/python3
"""Writes mlp_cases.txt: 5 training steps of an MLP 784-512-512-10 (ReLU, cross entropy, SGD
with momentum) computed by PyTorch 1.13, for tests/optim/test_mlp_golden.cpp. Run with a Python
that has torch (Debian's python3-torch):

    /usr/bin/python3 tests/golden/make_mlp_golden.py

The initial weights and the data are not stored: both sides compute them from the same integer
hash (splitmix64), so they are bit-identical without a 3 MB file. uniform(stream, i) is
(splitmix64(stream * 2^32 + i) >> 40) * 2^-24, exact in float32; a weight is
float32((2 * u - 1) / sqrt(fan_in)), PyTorch's default Linear bounds; a pixel is u; a label is
floor(10 * u). Streams: the parameters in named_parameters() order are 1..6, the inputs of step
s are 100 + s, its labels 200 + s.

Records, one per line:

    mlp <steps> <batch> <lr> <momentum>
    loss <s> <value>                     cross-entropy loss of step s (before its update)
    final <name> <values...>             the parameter after the last step, every element
                                         (biases and fc3.weight)
    rowsum <name> <values...>            for the two large weights: the float64 sums of each row
    colsum <name> <values...>            and each column of (final - initial) ...
    sample <name> <stride> <values...>   ... and every stride-th element of the final weight
    end

Values: Python's repr of the float64 (float32 values are exact in it).
"""
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 5
BATCH = 128
LR = 0.1
MOMENTUM = 0.9
SAMPLE_STRIDE = 97
MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def uniform(stream, count):
    with np.errstate(over="ignore"):
        z = (np.uint64(stream) << np.uint64(32)) + np.arange(count, dtype=np.uint64)
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(40)).astype(np.float64) * 2.0 ** -24


def weights(stream, shape, fan_in):
    u = uniform(stream, int(np.prod(shape)))
    w = ((2.0 * u - 1.0) / np.sqrt(float(fan_in))).astype(np.float32)
    return torch.from_numpy(w.reshape(shape))


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


def main():
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    names = []
    initial = {}
    with torch.no_grad():
        for stream, (name, p) in enumerate(model.named_parameters(), start=1):
            fan_in = p.shape[-1] if p.dim() == 2 else model[int(name.split(".")[0])].in_features
            p.copy_(weights(stream, tuple(p.shape), fan_in))
            names.append(name)
            initial[name] = p.detach().clone().double()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    lines = ["# PyTorch %s MLP 784-512-512-10 trajectory; written by make_mlp_golden.py "
             "(see its docstring for the format)" % torch.__version__,
             "mlp %d %d %r %r" % (STEPS, BATCH, LR, MOMENTUM)]
    for s in range(STEPS):
        x = torch.from_numpy(uniform(100 + s, BATCH * 784).astype(np.float32).reshape(BATCH, 784))
        y = torch.from_numpy(np.floor(10.0 * uniform(200 + s, BATCH)).astype(np.int64))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lines.append("loss %d %r" % (s, float(loss)))
    for name, p in model.named_parameters():
        final = p.detach()
        if final.numel() <= 512 * 10:
            lines.append("final %s %s" % (name, fmt(final.reshape(-1).tolist())))
            continue
        delta = final.double() - initial[name]
        lines.append("rowsum %s %s" % (name, fmt(delta.sum(1).tolist())))
        lines.append("colsum %s %s" % (name, fmt(delta.sum(0).tolist())))
        lines.append("sample %s %d %s" % (name, SAMPLE_STRIDE,
                                          fmt(final.reshape(-1)[::SAMPLE_STRIDE].tolist())))
    lines.append("end")
    with open(os.path.join(HERE, "mlp_cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
