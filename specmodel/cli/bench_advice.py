"""``specmodel advise --bench FILE...``: advice straight from serving-benchmark results.

The runs (``vllm bench serve --save-result`` JSON, SGLang ``bench_serving`` lines, a
measurement CSV; :func:`specmodel.server_runs.load_runs`) are paired into measured speedups
(plain TPOT / speculative TPOT at each ``max_concurrency`` run both ways). Unless
``--engine-profile`` gives a profile, the engine is calibrated to them as ``fit-engine``
would (:func:`specmodel.engine_fit.fit_runs`, from ``--engine``'s public
profile), in memory. The advice is then :func:`specmodel.vllm.advise.advise` at
``--concurrency`` (default: the largest concurrency measured with speculation) with the
acceptance the speculative run measured there (the nearest run's elsewhere), the workload
(prompt and output tokens) of that run, and the calibrated engine; beside it, the measured
speedups and the calibrated prediction of each, and the prediction across concurrency.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import replace
from typing import Any

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.measurements import Measurement
from specmodel.model.settings import Settings

#: The key of the engine calibrated in memory to the runs.
CALIBRATED = "calibrated"


@dataclasses.dataclass(frozen=True)
class BenchAdvice:
    """The advice, the settings and engine that priced it, and what was measured."""

    advice: Any  #: :class:`specmodel.vllm.advise.Advice`
    settings: Settings
    rows: tuple[Measurement, ...]  #: the measured speedups
    predicted: tuple[float, ...]  #: the calibrated prediction of each row
    calibration: dict[str, Any]  #: the fitted constants and their relative standard errors, or the profile's key
    acceptance_note: str | None = None


def measured_rows(args: argparse.Namespace, drafter: str, gamma: int | None) -> tuple[list, list[Measurement]]:
    """The runs of ``--bench`` and their measured speedups; one line if none pairs."""
    from specmodel.server_runs import Deployment, load_runs, paired_measurements

    runs = load_runs(args.bench)
    given: set[str] = getattr(args, "_given_options", set())
    deployment = Deployment(
        hardware=args.hardware, target=args.target if "target" in given else None, drafter=drafter,
        tensor_parallel=1 if args.tensor_parallel is None else args.tensor_parallel, num_speculative_tokens=gamma,
        mean_acceptance_length=args.mean_acceptance_length,
    )  # fmt: skip
    rows = paired_measurements(runs, deployment)
    if not rows:
        raise SpecModelError(
            "--bench: no speculative run to pair; give a plain and a speculative run at the same --max-concurrency"
        )
    return runs, rows


def calibrated(args: argparse.Namespace, settings: Settings, runs: list, rows: list[Measurement]) -> tuple:
    """(settings, engine, calibration): the ``--engine-profile``'s engine as it is, or the
    ``--engine`` profile (vllm by default) fitted to the runs in memory as :data:`CALIBRATED`."""
    if args.engine_profile is not None:
        return settings, args.engine, {"profile": args.engine, "fitted": {}}
    from specmodel.engine_fit import fit_runs, timings_of
    from specmodel.server_runs import Deployment, plain_timings

    first = rows[0]
    deployment = Deployment(hardware=first.hardware, target=first.target, tensor_parallel=first.tensor_parallel)
    timings = timings_of(plain_timings([r for r in runs if r.engine != "csv"], deployment), first.method)
    public = settings.engine(args.engine or "vllm")
    fit = fit_runs(replace(public, key=CALIBRATED, fit=None), rows, timings)
    calibration = {
        "profile": f"{public.key}, calibrated to the runs",
        "fitted": fit.fitted,
        "relative_standard_errors": fit.relative_se,
        "kept": fit.kept,
    }
    return settings.with_engine(fit.profile), CALIBRATED, calibration


def acceptance_at(rows: list[Measurement], concurrency: int) -> tuple[tuple[float, ...], Measurement, str | None]:
    """The per-position acceptance the run nearest ``concurrency`` measured, that run, and a
    note when only its mean acceptance length was published (the ``same`` profile that gives it)."""
    from specmodel.model.acceptance import alpha_for_mean_acceptance_length, per_position_acceptance

    row = min(rows, key=lambda r: (abs(np.log(r.batch / concurrency)), -r.batch))
    if row.per_position_acceptance:
        return tuple(row.per_position_acceptance), row, None
    k = row.num_speculative_tokens
    alpha = float(alpha_for_mean_acceptance_length(row.mean_acceptance_length, k))
    u = per_position_acceptance(alpha, k, 1.0).reshape(-1)[:k]
    note = (f"{row.source}: no per-position acceptance; the mean acceptance length {row.mean_acceptance_length:.3g} "
            f"read as the same acceptance {alpha:.3f} at every position")  # fmt: skip
    return tuple(float(x) for x in u), row, note


def bench_advice(args: argparse.Namespace, settings: Settings, served: Any) -> BenchAdvice:
    """Read, pair, calibrate and advise (the module's rule)."""
    from specmodel.measurements import predict
    from specmodel.vllm import advise

    runs, rows = measured_rows(args, served.drafter, served.gamma)
    settings, engine, calibration = calibrated(args, settings, runs, rows)
    concurrency = args.concurrency or max(r.batch for r in rows)
    u, at, note = acceptance_at(rows, concurrency)
    given: set[str] = getattr(args, "_given_options", set())
    context = args.context if "context" in given else max(1, at.prompt_tokens)
    workload = settings.with_constants(GENERATED_TOKENS=at.output_tokens)
    result = advise.advise(
        u, concurrency, context, dataclasses.replace(served, gamma=len(u)), at.hardware, at.target, workload,
        engine=engine, tensor_parallel=at.tensor_parallel, measured=f"--bench {at.source}",
    )  # fmt: skip
    predicted = tuple(float(x) for x in predict(rows, engine, settings))
    return BenchAdvice(result, workload, tuple(rows), predicted, calibration, note)


def measured_lines(result: BenchAdvice) -> list[str]:
    """The measured speedups beside the calibrated prediction of each, as text lines."""
    lines = ["Measured speedup (plain TPOT / speculative TPOT: decode alone) and the engine's prediction of it:"]
    for row, p in zip(result.rows, result.predicted, strict=True):
        lines.append(f"  B = {row.batch:<5} gamma {row.num_speculative_tokens}  measured {row.measured_speedup:.2f}x  "
                     f"predicted {p:.2f}x  ({row.source})")  # fmt: skip
    fitted = result.calibration.get("fitted") or {}
    if fitted:
        se = result.calibration["relative_standard_errors"]
        parts = [f"{k} = {v:.4g} (+-{se.get(k, float('nan')):.0%})" for k, v in fitted.items()]
        lines.append(f"Engine: {result.calibration['profile']}: {', '.join(parts)}")
    else:
        lines.append(f"Engine: {result.calibration['profile']} (as given, not refitted)")
    return lines


def ladder_line(result: BenchAdvice) -> str:
    """The prediction across concurrency at the deployed gamma, on one line."""
    from specmodel.vllm.report import ladder

    rungs = ladder(result.advice, result.settings)
    text = ", ".join(f"{b}: {'does not fit' if s is None else f'{s:.2f}x'}" for b, s in rungs)
    return f"Predicted across concurrency at gamma {result.advice.deployed_gamma} (prefill counted, as below): {text}"


def measured_dicts(result: BenchAdvice) -> list[dict[str, Any]]:
    """The measured rows for ``--json``."""
    return [
        {
            "concurrency": r.batch,
            "gamma": r.num_speculative_tokens,
            "measured_speedup": r.measured_speedup,
            "predicted_speedup": p,
            "source": r.source,
        }  # fmt: skip
        for r, p in zip(result.rows, result.predicted, strict=True)
    ]
