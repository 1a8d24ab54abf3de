"""Timing shared by the bench scripts (each runs beside a kiln bench program on the same inputs).

median_seconds(f, inner, runs): calls f `inner` times to warm up, then takes `runs` samples of
`inner` calls each and returns the median time per call in seconds (the upper middle sample for an
even count). Medians, not means: this kind of machine's timings move by tens of percent.
"""
import time


def median_seconds(f, inner=1, runs=7):
    for _ in range(inner):
        f()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(inner):
            f()
        samples.append((time.perf_counter() - start) / inner)
    return sorted(samples)[runs // 2]


def median_ms(f, inner=1, runs=7):
    return median_seconds(f, inner, runs) * 1e3
