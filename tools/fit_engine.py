"""Fit the ``vllm`` engine profile to public measurements and write it to
``specmodel/data/engines.toml`` with its provenance and residuals (``make fit``).

    python tools/fit_engine.py                     # fit, write, print the residuals
    python tools/fit_engine.py --check             # fit and compare with the file; write nothing

Least squares (scipy's trust-region reflective method, deterministic) on the log of
predicted over measured speedup for every row of ``specmodel/data/measurements.csv``, with the
acceptance each run measured given to the model, plus one absolute anchor: the plain decode
step of Llama-3.1-8B on one H100 at batch 1, 7.07 ms, from vLLM issue #20780 (the TPOT table
the file's first rows come from). One profile for all rows; no per-row or per-source term.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
from datetime import date
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from specmodel.measurements import error_summary, load_measurements, predict
from specmodel.model.engines import EngineProfile, FitProvenance
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import Scenario
from specmodel.model.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
MEASUREMENTS = ROOT / "specmodel" / "data" / "measurements.csv"
ENGINES = ROOT / "specmodel" / "data" / "engines.toml"

#: The fitted constants, their start and their bounds (seconds; p; shares).
PARAMETERS = {
    "target_pass_s": (1e-3, 0.0, 5e-3),
    "sequence_pass_s": (1e-5, 0.0, 1e-3),
    "head_pass_s": (5e-4, 0.0, 5e-3),
    "fused_head_pass_s": (5e-4, 0.0, 5e-3),
    "iteration_s": (1e-4, 0.0, 5e-3),
    "overlap": (3.0, 1.0, 50.0),
    "compute_efficiency": (0.75, 0.05, 1.0),
    "ngram_matched_acceptance": (0.5, 0.05, 1.0),
}
#: Plain decode step (TPOT) of Llama-3.1-8B, batch 1, H100: vLLM issue #20780.
ANCHOR_SECONDS = 7.07e-3
ANCHOR_SCENARIO = Scenario(
    concurrency=1, context=76, generated_tokens=210, target="llama-3.1-8b", hardware="h100-sxm", drafter="eagle"
)
ANCHOR_SOURCE = "plain decode step of Llama-3.1-8B on one H100 at batch 1, 7.07 ms (vLLM issue #20780, TPOT table)"
ANCHOR_WEIGHT = 3.0


def profile(values: np.ndarray, fit: FitProvenance | None = None) -> EngineProfile:
    """The vllm profile with these constants."""
    return EngineProfile(
        key="vllm", name="vLLM (fitted)",
        description="vLLM V1 on one GPU: the roofline plus fixed costs per pass and per iteration, imperfect "
                    "overlap of memory and arithmetic, its own compute efficiency, and an n-gram lookup that "
                    "drafts only on a match; fitted to public measurements.",
        batching="steady", **dict(zip(PARAMETERS, (float(v) for v in values), strict=True)), fit=fit,
    )  # fmt: skip


def residuals(values: np.ndarray, rows: list, measured: np.ndarray) -> np.ndarray:
    settings = Settings().with_engine(profile(values))
    predicted = predict(rows, "vllm", settings)
    plain = 1.0 / float(evaluate(ANCHOR_SCENARIO, engine="vllm", settings=settings).base_tokens_per_s)
    return np.append(np.log(predicted / measured), ANCHOR_WEIGHT * math.log(plain / ANCHOR_SECONDS))


def fit(rows: list) -> tuple[np.ndarray, np.ndarray]:
    measured = np.array([r.measured_speedup for r in rows])
    start, low, high = (np.array([p[i] for p in PARAMETERS.values()]) for i in range(3))
    result = least_squares(
        residuals,
        start,
        bounds=(low, high),
        args=(rows, measured),
        x_scale=start,
        xtol=1e-12,
        ftol=1e-12,
        gtol=1e-12,
        max_nfev=2000,
    )
    return result.x, np.exp(result.fun[:-1]) - 1.0


def section(values: np.ndarray, errors: np.ndarray, rows: list) -> str:
    """The [vllm] table of engines.toml, with its provenance."""
    summary = error_summary(errors)
    fit_ = FitProvenance(
        measurements="specmodel/data/measurements.csv",
        measurements_sha256=hashlib.sha256(MEASUREMENTS.read_bytes()).hexdigest(), rows=len(rows),
        fitted_on=date.today().isoformat(), method="scipy.optimize.least_squares (trf) on log(predicted/measured)",
        median_abs_error=round(summary["median"], 4), p90_abs_error=round(summary["p90"], 4),
        max_abs_error=round(summary["max"], 4), anchor=ANCHOR_SOURCE,
        residuals=tuple(round(float(e), 4) for e in errors),
    )  # fmt: skip
    p = profile(values, fit_)
    lines = ["[vllm]", f'name = "{p.name}"', f'description = "{p.description}"', f'batching = "{p.batching}"']
    lines += [f"{k} = {float(getattr(p, k)):.6g}" for k in PARAMETERS]
    lines += ["", "[vllm.fit]"]
    for key, value in fit_.model_dump().items():
        if isinstance(value, str):
            lines.append(f'{key} = "{value}"')
        elif isinstance(value, tuple | list):
            lines.append(f"{key} = [{', '.join(f'{v:.4f}' for v in value)}]")
        else:
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fit and compare with the file; write nothing")
    args = parser.parse_args(argv)
    rows = load_measurements(MEASUREMENTS)
    values, errors = fit(rows)
    for name, value in zip(PARAMETERS, values, strict=True):
        print(f"{name:<26} {value:.6g}")
    summary = error_summary(errors)
    print(
        f"rows {len(rows)}: median |error| {summary['median']:.1%}, 90th percentile {summary['p90']:.1%}, "
        f"worst {summary['max']:.1%}"
    )
    text = ENGINES.read_text(encoding="utf-8")
    head = text.split("\n[vllm]\n")[0].rstrip() + "\n\n"
    new = head + section(values, errors, rows)
    if args.check:
        same = new.split("fitted_on")[0] == text.split("fitted_on")[0]
        print("engines.toml is " + ("current" if same else "NOT current: run python tools/fit_engine.py"))
        return 0 if same else 1
    ENGINES.write_text(new, encoding="utf-8")
    print(f"wrote {ENGINES.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
