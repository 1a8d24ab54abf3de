"""PyTorch's side of kiln's data-loading benchmark (bench/data_bench.cpp runs it).

torch.utils.data.DataLoader over the same tar shards: an IterableDataset that reads its shards
with tarfile, split by worker (shards[worker_id::num_workers]), groups members by key, decodes
each 3 KB .bin into a uint8 tensor and each .cls into an int, and batches 256 samples into
[256, 3072] and [256] with default_collate. Prints one line per worker count:

    torch workers=0 samples=80000 seconds=4.301 samples_per_s=18600
"""
import argparse
import glob
import os
import tarfile
import time

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class TarShards(IterableDataset):
    def __init__(self, shards):
        super().__init__()
        self.shards = shards

    def __iter__(self):
        info = get_worker_info()
        shards = self.shards if info is None else self.shards[info.id::info.num_workers]
        for path in shards:
            with tarfile.open(path, "r|") as tar:
                key, sample = None, {}
                for member in tar:
                    if not member.isfile():
                        continue
                    base, ext = member.name.split(".", 1)
                    if base != key and sample:
                        yield decode(sample)
                        sample = {}
                    key = base
                    sample[ext] = tar.extractfile(member).read()
                if sample:
                    yield decode(sample)


def decode(sample):
    image = torch.frombuffer(bytearray(sample["bin"]), dtype=torch.uint8)
    return image, int(sample["cls"])


def run(shards, workers, batch_size, epochs):
    loader = DataLoader(TarShards(shards), batch_size=batch_size, num_workers=workers)
    best = None
    samples = 0
    for _ in range(epochs):
        start = time.perf_counter()
        samples = 0
        for images, labels in loader:
            assert images.shape[1] == 3072 and images.dtype == torch.uint8
            samples += images.shape[0]
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return samples, best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--workers", default="0,2")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=2)
    a = p.parse_args()
    shards = sorted(glob.glob(os.path.join(a.dir, "bench-*.tar")))
    torch.set_num_threads(1)
    for w in [int(x) for x in a.workers.split(",")]:
        samples, seconds = run(shards, w, a.batch_size, a.epochs)
        print(f"torch workers={w} samples={samples} seconds={seconds:.3f} "
              f"samples_per_s={samples / seconds:.0f}", flush=True)


if __name__ == "__main__":
    main()
