"""Benchmark: the model against public measurements of vLLM.

Held out first (:mod:`sitebuild.public_fit`): the vllm profile refitted without the rows it
predicts: leave one (source, workload) out, leave one source out, fit on batch <= 16
predicting 64 and 128; then in sample; with each fitted constant's relative standard error
and their correlations; then what a step time of EAGLE-3's own would trade, held near the
other heads' by a prior of each width (:mod:`sitebuild.engine_tradeoff`); then the profile
refitted at other memory efficiencies (:mod:`sitebuild.memory_sensitivity`). Targets
(``sitebuild.public_fit.TARGETS``): leave-one-source-out and leave-one-(source, workload)-out
median <= 7%, small-to-large median <= 8%, in sample median <= 6% and p90 <= 15%; no
relative SE above 50%, no |correlation| above 0.9.

One GPU (specmodel/data/measurements.csv): for each engine, the median, 90th-percentile and
worst absolute relative error of the predicted speedup, with the acceptance each run
measured given to the model. Targets: the vllm profile at a median of 6% or less
and a 90th percentile of 15% or less.

Four GPUs (specmodel/data/measurements-multigpu.csv, Llama-3-70B at tensor parallel 4):
acceptance not published, so it is fitted at batch 1 per series
(:mod:`specmodel.acceptance_fit`) and the larger batches are predicted. Target:
the vllm profile at a median of 8% or less on those held-out rows.

    python benchmarks/bench_validation.py
"""

from __future__ import annotations

import numpy as np

from sitebuild.engine_tradeoff import SPLITS, band, tradeoffs, width_label
from sitebuild.memory_sensitivity import refits
from sitebuild.public_fit import IDENTIFIABLE, fit, held_out, identifiability
from sitebuild.public_fit import TARGETS as HELD_OUT_TARGETS
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
MAX_RELATIVE_SE, MAX_CORRELATION = IDENTIFIABLE["relative_se"], IDENTIFIABLE["correlation"]


def _summary_line(engine: str, errors: np.ndarray, targets: dict) -> str:
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
                f"({row.citation}): {err:+.1%}"
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


def held_out_errors_vllm() -> None:
    """The vllm profile's held-out and in-sample errors, constants' SEs and correlations."""
    rows = load_measurements(MEASUREMENTS_FILE)
    print(f"held out: the vllm profile refitted without the rows it predicts ({MEASUREMENTS_FILE.name})")
    for split, summary in held_out(rows).items():
        targets = HELD_OUT_TARGETS[split]
        marks = [f"{k} <= {v:.0%}: {'met' if summary[k] <= v else 'MISSED'}" for k, v in targets.items()]
        print(
            f"  {split:<24} {summary['rows']:>3} rows: median {summary['median']:.1%}, p90 {summary['p90']:.1%}, "
            f"worst {summary['max']:.1%}, mean {summary['mean']:+.1%}" + (f" ({'; '.join(marks)})" if marks else "")
        )
    result = fit(rows)
    ident = identifiability(result)
    for name, value in result.values.items():
        se = ident.relative_se[name]
        print(f"  {name:<26} {value:.4g}  relative SE {se:.0%} ({'met' if se <= MAX_RELATIVE_SE else 'MISSED'})")
    names = list(result.values)
    corr = ident.correlation
    print(
        "  correlations: "
        + "; ".join(
            f"{names[i]}/{names[j]} {corr[i, j]:+.2f}" for i in range(len(names)) for j in range(i + 1, len(names))
        )
    )
    first, second, largest = ident.largest
    verdict = "met" if abs(largest) <= MAX_CORRELATION else "MISSED"
    print(f"  largest |correlation| {abs(largest):.2f} ({first}/{second}; <= {MAX_CORRELATION}: {verdict})")


def eagle3_tradeoff() -> None:
    """EAGLE-3's own step time held near the head's by a prior of each width: what each meets."""
    rows = tuple(load_measurements(MEASUREMENTS_FILE))
    print("EAGLE-3's own step time t_h3, held near t_h by the prior log(t_h3 / t_h) / w (w = 0: the profile)")
    for r in tradeoffs(rows):
        splits = "; ".join(
            f"{s} {r.errors[s][0]:.1%}/{r.errors[s][1]:.1%} ({'met' if r.met(s) else 'MISSED'})" for s in SPLITS
        )
        print(f"  w {width_label(r.width):<34} t_h {r.head_s * 1e3:.3f} ms, t_h3 {r.eagle3_s * 1e3:.3f} ms; {splits}")
    found = band(rows)
    if found is None:
        print("  no width between the table's meets every target")
    else:
        print(f"  every target met between about w {found.low:.3f} and {found.high:.3f}; at {found.middle:.3f} the "
              f"closest target is met with {found.margin * 100:.2f} percentage points to spare")  # fmt: skip


def memory_sensitivity() -> None:
    """The profile refitted at each memory efficiency: the fixed time per pass and the errors."""
    print("the vllm profile refitted at each memory efficiency (share of the datasheet's bandwidth)")
    for r in refits(tuple(load_measurements(MEASUREMENTS_FILE))):
        splits = "; ".join(f"{s} {r.errors[s][0]:.1%} ({'met' if r.met(s) else 'MISSED'})" for s in r.errors)
        print(f"  eta_mem {r.efficiency:.2f}: t_0 {r.values['target_pass_s'] * 1e3:.3f} ms, t_h "
              f"{r.values['head_pass_s'] * 1e3:.3f} ms, plain step {r.plain_step_s * 1e3:.2f} ms, largest relative "
              f"SE {r.largest_relative_se:.0%}; {splits}")  # fmt: skip


def main() -> None:
    held_out_errors_vllm()
    eagle3_tradeoff()
    memory_sensitivity()
    one_gpu()
    four_gpus()


if __name__ == "__main__":
    main()
