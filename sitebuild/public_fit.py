"""The package's public ``vllm`` engine profile: what ``make fit`` fits, and how well it
predicts rows it was not fitted on.

The fit is :mod:`specmodel.engine_fit`'s, the one fitter of the package, on this problem:
``log(predicted / measured)`` speedup for every row given (``sigma`` = 1), with the
acceptance each run measured given to the model, plus one absolute anchor of weight
:data:`ANCHOR_WEIGHT`: the plain decode step of Llama-3.1-8B on one H100 at batch 1, 7.07 ms
(vLLM issue #20780, TPOT table).

Held out (:func:`held_out`, each split by :func:`specmodel.engine_fit.held_out_errors`): (a)
leave one group out, where a group is a source and a workload (the one-GPU measurement file
has two sources, vLLM issue #20780 at batch 1 and SpecDecode-Bench arXiv:2601.11580 at four
workloads and batch 1-128; the strict leave-one-source-out is also computed); (b) fit on
batch <= 16, predict batch 64 and 128; (c) in sample. Each as median / p90 / worst of
``|predicted / measured - 1|``.

Where the rows given to a fit cannot tell values of a constant apart, the fit takes the value
nearest the ideal roofline (:data:`TIEBREAK`, a prior of width :data:`TIEBREAK_WIDTH`): without
that, a fit on a subset of the rows (the small batches, one source) stopped wherever the
optimiser's rounding left it, and its held-out predictions changed from one CPU to another.

Standard errors (:func:`specmodel.engine_fit.identifiability`): ``cov = s^2 (J^T J)^-1`` with J
the Jacobian of the residuals at the optimum and ``s^2 = sum r^2 / (n - k)``, over the rows and
the anchor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from operator import attrgetter
from typing import Any

import numpy as np

from sitebuild.memo import Keyed
from specmodel import engine_fit
from specmodel.engine_fit import Fit, Identifiability, Prior, Problem, Timing
from specmodel.measurements import Measurement, error_summary
from specmodel.model.constants import COMPUTE_EFFICIENCY, MEMORY_EFFICIENCY
from specmodel.model.domain import profile_domain
from specmodel.model.drafters import drafter_kind
from specmodel.model.engines import EngineProfile, ProfileDomain
from specmodel.model.evaluate import evaluate, scenario_grid
from specmodel.model.scenario import Scenario, ScenarioGrid
from specmodel.model.settings import Settings
from specmodel.model.types import FloatArray
from specmodel.uncertainty import Residual

#: The fitted constants, their start and their bounds (seconds; p; shares).
PARAMETERS: dict[str, tuple[float, float, float]] = {
    "target_pass_s": (1e-3, 0.0, 5e-3),
    "sequence_pass_s": (1e-5, 0.0, 1e-3),
    "head_pass_s": (5e-4, 0.0, 5e-3),
    "iteration_s": (1e-4, 0.0, 5e-3),
    "overlap": (3.0, 1.0, 50.0),
    "compute_efficiency": (0.6, 0.05, 1.0),
    "ngram_matched_acceptance": (0.5, 0.05, 1.0),
    "fused_head_pass_s": (5e-4, 0.0, 5e-3),
}
#: The constants the ``vllm`` profile fits (the others of :data:`PARAMETERS` were tried and
#: left out; ``python benchmarks/bench_validation.py`` compares them).
FITTED = ("target_pass_s", "head_pass_s", "overlap", "ngram_matched_acceptance")
#: Constants set from elsewhere, not fitted (seconds). The per-sequence time per pass is the
#: scheduler's per-request CPU time, about 1.1 us (vLLM PR #46112, a micro-benchmark of
#: ``Scheduler.update_from_output``: 0.142 ms at 128 requests, 0.287 ms at 256): fitted, it
#: came out 20-70x that, poorly determined from batch 1 and 16 alone (relative standard error
#: above 100% on those rows) and correlated at -0.98 with the compute efficiency, and it made
#: large batches too optimistic (+21% on average from a fit on batch <= 16). The time per
#: iteration is 0: fitted, its relative standard error was above 90%. The compute efficiency is
#: the article's 0.75 of dense BF16 peak (specmodel.model.constants.COMPUTE_EFFICIENCY), and the
#: memory efficiency the article's 0.80 of the datasheet's bandwidth (MEMORY_EFFICIENCY): the rows
#: cannot pin it, and the fixed time per pass is what the anchor leaves over a roofline priced
#: with it (sitebuild.memory_sensitivity refits the profile at other values). The token
#: budget per pass is vLLM's default ``max_num_batched_tokens`` for the OpenAI server on a GPU of
#: 70 GiB or more, 8192 (vllm/engine/arg_utils.py, v0.10.1): it sets how the prefill of refilled
#: sequences lands on the passes (specmodel.model.prefill).
FIXED = {
    "sequence_pass_s": 1.1e-6, "iteration_s": 0.0, "compute_efficiency": COMPUTE_EFFICIENCY,
    "memory_efficiency": MEMORY_EFFICIENCY, "token_budget": 8192,
}  # fmt: skip
NOT_FITTED = (
    "sequence_pass_s = 1.1 us, the scheduler's per-request CPU time (vLLM PR #46112); compute_efficiency: the "
    "settings' 0.75 of dense BF16 peak (the article's verify pass); memory_efficiency: the article's 0.80 of the "
    "datasheet's bandwidth (the rows cannot pin it; the fixed time per pass is the anchor's remainder over a "
    "roofline priced with it); iteration_s = 0 (not identifiable on "
    "these rows); fused_head_pass_s unset (each source fitted alone asks for a "
    "slower EAGLE-3 step, by amounts that differ severalfold: public_fit.eagle3_step_by_source); "
    "draft_model_pass_s unset (a draft model's pass pays the target's fixed time: it runs through the same "
    f"engine); token_budget = {FIXED['token_budget']}, vLLM's default max_num_batched_tokens on an H100 "
    "(vllm/engine/arg_utils.py)"
)
#: The tie-break: each of these constants adds the residual ``log(value / centre) / TIEBREAK_WIDTH``,
#: centred on the bound that behaves as the ideal roofline does: the overlap exponent at its
#: largest (the rule tends to the roofline's max), the n-gram constant at its smallest (every
#: lookup drafts, as the article assumes). These are the two constants a subset of the rows can
#: leave unpinned: at batch 1 and 16 every pass is bound by memory, so no large exponent changes a
#: prediction, and then neither does how many tokens the lookup drafts; a source with no n-gram
#: row says nothing of the n-gram constant. The width is wide enough that a constant the rows do
#: pin moves by under a sixth of its standard error (tests/test_fit_determinism.py).
TIEBREAK = {"overlap": PARAMETERS["overlap"][2], "ngram_matched_acceptance": PARAMETERS["ngram_matched_acceptance"][1]}
TIEBREAK_WIDTH = 3000.0
#: Plain decode step (TPOT) of Llama-3.1-8B, batch 1, H100: vLLM issue #20780.
ANCHOR_SECONDS = 7.07e-3
ANCHOR_SCENARIO = Scenario(
    concurrency=1, context=76, generated_tokens=210, target="llama-3.1-8b", hardware="h100-sxm", drafter="eagle"
)
ANCHOR_SOURCE = "plain decode step of Llama-3.1-8B on one H100 at batch 1, 7.07 ms (vLLM issue #20780, TPOT table)"
ANCHOR_WEIGHT = 3.0
DESCRIPTION = (
    "vLLM V1 on one GPU: the roofline plus a fixed time per pass (a draft model's as the target's) and the "
    "scheduler's time per sequence in a pass, imperfect overlap of memory and arithmetic, and an n-gram "
    "lookup that drafts only on a match; fitted to public measurements, judged on rows held out of the fit."
)


def profile(values: Sequence[float], names: Sequence[str] = FITTED, **fixed: Any) -> EngineProfile:
    """The vllm profile with ``names`` set to ``values`` and other constants ``fixed``; a
    draft model's and a fused head's passes take the target's and a head's fixed time."""
    constants = {"head_pass_s": 0.0, "overlap": math.inf, **FIXED, **fixed}
    constants.update(zip(names, (float(v) for v in values), strict=True))
    return EngineProfile(key="vllm", name="vLLM (fitted)", description=DESCRIPTION, batching="steady", **constants)


def public_domain(rows: Sequence[Measurement]) -> ProfileDomain:
    """What the public profile's rows cover (:func:`specmodel.model.domain.profile_domain`):
    their targets, cards, drafters, GPUs and batches, and the engine as each source states it
    (the measurement file's ``engine`` column). The anchor is one of the rows' deployments."""
    return profile_domain(
        targets=(r.target for r in rows), hardware=(r.hardware for r in rows), drafters=(r.method for r in rows),
        tensor_parallel=(r.tensor_parallel for r in rows), concurrency=(r.batch for r in rows),
        engine_versions=(r.engine for r in rows),
    )  # fmt: skip


def plain_step_s(settings: Settings, anchor: ScenarioGrid | None = None) -> float:
    """The ``vllm`` engine's plain decode step in the anchor's scenario (seconds): what the fit
    holds near :data:`ANCHOR_SECONDS` (``anchor``: that scenario's grid, already built)."""
    grid = anchor if anchor is not None else scenario_grid(ANCHOR_SCENARIO, settings, engine="vllm")
    return 1.0 / float(evaluate(grid, settings=settings).base_tokens_per_s)


#: The targets for each split: the median (and 90th percentile) of |predicted / measured - 1|.
TARGETS: dict[str, dict[str, float]] = {
    "leave_one_source_out": {"median": 0.07},
    "leave_one_workload_out": {"median": 0.07},
    "small_to_large": {"median": 0.08},
    "in_sample": {"median": 0.06, "p90": 0.15},
}


#: The limits on identifiability: no fitted constant's relative standard error above
#: ``relative_se``, no two constants correlated beyond ``correlation``.
IDENTIFIABLE = {"relative_se": 0.5, "correlation": 0.9}


def slack(split: str, recorded: Sequence[float]) -> float:
    """The smallest ``target - error`` over a split's :data:`TARGETS`, from its recorded
    ``(median, p90, worst)`` (negative: a target missed by that much).

    >>> round(slack("in_sample", (0.05, 0.16, 0.3)), 3)
    -0.01
    """
    stats = dict(zip(("median", "p90", "max"), recorded, strict=False))
    return min(v - stats[k] for k, v in TARGETS[split].items())


def met(split: str, recorded: Sequence[float]) -> bool:
    """Whether a split's recorded ``(median, p90, worst)`` meets its :data:`TARGETS`.

    >>> met("in_sample", (0.05, 0.16, 0.3)), met("small_to_large", (0.07, 0.2, 0.3))
    (False, True)
    """
    return slack(split, recorded) >= 0


#: A prior that holds one fitted constant near another: ``(name, toward, width)`` adds the
#: residual ``log(value[name] / value[toward]) / width`` (width in log units).
Shrink = tuple[str, str, float]


def problem(
    rows: list[Measurement],
    names: Sequence[str] = FITTED,
    fixed: Mapping[str, Any] | None = None,
    shrink: Shrink | None = None,
) -> Problem:
    """The public profile's fit of ``names`` to ``rows`` (module docstring): the anchor, the
    tie-break on the constants of :data:`TIEBREAK` fitted, and with ``shrink`` its prior, the two
    constants it ties searched above 1 ns so that their log exists."""
    start, low, high = (np.array([PARAMETERS[n][i] for n in names]) for i in range(3))
    if shrink is not None:
        low = np.where([n in shrink[:2] for n in names], np.maximum(low, 1e-9), low)
    priors: dict[str | tuple[str, str], Prior] = {
        n: Prior(c, TIEBREAK_WIDTH) for n, c in TIEBREAK.items() if n in names
    }
    if shrink is not None:
        priors[shrink[:2]] = Prior(1.0, shrink[2])
    anchor = Timing(ANCHOR_SCENARIO, ANCHOR_SECONDS, ANCHOR_WEIGHT)
    start_, low_, high_ = (tuple(float(v) for v in x) for x in (start, low, high))
    base = profile(start_, names, **(fixed or {}))
    return Problem(base, tuple(rows), (anchor,), tuple(names), start_, low_, high_, priors)


def fit_key(
    rows: Sequence[Measurement], names: Sequence[str], fixed: Mapping[str, Any] | None, shrink: Shrink | None
) -> tuple[Any, ...]:
    """What a fit depends on: its rows, constants, fixed values and prior, and this module's
    settings (the anchor, the tie-break, the restarts and the starts and bounds)."""
    settings = (ANCHOR_SECONDS, ANCHOR_WEIGHT, TIEBREAK_WIDTH, engine_fit.RESTARTS, tuple(TIEBREAK.items()))
    fixed_items = tuple(sorted({**FIXED, **(fixed or {})}.items()))
    return (tuple(rows), tuple(names), fixed_items, shrink, settings, tuple(PARAMETERS.items()))


def fit(
    rows: list[Measurement],
    names: Sequence[str] = FITTED,
    fixed: Mapping[str, Any] | None = None,
    shrink: Shrink | None = None,
) -> Fit:
    """:func:`search_fit`, made once per :func:`fit_key` in a process (the held-out splits, the
    trade-off and the memory refits share many fits); its arrays are read-only."""
    return _fit_once(Keyed(fit_key(rows, names, fixed, shrink), (rows, names, fixed, shrink)))


@cache
def _fit_once(request: Keyed[tuple[list[Measurement], Sequence[str], Mapping[str, Any] | None, Shrink | None]]) -> Fit:
    """:func:`search_fit` of ``request``'s arguments, memoised by their :func:`fit_key` (a fit is
    a pure function of it)."""
    rows, names, fixed, shrink = request.value
    return search_fit(rows, names, fixed, shrink)


def search_fit(
    rows: list[Measurement],
    names: Sequence[str] = FITTED,
    fixed: Mapping[str, Any] | None = None,
    shrink: Shrink | None = None,
) -> Fit:
    """:func:`specmodel.engine_fit.fit` of :func:`problem`.

    The n-gram match rate ``min(1, u_1 / a)`` bends at every n-gram row's ``u_1`` (:func:`kinks`),
    and a bend can hold a local minimum or stop a trust region short of one. So, when ``a`` is
    fitted on rows with n-gram runs, a search is run again from a start of ``a`` inside every
    other stretch between bends (:func:`stretch_starts`)."""
    task = problem(rows, names, fixed, shrink)
    bends = kinks(rows, names)

    def starts(x: FloatArray) -> tuple[int, list[float]]:
        i = list(names).index("ngram_matched_acceptance")
        return i, stretch_starts(bends, task.low[i], task.high[i], skip=float(x[i]))

    return engine_fit.fit(task, starts if bends else None)


def kinks(rows: list[Measurement], names: Sequence[str]) -> list[float]:
    """Where the n-gram match rate ``min(1, u_1 / a)`` bends as a function of ``a``: the first
    guess's acceptance ``u_1`` of every n-gram row that states it, ascending (none when ``a`` is
    not among ``names``)."""
    if "ngram_matched_acceptance" not in names:
        return []
    return sorted({r.per_position_acceptance[0] for r in rows if r.method == "ngram" and r.per_position_acceptance})


def stretch_starts(bends: Sequence[float], low: float, high: float, skip: float | None = None) -> list[float]:
    """A start inside each stretch between ``low``, the ``bends`` and ``high`` (its geometric
    middle), but the stretch that holds ``skip``.

    >>> [round(a, 3) for a in stretch_starts([0.1, 0.4], 0.05, 1.0)]
    [0.071, 0.2, 0.632]
    >>> [round(a, 3) for a in stretch_starts([0.1, 0.4], 0.05, 1.0, skip=0.3)]
    [0.071, 0.632]
    """
    edges = [low, *(b for b in bends if low < b < high), high]
    return [math.sqrt(a * b) for a, b in zip(edges, edges[1:]) if skip is None or not a <= skip <= b]


def settings_of(values: Mapping[str, float], fixed: Mapping[str, Any] | None = None) -> Settings:
    """Settings whose ``vllm`` engine is the profile with these constants."""
    return Settings().with_engine(profile(list(values.values()), list(values), **(fixed or {})))


def group_out(
    rows: list[Measurement],
    key: Callable[[Measurement], str],
    names: Sequence[str],
    shrink: Shrink | None = None,
    fixed: Mapping[str, Any] | None = None,
) -> FloatArray:
    """``predicted / measured - 1`` of every row, each predicted by a fit on the rows whose
    ``key`` differs from its own (``fixed``: constants set otherwise than in :data:`FIXED`)."""
    fit_on = _fitter(names, fixed, shrink)
    return engine_fit.held_out_errors(rows, [key(r) for r in rows], fit_on, "vllm")


def _fitter(
    names: Sequence[str], fixed: Mapping[str, Any] | None, shrink: Shrink | None = None
) -> Callable[[list[Measurement]], Settings]:
    """Rows -> the settings of the public profile fitted to them."""
    return lambda rows: settings_of(fit(rows, names, fixed, shrink).values, fixed)


def eagle3_step_by_source(rows: list[Measurement]) -> dict[str, tuple[float, float]]:
    """Each source's own fit with a separate fixed step time for EAGLE-3's head: ``(t_h, t_h3)``
    in seconds, by source (on a source without n-gram rows the n-gram constant is not fitted).
    Why the profile has no such term: each source alone may ask for it, but for a different size."""
    out = {}
    for source in dict.fromkeys(r.source_name for r in rows):
        own = [r for r in rows if r.source_name == source]
        names = [n for n in FITTED if n != "ngram_matched_acceptance" or any(r.method == "ngram" for r in own)]
        values = fit(own, [*names, "fused_head_pass_s"]).values
        out[source] = (values["head_pass_s"], values["fused_head_pass_s"])
    return out


def small_to_large_fit(
    rows: list[Measurement],
    names: Sequence[str],
    largest: int = 16,
    fixed: Mapping[str, Any] | None = None,
    shrink: Shrink | None = None,
) -> tuple[Fit, FloatArray]:
    """The fit on the rows at batch <= ``largest``, and ``predicted / measured - 1`` of the others
    under it (``fixed``: constants set otherwise than in :data:`FIXED`, for both)."""
    groups = [None if r.batch <= largest else "large" for r in rows]
    errors = engine_fit.held_out_errors(rows, groups, _fitter(names, fixed, shrink), "vllm")
    return fit([r for r in rows if r.batch <= largest], names, fixed, shrink), errors


def small_to_large(
    rows: list[Measurement], names: Sequence[str], largest: int = 16, fixed: Mapping[str, Any] | None = None
) -> FloatArray:
    """``predicted / measured - 1`` of the rows at batch > ``largest``, fitted on the others."""
    return small_to_large_fit(rows, names, largest, fixed)[1]


@dataclass(frozen=True)
class SmallBatch:
    """The profile fitted on batch <= 16 alone: its overlap exponent, and ``predicted / measured
    - 1`` of the larger batches under it, with the token budget and with the prefill spread evenly
    over every pass (no budget)."""

    overlap: float
    errors: tuple[float, ...]
    even_errors: tuple[float, ...]


def small_batch(rows: list[Measurement]) -> SmallBatch:
    """:func:`small_to_large_fit` of the fitted constants, with and without the token budget."""
    small, errors = small_to_large_fit(rows, FITTED)
    even = small_to_large_fit(rows, FITTED, fixed={"token_budget": None})[1]
    return SmallBatch(small.values["overlap"], tuple(map(float, errors)), tuple(map(float, even)))


def held_out(
    rows: list[Measurement], names: Sequence[str] = FITTED, fixed: Mapping[str, Any] | None = None
) -> dict[str, dict[str, float]]:
    """The error summaries (median / p90 / max of |error|, and the mean signed error) of:
    leave one (source, workload) out, leave one source out, fit on batch <= 16 predicting the
    larger batches, and in sample (``fixed``: constants set otherwise than in :data:`FIXED`)."""
    splits = {
        "leave_one_workload_out": group_out(rows, attrgetter("workload"), names, fixed=fixed),
        "leave_one_source_out": group_out(rows, attrgetter("source_name"), names, fixed=fixed),
        "small_to_large": small_to_large(rows, names, fixed=fixed),
        "in_sample": fit(rows, names, fixed).errors,
    }
    return {k: {**error_summary(e), "mean": float(np.mean(e)), "rows": len(e)} for k, e in splits.items()}


def held_out_residuals(rows: list[Measurement], names: Sequence[str] = FITTED) -> list[Residual]:
    """``log(predicted / measured)`` of every row held out of the fit, as the intervals of
    :mod:`specmodel.uncertainty` are made of them: each row under the profile fitted without its
    source (leave one source out), then each row at batch > 16 under the profile fitted on the
    smaller batches; each with its drafter kind, batch and fold (its source and workload: the
    rows an out-of-sample interval for it may not use)."""
    loso = group_out(rows, attrgetter("source_name"), names)
    large = [r for r in rows if r.batch > 16]
    pairs = [*zip(rows, loso, strict=True), *zip(large, small_to_large(rows, names), strict=True)]
    return [Residual(str(drafter_kind(r.method)), r.batch, r.workload, float(np.log1p(e))) for r, e in pairs]


def identifiability(result: Fit) -> Identifiability:
    """The constants' relative standard errors and correlations, from the rows and the anchor
    (what the rows pin, not the tie-break)."""
    return engine_fit.identifiability(result)
