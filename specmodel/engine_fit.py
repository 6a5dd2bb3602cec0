"""Fitting an engine profile to measured runs: the one fitter, for the package's public
``vllm`` profile (``make fit``) and for a user's own runs (``specmodel fit-engine``, and
``specmodel advise --bench``).

One objective. Over the constants ``c`` being fitted, minimise

    sum_i (log(predicted_i / measured_i) / sigma)^2         the measured speedups
  + sum_t (w_t log(predicted_t / measured_t) / sigma)^2     absolute plain times per token
  + sum_c (log(value_c / centre_c) / width_c)^2             the prior

with scipy's trust-region reflective least squares inside each constant's bounds (restarted
from where it stops until a restart gains nothing). The speedups and times are predicted for
all rows at once on grids built once per fit (:func:`specmodel.measurements.prediction_grids`):
only the constants change from one step to the next.

* For a **user's runs** (:func:`fit_runs`): ``sigma`` = :data:`SIGMA`, the noise assumed of one
  measurement (5%); the plain runs' TPOTs as times of weight 1; a prior centred on the public
  profile's value with the width :data:`PRIOR_WIDTHS`, so that two runs at two concurrencies
  suffice; and only the constants the rows pin (:func:`pinned`), the others kept public with
  the reason.
* For the **public profile** (``sitebuild.public_fit``): ``sigma`` = 1, one anchor time of
  weight 3, and a prior that only breaks ties (width 3000) on the constants a subset of the
  rows may leave unpinned.

Uncertainty: ``cov = s^2 (J^T J)^-1`` (:func:`standard_errors`), J the Jacobian of the
weighted residuals at the optimum. Held-out errors: :func:`held_out_errors`, one helper for
every split (leave a group out, fit the small batches and predict the large).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from specmodel.measurements import Measurement, PredictionGrids, predict, prediction_grids
from specmodel.model.engines import EngineProfile, bounds_of
from specmodel.model.evaluate import evaluate, scenario_grid
from specmodel.model.scenario import Scenario, ScenarioGrid
from specmodel.model.settings import Settings
from specmodel.model.types import FloatArray
from specmodel.server_runs import PlainTiming

#: Noise assumed of one measured log ratio of a user's run (a speedup or a TPOT), dimensionless.
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
#: Most runs of one search (:func:`fit`).
RESTARTS = 4
#: How far a user's fit may move a constant from the public value, in prior widths (the
#: bounds of the search; the prior keeps it far closer).
SEARCH_WIDTHS = 8.0


@dataclass(frozen=True)
class Timing:
    """An absolute plain time per output token (seconds) measured in ``scenario``, with the
    weight of its residual."""

    scenario: Scenario
    tpot_s: float
    weight: float = 1.0


@dataclass(frozen=True)
class Prior:
    """``log(value / centre) / width`` added to the residuals (width in log units)."""

    centre: float
    width: float


@dataclass(frozen=True)
class Problem:
    """What a fit sees: the profile the fitted constants are set in (all else held), the rows'
    measured speedups and the absolute times, the constants fitted with their start and bounds,
    the priors (by constant, or ``(name, toward)`` holding one constant near another), and the
    noise ``sigma`` that scales the data's residuals."""

    base: EngineProfile
    rows: tuple[Measurement, ...]
    timings: tuple[Timing, ...]
    names: tuple[str, ...]
    start: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    priors: Mapping[str | tuple[str, str], Prior] = field(default_factory=dict)
    sigma: float = 1.0

    def profile(self, values: Sequence[float]) -> EngineProfile:
        """:attr:`base` with :attr:`names` set to ``values``."""
        constants: dict[str, Any] = dict(zip(self.names, (float(v) for v in values), strict=True))
        return replace(self.base, **constants)

    def settings(self, values: Sequence[float]) -> Settings:
        """Settings whose engine of :attr:`base`'s key is :meth:`profile` at ``values``."""
        return Settings().with_engine(self.profile(values))


@dataclass(frozen=True)
class Grids:
    """The rows' and the times' scenario grids: built once a fit (they hold no constant)."""

    rows: PredictionGrids | None
    timings: tuple[ScenarioGrid, ...]


