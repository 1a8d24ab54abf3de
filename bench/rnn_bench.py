#!/usr/bin/python3
"""PyTorch's side of kiln-rnn-bench: nn.LSTM(512, 512, num_layers=2) on input [64, 32, 512]
(seq, batch, features), float32: one training step (forward, mse_loss against a fixed target,
backward, SGD) and inference (eval, no_grad). Prints one JSON object of median milliseconds with
kiln-rnn-bench's keys.
    /usr/bin/python3 bench/rnn_bench.py [threads]
"""
import json
import sys

import torch
from timing import median_seconds

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
SEQ, BATCH, HIDDEN, LAYERS = 64, 32, 512, 2


def main():
    torch.manual_seed(0)
    model = torch.nn.LSTM(HIDDEN, HIDDEN, num_layers=LAYERS)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(SEQ, BATCH, HIDDEN)
    target = torch.randn(SEQ, BATCH, HIDDEN)

    def step():
        opt.zero_grad()
        out, _ = model(x)
        loss = torch.nn.functional.mse_loss(out, target)
        loss.backward()
        opt.step()

    def infer():
        with torch.no_grad():
            model(x)

    results = {"train_step_ms": median_seconds(step, 1, 5) * 1e3}
    model.eval()
    results["inference_ms"] = median_seconds(infer, 2, 5) * 1e3
    print(json.dumps(results))


if __name__ == "__main__":
    main()
