"""PyTorch counterpart of kiln-mlp-bench: an MLP 784-512-512-10 trained with SGD and momentum on
batches of 128 in float32, in training steps per second. Prints one JSON line. Run by
kiln-mlp-bench with Debian's python3-torch (OpenBLAS):

    /usr/bin/python3 bench/mlp_bench.py [--steps N] [--threads T]
"""
import argparse
import json
import statistics
import time

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(128, 784)
    y = torch.randint(10, (128,))

    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)  # kiln's default
        loss.backward()
        opt.step()

    for _ in range(args.steps):
        step()
    samples = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        samples.append((time.perf_counter() - start) / args.steps)
    print(json.dumps({"steps_per_s": 1.0 / statistics.median(samples),
                      "threads": args.threads}))


if __name__ == "__main__":
    main()
