#!/usr/bin/python3
"""PyTorch's side of kiln-dist-bench: 2 ranks over loopback with torch.distributed on gloo, one
thread each: all_reduce (SUM, float32) bus bandwidth from 4 KiB to 64 MiB, and the training step
of an MLP 784-512-512-10 (SGD, batch 64 per rank) in one process and under DDP. Prints rank 0's
numbers as one JSON object with kiln-dist-bench's keys.
    /usr/bin/python3 bench/dist_bench.py
"""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from timing import median_seconds


def rank_main(rank, port, queue):
    torch.set_num_threads(1)
    os.sched_setaffinity(0, {rank % os.cpu_count()})  # one CPU per rank, as kiln's ranks
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    dist.init_process_group("gloo", rank=rank, world_size=2)
    m = {}
    size = 4096
    while size <= 64 << 20:
        t = torch.ones(size // 4)
        inner = 2 if size >= 16 << 20 else 10 if size >= 1 << 20 else 100
        s = median_seconds(lambda: dist.all_reduce(t), inner, 7)
        m["allreduce_busbw_gbs_%dk" % (size // 1024)] = 2.0 * (2 - 1) / 2 * size / s / 1e9
        size *= 4
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    x = torch.randn(64, 784)
    y = torch.randint(0, 10, (64,))

    def step_of(net, opt):
        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        return step

    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    m["single_step_ms"] = 1e3 * median_seconds(step_of(model, opt), 10, 9)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    m["ddp_step_ms"] = 1e3 * median_seconds(step_of(ddp, opt), 10, 9)
    m["ddp_over_single"] = m["ddp_step_ms"] / m["single_step_ms"]
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        queue.put(m)


if __name__ == "__main__":
    port = 29900 + os.getpid() % 90
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, port, queue)) for r in range(2)]
    for p in procs:
        p.start()
    result = queue.get(timeout=600)
    for p in procs:
        p.join()
    print(json.dumps(result))
    sys.exit(0)
