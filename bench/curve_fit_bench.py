"""PyTorch counterpart of kiln-curve-fit-bench: "Effective PyTorch"'s curve fit with Adam (lr 0.1),
timed per training step (data, forward, backward, zero_grad, step) and per optimizer.step() alone.
Prints one JSON line of microseconds. Run by kiln-curve-fit-bench with Debian's python3-torch; two
threads, as kiln's CPU plugin has on the two-core build machine."""
import json

import torch
from timing import median_seconds


def main():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    w = torch.randn([3, 1]).requires_grad_()
    opt = torch.optim.Adam([w], 0.1)

    def train_step():
        x = torch.rand(100) * 20 - 10
        y = 5 * x * x + 3
        f = torch.stack([x * x, x, torch.ones_like(x)], 1)
        yhat = torch.squeeze(f @ w, 1)
        loss = torch.nn.functional.mse_loss(yhat, y)
        opt.zero_grad(set_to_none=True)  # kiln's default
        loss.backward()
        opt.step()

    grad = torch.randn([3, 1])

    def adam_step():
        w.grad = grad
        opt.step()

    print(json.dumps({
        "train_step_us": median_seconds(train_step, 200, 15) * 1e6,
        "adam_step_us": median_seconds(adam_step, 500, 15) * 1e6,
        "torch_version": float(".".join(torch.__version__.split(".")[:2])),
    }))


if __name__ == "__main__":
    main()