def grids(problem: Problem) -> Grids:
    """The grids of ``problem``'s rows and times."""
    settings, key = problem.settings(problem.start), problem.base.key
    rows = prediction_grids(list(problem.rows), key, settings) if problem.rows else None
    return Grids(rows, tuple(scenario_grid(t.scenario, settings, engine=key) for t in problem.timings))


def data_residuals(problem: Problem, values: Sequence[float], at: Grids | None = None) -> FloatArray:
    """``log(predicted / measured)`` of every row, then of every time (unweighted), under the
    profile with the fitted constants at ``values``."""
    settings, key = problem.settings(values), problem.base.key
    at = at if at is not None else grids(problem)
    out = []
    if problem.rows:
        measured = np.array([r.measured_speedup for r in problem.rows])
        out.append(np.log(predict(list(problem.rows), key, settings, at.rows) / measured))
    for timing, grid in zip(problem.timings, at.timings, strict=True):
        per_sequence = float(evaluate(grid, settings=settings).base_tokens_per_s_per_sequence)
        out.append(np.array([math.log(1.0 / per_sequence / timing.tpot_s)]))
    return np.concatenate(out) if out else np.zeros(0)


def prior_residuals(problem: Problem, values: Sequence[float]) -> FloatArray:
    """The priors' residuals, in the order of :attr:`Problem.priors`: ``log(value / centre) /
    width``, or for a pair ``log(value / value_toward) / width``."""
    by_name = dict(zip(problem.names, (float(v) for v in values), strict=True))
    out = []
    for key, prior in problem.priors.items():
        if isinstance(key, tuple):
            out.append(math.log(by_name[key[0]] / by_name[key[1]]) / prior.width)
        elif key in by_name:
            out.append(math.log(by_name[key] / prior.centre) / prior.width)
    return np.array(out, dtype=float)


def weights(problem: Problem) -> FloatArray:
    """Each data residual's weight: ``1 / sigma`` for a row, ``w_t / sigma`` for a time."""
    return np.array([1.0] * len(problem.rows) + [t.weight for t in problem.timings]) / problem.sigma


def residuals(values: Sequence[float], problem: Problem, at: Grids | None = None) -> FloatArray:
    """The objective's residual vector (module docstring): the data's, weighted, then the priors'."""
    data = data_residuals(problem, values, at) * weights(problem)
    return np.concatenate([data, prior_residuals(problem, values)])


@dataclass(frozen=True)
class Fit:
    """A fit: the constants by name, ``predicted / measured - 1`` of every row and of every
    time, the residual vector and its Jacobian at the optimum, and the number of data
    residuals (the rows' and the times', before the priors')."""

    values: dict[str, float]
    errors: FloatArray
    time_errors: FloatArray
    residuals: FloatArray = field(repr=False)
    jacobian: FloatArray = field(repr=False)
    data: int = 0


#: Other starts of one constant: given where the first search stopped, the constant's index
#: and the values to start it from.
Starts = Callable[[FloatArray], tuple[int, Sequence[float]]]


def fit(problem: Problem, starts: Starts | None = None) -> Fit:
    """Least squares of :func:`residuals` over ``problem``'s constants, from its start: each
    search restarted from where it stopped until a restart gains nothing (at most
    :data:`RESTARTS` runs). With ``starts`` (a constant whose residuals bend, as the n-gram
    match rate does, can hold a local minimum), a search is run again from each of its values
    of that constant, the others where the best search so far left them: one that ends lower
    is restarted in turn, and the lowest cost wins."""
    at = grids(problem)
    start = np.array(problem.start)

    def search(x: FloatArray, runs: int = RESTARTS) -> Any:
        result = _least_squares(problem, at, x)
        for _ in range(runs - 1):
            again = _least_squares(problem, at, result.x)
            if again.cost >= result.cost * (1.0 - 1e-9):
                break
            result = again
        return result

    best = search(start) if problem.names else None
    if starts is not None and best is not None:
        i, tries = starts(best.x)
        for value in tries:
            other = search(np.where(np.arange(len(start)) == i, value, best.x), runs=1)
            best = search(other.x) if other.cost < best.cost * (1.0 - 1e-9) else best
    x: FloatArray = np.asarray(best.x if best is not None else start, dtype=float)
    r = residuals(list(x), problem, at)
    jac = np.array(best.jac) if best is not None else np.zeros((len(r), 0))
    errors = np.exp(data_residuals(problem, list(x), at)) - 1.0
    rows, times = errors[: len(problem.rows)], errors[len(problem.rows) :]
    for array in (rows, times, r, jac):
        array.setflags(write=False)
    fitted = dict(zip(problem.names, (float(v) for v in x), strict=True))
    return Fit(fitted, rows, times, r, jac, data=len(problem.rows) + len(problem.timings))


