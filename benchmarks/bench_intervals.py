"""Benchmark: do the speedup intervals hold what they promise, out of sample?

Each held-out residual ``log(predicted / measured)`` of the public rows (leave one source out;
batch <= 16 predicting batch > 16: :func:`sitebuild.public_fit.held_out_residuals`) is compared
with the interval made of the residuals of every other fold (source and workload), grouped and
pooled as :mod:`specmodel.uncertainty` groups them; never its own. Printed: the share inside
the 50% and 80% intervals, overall and by group, and the record ``make fit`` wrote beside it.

    python benchmarks/bench_intervals.py
"""

from __future__ import annotations

from sitebuild.paths import MEASUREMENTS
from sitebuild.public_fit import held_out_residuals
from specmodel.measurements import load_measurements
from specmodel.uncertainty import LEVELS, batch_range, coverage, is_inside, public_record


def main() -> None:
    """Print the coverage of each level, overall and by drafter kind and batch range."""
    residuals = held_out_residuals(load_measurements(MEASUREMENTS))
    recorded = dict(zip(public_record()["coverage"]["levels"], public_record()["coverage"]["inside"], strict=True))
    print(f"{len(residuals)} held-out residuals")
    for level in LEVELS:
        print(f"{level:.0%} interval: {coverage(residuals, level):.1%} inside (recorded {recorded[level]:.1%})")
    for kind, span in sorted({(r.kind, batch_range(r.batch)) for r in residuals}):
        mine = [r for r in residuals if r.kind == kind and batch_range(r.batch) == span]
        shares = [
            f"{level:.0%}: {sum(is_inside(m, residuals, level) for m in mine) / len(mine):.0%}" for level in LEVELS
        ]
        print(f"  {kind:<11} batch {span:<5} ({len(mine):>2}) " + ", ".join(shares))


if __name__ == "__main__":
    main()
