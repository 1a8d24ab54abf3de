#!/usr/bin/python3
"""PyTorch's side of kiln-resnet-bench: torchvision's resnet18 (1000 classes) on a batch of 32
images 3x112x112, one SGD step (momentum 0.9, cross_entropy) and inference (eval, no_grad), in
float32 and under autocast("cpu", bfloat16). Prints one JSON object of median milliseconds with
kiln-resnet-bench's keys.
    /usr/bin/python3 bench/resnet_bench.py [threads [measure]]
(with a measure, e.g. train_step_fp32_ms, only that one)
With RESNET_BENCH_PROFILE=1 it also prints torch.profiler's per-operator table of three training
steps in float32 and three under autocast to stderr (the breakdown to set beside kiln's, e.g.
from perf or KILN_CPU_CONV_PROFILE=1):
    RESNET_BENCH_PROFILE=1 /usr/bin/python3 bench/resnet_bench.py 2 >/dev/null
"""
import json
import os
import sys

import torch
import torchvision
from timing import median_seconds

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
BATCH, SIZE = 32, 112


def main():
    torch.manual_seed(0)
    model = torchvision.models.resnet18()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(BATCH, 3, SIZE, SIZE)
    y = torch.randint(0, 1000, (BATCH,))
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    results = {}
    for mixed in (False, True):
        mode = "_amp_ms" if mixed else "_fp32_ms"
        model.train()

        def step():
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mixed):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()

        if not only or only == "train_step" + mode:
            results["train_step" + mode] = median_seconds(step, 1, 5) * 1e3
        if (not only or only == "train_step" + mode) and \
                os.environ.get("RESNET_BENCH_PROFILE") == "1":
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                for _ in range(3):
                    step()
            print("training step" + mode, file=sys.stderr)
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30),
                  file=sys.stderr)
        model.eval()

        def infer():
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=mixed):
                model(x)

        if not only or only == "inference" + mode:
            results["inference" + mode] = median_seconds(infer, 2, 5) * 1e3
    print(json.dumps(results))


if __name__ == "__main__":
    main()
