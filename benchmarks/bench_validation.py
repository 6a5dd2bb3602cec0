"""Benchmark: the model against public measurements of vLLM.

One GPU (specmodel/data/measurements.csv): for each engine, the median, 90th-percentile and
worst absolute relative error of the predicted speedup, with the acceptance each run
measured given to the model. Targets (issue 11): the vllm profile at a median of 6% or less
and a 90th percentile of 15% or less.

Four GPUs (specmodel/data/measurements-multigpu.csv, Llama-3-70B at tensor parallel 4):
acceptance not published, so it is fitted at batch 1 per series
(:mod:`specmodel.acceptance_fit`) and the larger batches are predicted. Target (issue 14):
the vllm profile at a median of 8% or less on those held-out rows.

    python benchmarks/bench_validation.py
"""

from __future__ import annotations

from specmodel.acceptance_fit import fit_series, held_out_errors
from specmodel.measurements import (
    MEASUREMENTS_FILE,
    MULTIGPU_MEASUREMENTS_FILE,
    error_summary,
    load_measurements,
    predict,
    relative_errors,
)

TARGETS = {"vllm": {"median": 0.06, "p90": 0.15}}
MULTIGPU_TARGETS = {"vllm": {"median": 0.08}}


def _summary_line(engine: str, errors, targets: dict) -> str:
    summary = error_summary(errors)
    target = targets.get(engine, {})
    parts = []
    for key in ("median", "p90", "max"):
        mark = ""
        if key in target:
            mark = f" (target <= {target[key]:.0%}: {'met' if summary[key] <= target[key] else 'MISSED'})"
        parts.append(f"{key} {summary[key]:.1%}{mark}")
    return f"{engine:<20} " + ", ".join(parts)


def one_gpu() -> None:
    rows = load_measurements(MEASUREMENTS_FILE)
    print(f"one GPU: rows        {len(rows)} ({MEASUREMENTS_FILE.name})")
    for engine in ("ideal", "vllm"):
        errors = relative_errors(predict(rows, engine), rows)
        print(_summary_line(engine, errors, TARGETS))
        worst = sorted(zip(abs(errors), rows, errors, strict=True), key=lambda t: -t[0])[:3]
        for _, row, err in worst:
            print(
                f"{'':<20}   worst: {row.method} batch {row.batch} gamma {row.num_speculative_tokens} "
                f"({row.source.split(' (')[0]}): {err:+.1%}"
            )


def four_gpus() -> None:
    rows = load_measurements(MULTIGPU_MEASUREMENTS_FILE)
    print(f"four GPUs: rows      {len(rows)} ({MULTIGPU_MEASUREMENTS_FILE.name}); acceptance fitted at batch 1")
    for engine in ("ideal", "vllm"):
        fitted = fit_series(rows, engine)
        errors = held_out_errors(fitted)
        print(_summary_line(engine, errors, MULTIGPU_TARGETS) + f" over {len(errors)} held-out rows")
        for series in fitted:
            first = series.rows[0]
            cells = ", ".join(
                f"b{row.batch} {row.measured_speedup:.2f}/{p:.2f}" for row, p in zip(series.rows, series.predicted)
            )
            figure = first.source.split("Fig. ")[-1].split(" ")[:2]
            print(f"{'':<20}   {first.method:<13} Fig. {' '.join(figure):<7} M {series.mean_acceptance_length:.2f}: "
                  f"measured/predicted {cells}")  # fmt: skip


def main() -> None:
    one_gpu()
    four_gpus()


if __name__ == "__main__":
    main()
