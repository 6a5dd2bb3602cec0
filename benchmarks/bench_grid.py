"""Benchmark: the default grid, vectorised vs one scenario at a time.

Prints the grid size, the vectorised time (best of several runs), the scalar path's time
over the same scenarios, and the ratio. Targets (issue 2): vectorised under 1 s on
2 cores, at least 50x faster than the scalar path.

    python benchmarks/bench_grid.py              # scalar path over 5,000 random scenarios, extrapolated
    python benchmarks/bench_grid.py --scalar 0   # scalar path over all 52,800 (about 6 minutes)
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from specmodel import evaluate
from specmodel.grid import grid_mesh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="vectorised runs; the best is reported")
    parser.add_argument(
        "--scalar",
        type=int,
        default=5000,
        help="scalar-path scenarios to time (0: all of them; else a random sample, extrapolated)",
    )
    args = parser.parse_args()

    mesh = grid_mesh()
    n = mesh["concurrency"].size
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        vectorised = evaluate(**mesh)
        times.append(time.perf_counter() - start)
    best = min(times)
    grid = {k: v.ravel() for k, v in mesh.items()}
    flat_speedup = vectorised.speedup.ravel()

    rng = np.random.default_rng(0)
    sample = np.arange(n) if args.scalar in (0, n) else np.sort(rng.choice(n, size=min(args.scalar, n), replace=False))
    start = time.perf_counter()
    scalar = np.empty(len(sample))
    for out, i in enumerate(sample):
        scalar[out] = evaluate(**{k: v[i].item() for k, v in grid.items()}).speedup
    scalar_time = (time.perf_counter() - start) * n / len(sample)
    max_diff = np.max(np.abs(scalar - flat_speedup[sample]) / flat_speedup[sample])

    print(f"cores available      {os.cpu_count()}")
    print(f"scenarios            {n:,}")
    print(f"vectorised           {best:.3f} s (best of {args.repeats}; median {np.median(times):.3f} s)  target < 1 s")
    what = "all scenarios" if len(sample) == n else f"{len(sample):,} sampled, extrapolated to {n:,}"
    print(f"scalar path          {scalar_time:.1f} s ({what}; {1e3 * scalar_time / n:.2f} ms per scenario)")
    print(f"ratio                {scalar_time / best:.0f}x  target >= 50x")
    print(f"max relative diff    {max_diff:.1e} (scalar vs vectorised speedup)")


if __name__ == "__main__":
    main()
