"""Benchmark: the model against public measurements of vLLM (specmodel/data/measurements.csv).

Prints, for each engine, the median, 90th-percentile and worst absolute relative error of
the predicted speedup, with the acceptance each run measured given to the model. Targets
(issue 11): the vllm profile at a median of 6% or less and a 90th percentile of 15% or less.

    python benchmarks/bench_validation.py
"""

from __future__ import annotations

from pathlib import Path

from specmodel.measurements import error_summary, load_measurements, predict, relative_errors

MEASUREMENTS = Path(__file__).resolve().parents[1] / "specmodel" / "data" / "measurements.csv"
TARGETS = {"vllm": {"median": 0.06, "p90": 0.15}}


def main() -> None:
    rows = load_measurements(MEASUREMENTS)
    print(f"rows                 {len(rows)} ({MEASUREMENTS.name})")
    for engine in ("ideal", "vllm"):
        errors = relative_errors(predict(rows, engine), rows)
        summary = error_summary(errors)
        target = TARGETS.get(engine, {})
        parts = []
        for key in ("median", "p90", "max"):
            mark = ""
            if key in target:
                mark = f" (target <= {target[key]:.0%}: {'met' if summary[key] <= target[key] else 'MISSED'})"
            parts.append(f"{key} {summary[key]:.1%}{mark}")
        print(f"{engine:<20} " + ", ".join(parts))
        worst = sorted(zip(abs(errors), rows, errors, strict=True), key=lambda t: -t[0])[:3]
        for _, row, err in worst:
            print(
                f"{'':<20}   worst: {row.method} batch {row.batch} gamma {row.num_speculative_tokens} "
                f"({row.source.split(' (')[0]}): {err:+.1%}"
            )


if __name__ == "__main__":
    main()
