#!/usr/bin/python3
"""PyTorch's side of kiln-gpt-bench: nanoGPT's GPT (the model of tests/golden/make_gpt_weights.py)
in the shakespeare-char configuration (6 layers, 6 heads, 384 wide, block 256, vocabulary 65,
dropout 0.2, bias false), one training step at batch 8 (forward with targets, backward, AdamW
from configure_optimizers), in float32 and under autocast("cpu", bfloat16). Prints one JSON
object of median milliseconds with kiln-gpt-bench's keys.
    /usr/bin/python3 bench/gpt_bench.py threads layers heads embd block batch runs
With GPT_BENCH_PROFILE=1 it also prints torch.profiler's per-operator table of ten autocast
steps to stderr (the per-operator breakdown to set beside kiln's, e.g. from perf):
    GPT_BENCH_PROFILE=1 /usr/bin/python3 bench/gpt_bench.py 2 2 4 128 64 8 9 >/dev/null
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "golden"))
import make_gpt_weights  # noqa: E402  (nanoGPT's model)
from timing import median_seconds  # noqa: E402


def main():
    threads, layers, heads, embd, block, batch, runs = (int(a) for a in sys.argv[1:8])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    config = {"block_size": block, "vocab_size": 65, "n_layer": layers, "n_head": heads,
              "n_embd": embd, "dropout": 0.2, "bias": False}
    model = make_gpt_weights.define_gpt(torch)(config)
    model.train()
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
    x = torch.randint(0, 65, (batch, block))
    y = torch.randint(0, 65, (batch, block))
    results = {}
    for mixed in (False, True):
        def step():
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mixed):
                _, loss = model(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        results["train_step_amp_ms" if mixed else "train_step_fp32_ms"] = \
            median_seconds(step, 1, runs) * 1e3
        if mixed and os.environ.get("GPT_BENCH_PROFILE") == "1":
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                for _ in range(10):
                    step()
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30),
                  file=sys.stderr)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
