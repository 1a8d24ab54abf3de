"""PyTorch counterpart of kiln-jit-gather-bench: the batch gather of the effective-PyTorch
notes ("Optimizing runtime with TorchScript"): output[i] = input[i, index[i]] as a Python loop
(eager and torch.jit.script) and vectorized (flat[indices + offset]), in microseconds per call,
on a [32, 16, 4] float tensor and [32, 5] indices, no grad. Prints one JSON line. Run by
kiln-jit-gather-bench with Debian's python3-torch; two threads."""
import json

import torch
from timing import median_seconds


def batch_gather(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


@torch.jit.script
def batch_gather_jit(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


def batch_gather_vec(tensor, indices):
    shape = list(tensor.shape)
    flat_first = torch.reshape(tensor, [shape[0] * shape[1]] + shape[2:])
    offset = torch.reshape(torch.arange(shape[0]) * shape[1],
                           [shape[0]] + [1] * (len(indices.shape) - 1))
    return flat_first[indices + offset]


def main():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    x = torch.randn(32, 16, 4)
    idx = torch.randint(0, 16, (32, 5))
    out = {}
    with torch.no_grad():
        out["loop_eager_us"] = median_seconds(lambda: batch_gather(x, idx), 200, 15) * 1e6
        out["loop_traced_us"] = median_seconds(lambda: batch_gather_jit(x, idx), 200, 15) * 1e6
        out["vectorized_eager_us"] = median_seconds(lambda: batch_gather_vec(x, idx), 2000, 15) * 1e6
    print(json.dumps(out))


if __name__ == "__main__":
    main()