def _least_squares(problem: Problem, at: Grids, x: FloatArray) -> Any:
    """One run of scipy's trust-region reflective least squares on :func:`residuals` from ``x``
    (scipy is imported here, by a fit, so that reading a profile or a record does not)."""
    from scipy.optimize import least_squares

    return least_squares(
        residuals,
        x,
        bounds=(np.array(problem.low), np.array(problem.high)),
        args=(problem, at),
        x_scale=np.array(problem.start),
        xtol=1e-10,
        ftol=1e-10,
        gtol=1e-10,
        max_nfev=500,
    )


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


@dataclass(frozen=True)
class Identifiability:
    """Each fitted constant's relative standard error (``se / |value|``), the correlation
    matrix (in the fit's order), and the pair with the largest ``|correlation|`` and its value
    (None with fewer than two constants)."""

    relative_se: dict[str, float]
    correlation: FloatArray
    largest: tuple[str, str, float] | None


def identifiability(result: Fit, data_only: bool = True, floor: float = 0.0) -> Identifiability:
    """:func:`standard_errors` of ``result``'s constants: from the data's residuals alone (what
    the rows pin, ``data_only``) or with the priors', ``s^2`` at least ``floor``."""
    names = list(result.values)
    end = result.data if data_only else len(result.residuals)
    se, corr = standard_errors(result.jacobian[:end], result.residuals[:end], floor)
    values = np.array([abs(v) for v in result.values.values()])
    relative = np.divide(se, values, out=np.full(len(se), np.inf), where=values > 0)
    largest = None
    if len(names) > 1:
        off = np.triu(np.abs(np.nan_to_num(corr)), k=1)  # each pair once, in the fit's order
        i, j = (int(k) for k in np.unravel_index(int(np.argmax(off)), off.shape))
        largest = (names[i], names[j], float(corr[i, j]))
    return Identifiability(dict(zip(names, (float(x) for x in relative), strict=True)), corr, largest)


def held_out_errors(
    rows: Sequence[Measurement],
    groups: Sequence[Hashable | None],
    fit_on: Callable[[list[Measurement]], Settings],
    engine: str,
) -> FloatArray:
    """``predicted / measured - 1`` of every row whose group is not None, each predicted under
    ``engine`` by the settings ``fit_on`` fits to the rows of every other group (None
    included): leave one group out when every row has a group; fit on the small batches and
    predict the large when only the large have one. In the order of the rows held out."""
    errors = np.full(len(rows), np.nan)
    for group in dict.fromkeys(g for g in groups if g is not None):
        inside = [i for i, g in enumerate(groups) if g == group]
        settings = fit_on([r for r, g in zip(rows, groups, strict=True) if g != group])
        held = [rows[i] for i in inside]
        errors[inside] = predict(held, engine, settings) / np.array([r.measured_speedup for r in held]) - 1.0
    return errors[[g is not None for g in groups]]


# A user's runs ------------------------------------------------------------------------------


def timings_of(runs: Sequence[PlainTiming], drafter: str) -> tuple[Timing, ...]:
    """The plain runs' times per output token as :class:`Timing`; ``drafter`` only completes
    the scenario (a plain step does not depend on it)."""
    return tuple(
        Timing(
            Scenario(
                concurrency=t.batch,
                context=t.prompt_tokens,
                generated_tokens=t.output_tokens,
                target=t.target,
                hardware=t.hardware,
                tensor_parallel=t.tensor_parallel,
                drafter=drafter,
            ),
            t.tpot_s,
        )
        for t in runs
    )


