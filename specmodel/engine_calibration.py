"""Fitting an engine profile to a user's own server runs (``specmodel fit-engine``).

A regularised least squares (Gauss-Newton with Levenberg-Marquardt damping, numpy only) on
the logarithms of the constants ``theta = log(value)``, starting from a public profile and
minimising

    sum_i (log(predicted_i / measured_i) / sigma)^2 + sum_c ((theta_c - log public_c) / w_c)^2

over the measured speedups and the plain runs' absolute TPOT (:data:`SIGMA`: the noise assumed
of one measurement, 5%), with a prior of width ``w_c`` (:data:`PRIOR_WIDTHS`) per constant,
so that two runs at two concurrencies suffice: what the data cannot say stays near the
public value. A constant is fitted only when the rows alone would set it more closely than
its prior (:func:`data_only_standard_error` below the prior's width); one the rows barely
move, or the per-sequence term and the overlap of memory and arithmetic from a single
concurrency, stays public, with the reason. Uncertainty: ``cov = s^2 (J^T J)^-1`` (:func:`standard_errors`) with J the
Jacobian of the weighted residuals (prior rows included) and ``s^2 = max(1, chi^2 / (n - k))``:
never less than the assumed noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from specmodel.measurements import Measurement, predict
from specmodel.model.engines import EngineProfile
from specmodel.model.evaluate import evaluate
from specmodel.model.settings import Settings
from specmodel.model.types import FloatArray
from specmodel.server_runs import PlainTiming

#: Noise assumed of one measured log ratio (a speedup or a TPOT), dimensionless.
SIGMA = 0.05
#: The constants a user's runs may set, each with the width of its prior in log units: the
#: fixed time per target pass and per draft-head step within a factor e^0.7 = 2 of the public
#: value (another GPU, CPU or driver moves launch and scheduling overheads about that much);
#: the scheduler's time per sequence within a factor 10 (public 1.1 us is a micro-benchmark,
#: fits on public rows gave 20-70x); the overlap exponent of memory and arithmetic within
#: e^0.5 = 1.6.
PRIOR_WIDTHS: dict[str, float] = {"target_pass_s": 0.7, "sequence_pass_s": 2.3, "head_pass_s": 0.7, "overlap": 0.5}
#: Constants that need runs at two concurrencies or more.
NEEDS_TWO_BATCHES = ("sequence_pass_s", "overlap")
#: Below this (log units per log unit), the rows do not depend on a constant.
MIN_SENSITIVITY = 1e-3


@dataclass(frozen=True)
class TimingRow:
    """An absolute plain time per output token (seconds) at a scenario, for :func:`fit_profile`."""

    scenario: dict[str, object]
    tpot_s: float


@dataclass(frozen=True)
class CalibrationFit:
    """The fitted profile, the constants fitted with their relative standard errors, those
    kept at the public value with the reason, ``predicted / measured - 1`` per row (speedups
    then timings), the largest correlation between two fitted constants and its pair."""

    profile: EngineProfile
    fitted: dict[str, float]
    relative_se: dict[str, float]
    kept: dict[str, str]
    errors: FloatArray
    largest_correlation: float | None
    largest_pair: tuple[str, ...]


def with_values(public: EngineProfile, values: dict[str, float]) -> EngineProfile:
    """``public`` with ``values`` in place (overlap at least 1), all else unchanged."""
    update = {k: (max(1.0, v) if k == "overlap" else v) for k, v in values.items()}
    return public.model_copy(update=update)


def row_residuals(profile: EngineProfile, rows: list[Measurement], timings: list[TimingRow]) -> FloatArray:
    """``log(predicted / measured)`` per speedup row, then per timing row, under ``profile``."""
    settings = Settings().with_engine(profile)
    out = []
    if rows:
        measured = np.array([r.measured_speedup for r in rows])
        out.append(np.log(predict(rows, profile.key, settings) / measured))
    for t in timings:
        ev = evaluate(**t.scenario, engine=profile.key, settings=settings)
        out.append(np.array([math.log(1.0 / float(ev.base_tokens_per_s_per_sequence) / t.tpot_s)]))
    return np.concatenate(out) if out else np.zeros(0)


def standard_errors(jacobian: FloatArray, residual: FloatArray, floor: float = 0.0) -> tuple[FloatArray, FloatArray]:
    """Standard errors and correlation matrix of least-squares constants: ``cov = s^2 (J^T J)^-1``,
    ``s^2 = max(floor, sum r^2 / (n - k))`` (n residuals, k constants); correlation
    ``cov_ij / (se_i se_j)``. Assumes independent residuals of equal variance and a locally
    linear model.

    >>> j = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]); se, corr = standard_errors(j, np.array([0.1, -0.2, 0.1]))
    >>> round(float(corr[0, 1]), 3)
    -0.775
    """
    n, k = jacobian.shape
    s2 = max(floor, float(residual @ residual) / max(n - k, 1))
    cov = s2 * np.linalg.pinv(jacobian.T @ jacobian)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = cov / np.outer(se, se)
    return se, corr


def jacobian(func: Callable[[FloatArray], FloatArray], x: FloatArray, step: float = 1e-4) -> FloatArray:
    """Forward-difference Jacobian of ``func`` at ``x``."""
    f0 = func(x)
    cols = [(func(x + step * np.eye(len(x))[i]) - f0) / step for i in range(len(x))]
    return np.stack(cols, axis=1) if cols else np.zeros((len(f0), 0))


def levenberg_marquardt(func: Callable[[FloatArray], FloatArray], x0: FloatArray, iterations: int = 40) -> FloatArray:
    """Minimise ``|func(x)|^2`` from ``x0``: Gauss-Newton steps with damping ``lam diag(J^T J)``,
    lowered after a step that helps, raised after one that does not."""
    x, lam = np.asarray(x0, dtype=float), 1e-3
    cost = float(np.sum(func(x) ** 2))
    for _ in range(iterations):
        r, jac = func(x), jacobian(func, x)
        a = jac.T @ jac
        step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -jac.T @ r)
        trial = x + step
        new = float(np.sum(func(trial) ** 2))
        if new < cost:
            x, lam, done = trial, lam / 3, cost - new < 1e-12 * max(cost, 1e-30)
            cost = new
            if done or float(np.max(np.abs(step))) < 1e-7:
                break
        else:
            lam *= 10
            if lam > 1e8:
                break
    return x


def choose_constants(
    public: EngineProfile, rows: list[Measurement], timings: list[TimingRow]
) -> tuple[list[str], dict[str, str]]:
    """The constants the rows can set, and the reason each other one is kept public."""
    batches = {r.batch for r in rows} | {int(str(t.scenario["concurrency"])) for t in timings}
    kept: dict[str, str] = {}
    names = []
    base = row_residuals(public, rows, timings)
    for name in PRIOR_WIDTHS:
        value = float(getattr(public, name))
        if name in NEEDS_TWO_BATCHES and len(batches) < 2:
            kept[name] = f"runs at one concurrency ({', '.join(map(str, sorted(batches)))}) cannot separate it"
        elif value <= 0 or (name == "overlap" and not math.isfinite(value)):
            kept[name] = f"the public value {value} has no logarithm to fit"
        else:
            moved = row_residuals(with_values(public, {name: value * math.exp(0.1)}), rows, timings)
            sensitivity = (moved - base) / 0.1
            alone, prior = data_only_standard_error(sensitivity), PRIOR_WIDTHS[name]
            if float(np.max(np.abs(sensitivity))) < MIN_SENSITIVITY:
                kept[name] = "the rows do not depend on it"
            elif alone >= prior:
                kept[name] = (
                    f"the rows alone would set it only to within a factor {math.exp(alone):.3g}, "
                    f"no closer than the public value's prior (a factor {math.exp(prior):.3g})"
                )
            else:
                names.append(name)
    return names, kept


def data_only_standard_error(sensitivity: FloatArray) -> float:
    """The standard error of ``log(value)`` that the rows alone would give a constant on
    which they depend as ``d log(prediction_i) / d log(value) = sensitivity_i``:
    ``SIGMA / sqrt(sum_i sensitivity_i^2)`` (one constant, the others held; Fisher information
    of independent rows of noise :data:`SIGMA`). A constant is fitted only when this is
    below its prior's width: the data then say more about it than the public value does.

    >>> round(data_only_standard_error(np.array([0.1, 0.1])), 3)
    0.354
    """
    norm = float(np.sqrt(np.sum(np.square(sensitivity))))
    return SIGMA / norm if norm > 0 else math.inf


def fit_profile(public: EngineProfile, rows: list[Measurement], timings: list[TimingRow]) -> CalibrationFit:
    """The regularised fit of the module docstring, from ``public``; ``rows`` and ``timings``
    together need at least one row."""
    names, kept = choose_constants(public, rows, timings)
    start = np.array([math.log(float(getattr(public, n))) for n in names])
    widths = np.array([PRIOR_WIDTHS[n] for n in names])

    def profile_at(theta: FloatArray) -> EngineProfile:
        return with_values(public, dict(zip(names, (math.exp(float(t)) for t in theta), strict=True)))

    def residual(theta: FloatArray) -> FloatArray:
        data = row_residuals(profile_at(theta), rows, timings) / SIGMA
        return np.concatenate([data, (theta - start) / widths])

    theta = levenberg_marquardt(residual, start) if names else start
    fitted_profile = profile_at(theta)
    errors = np.exp(row_residuals(fitted_profile, rows, timings)) - 1.0
    se, corr = standard_errors(jacobian(residual, theta), residual(theta), floor=1.0) if names else ((), None)
    pair: tuple[str, ...] = ()
    largest = None
    if len(names) > 1 and corr is not None:
        off = np.abs(np.nan_to_num(corr)) - np.eye(len(names))
        i, j = (int(k) for k in np.unravel_index(int(np.argmax(off)), off.shape))
        largest, pair = float(corr[i, j]), (names[i], names[j])
    return CalibrationFit(
        profile=fitted_profile,
        fitted={n: float(getattr(fitted_profile, n)) for n in names},
        relative_se=dict(zip(names, (float(s) for s in se), strict=True)),  # se of log(value) = se / value
        kept=kept, errors=errors, largest_correlation=largest, largest_pair=pair,
    )  # fmt: skip


def timing_rows(timings: Sequence[PlainTiming], drafter: str) -> list[TimingRow]:
    """:class:`TimingRow` of the plain runs' timings; ``drafter`` only completes the
    scenario (a plain step does not depend on it)."""
    return [
        TimingRow(
            scenario={
                "concurrency": t.batch,
                "context": t.prompt_tokens,
                "generated_tokens": t.output_tokens,
                "target": t.target,
                "hardware": t.hardware,
                "tensor_parallel": t.tensor_parallel,
                "drafter": drafter,
            },  # fmt: skip
            tpot_s=t.tpot_s,
        )
        for t in timings
    ]