def user_problem(
    public: EngineProfile, rows: Sequence[Measurement], timings: Sequence[Timing], names: Sequence[str]
) -> Problem:
    """A user's fit of ``names`` from ``public``: noise :data:`SIGMA`, priors centred on the
    public values with :data:`PRIOR_WIDTHS`, bounds :data:`SEARCH_WIDTHS` widths either side,
    within the range a profile may hold (:func:`specmodel.model.engines.bounds_of`: an overlap
    exponent never below 1, a time per sequence never below 1 ns), so that the profile the
    fit writes reads back."""
    start = [float(getattr(public, n)) for n in names]
    low = [
        max(bounds_of(n).low, v * math.exp(-SEARCH_WIDTHS * PRIOR_WIDTHS[n])) for n, v in zip(names, start, strict=True)
    ]
    high = [
        min(bounds_of(n).high, v * math.exp(SEARCH_WIDTHS * PRIOR_WIDTHS[n])) for n, v in zip(names, start, strict=True)
    ]
    widths = [PRIOR_WIDTHS[n] for n in names]
    priors: dict[str | tuple[str, str], Prior] = {n: Prior(v, w) for n, v, w in zip(names, start, widths, strict=True)}
    return Problem(
        public, tuple(rows), tuple(timings), tuple(names), tuple(start), tuple(low), tuple(high), priors, SIGMA
    )


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


def pinned(
    public: EngineProfile, rows: Sequence[Measurement], timings: Sequence[Timing]
) -> tuple[list[str], dict[str, str]]:
    """The constants of :data:`PRIOR_WIDTHS` the rows pin (the rows alone would set each more
    closely than its prior), and the reason each other one is kept at the public value."""
    batches = {r.batch for r in rows} | {t.scenario.concurrency for t in timings}
    kept: dict[str, str] = {}
    names = []
    for name in PRIOR_WIDTHS:
        value = float(getattr(public, name))
        if name in NEEDS_TWO_BATCHES and len(batches) < 2:
            kept[name] = f"runs at one concurrency ({', '.join(map(str, sorted(batches)))}) cannot separate it"
            continue
        if value <= 0 or not math.isfinite(value):
            kept[name] = f"the public value {value} has no logarithm to fit"
            continue
        probe = user_problem(public, rows, timings, [name])
        sensitivity = (data_residuals(probe, [value * math.exp(0.1)]) - data_residuals(probe, [value])) / 0.1
        alone, prior = data_only_standard_error(sensitivity), PRIOR_WIDTHS[name]
        if float(np.max(np.abs(sensitivity), initial=0.0)) < MIN_SENSITIVITY:
            kept[name] = "the rows do not depend on it"
        elif alone >= prior:
            kept[name] = (
                f"the rows alone would set it only to within a factor {math.exp(alone):.3g}, "
                f"no closer than the public value's prior (a factor {math.exp(prior):.3g})"
            )
        else:
            names.append(name)
    return names, kept


@dataclass(frozen=True)
class RunsFit:
    """A user's fit: the fitted profile, the constants fitted with their relative standard
    errors, those kept at the public value with the reason, ``predicted / measured - 1`` per row
    (speedups then timings), and the largest correlation between two fitted constants with its pair."""

    profile: EngineProfile
    fitted: dict[str, float]
    relative_se: dict[str, float]
    kept: dict[str, str]
    errors: FloatArray
    largest_correlation: float | None
    largest_pair: tuple[str, ...]


def fit_runs(public: EngineProfile, rows: Sequence[Measurement], timings: Sequence[Timing]) -> RunsFit:
    """The user's fit of the module docstring from ``public``: the constants :func:`pinned`,
    standard errors with the priors and ``s^2`` at least 1 (never less than the assumed noise);
    ``rows`` and ``timings`` together need at least one row."""
    names, kept = pinned(public, rows, timings)
    problem = user_problem(public, rows, timings, names)
    result = fit(problem)
    known = identifiability(result, data_only=False, floor=1.0)
    largest = known.largest
    return RunsFit(
        profile=problem.profile(list(result.values.values())),
        fitted=dict(result.values),
        relative_se=dict(known.relative_se) if names else {},
        kept=kept,
        errors=np.concatenate([result.errors, result.time_errors]),
        largest_correlation=largest[2] if largest else None,
        largest_pair=largest[:2] if largest else (),
    )
