"""Advice for a real deployment: from vLLM's measured acceptance to a recommended gamma.

Input: the per-position acceptance a vLLM server measured (``accepted_per_pos / num_drafts``,
see :mod:`specmodel.vllm.counters`), and what the user says about the deployment:
concurrency B, context T, the drafter (``--drafter`` or vLLM's ``--speculative-config``),
the accelerator, and the engine whose profile prices the passes (``vllm`` by default: the
counters come from a vLLM server). Everything here is pure computation on those; formatting
is in :mod:`specmodel.vllm.advice_text`.

The rule (every number from the model, :func:`specmodel.evaluate_per_position`):

1. the measured positions m bound gamma: acceptance of a position never drafted is unknown,
   so the candidates are gamma = 1..m, each keeping the first gamma measured positions;
2. ``s_g`` = predicted speedup over plain decoding at gamma g with the *deployed* drafter at
   B and T; a predicted gain counts only if it exceeds :data:`MIN_GAIN` (3 %, the model's
   calibration tolerance), for turning speculation on as for changing gamma; each ``s_g``
   with its interval ``[low_g, high_g]`` at a two-sided ``level`` (80 % by default), what the
   engine's profile has erred by on runs held out of its fit
   (:func:`specmodel.uncertainty.speedup_interval`);
3. verdict, for the deployed drafter, and the recommended gamma (0: turn speculation off),
   given only where the intervals clear the margin (:func:`decide`), else ``measure``:

   * ``does-not-fit`` (no gamma: None) when the deployment as described (the drafter, B
     sequences of T + G tokens, on its GPUs) needs more memory than the GPUs may use
     (:attr:`specmodel.Evaluation.fits`): no speedup of a server that cannot hold its
     sequences means anything, and the reason says how many sequences fit, with the drafter
     and without;
   * ``off`` (gamma 0) when no ``s_g`` exceeds ``1 + MIN_GAIN`` and no ``high_g`` does
     either: even the interval's best case gains less than the margin;
   * ``lower-gamma`` (gamma g*) when the best ``s_g*`` beats the deployed gamma's by more
     than ``MIN_GAIN`` and ``low_g* > (1 + MIN_GAIN) high_deployed``: the two intervals, the
     margin between them, do not overlap. The overlap rule, not an interval of the ratio
     ``s_g* / s_deployed``: the public rows measure gammas of one deployment side by side at
     batch 1 of one source alone, too few to say how far the ratio errs;
   * ``keep`` (the deployed gamma) when neither of these holds at the point predictions and
     ``low_deployed >= 1``: speculation at the deployed gamma is not slower than plain
     decoding even at the interval's low end;
   * ``measure`` (the deployed gamma, kept until measured) where the point prediction makes
     one of these verdicts and its interval does not: the two settings to compare
     (:func:`measure_pair`) are the lower gamma and the deployed one, or the deployed (or the
     best) gamma and speculation off;

4. alternatives: nothing measured says how another drafter would accept on this traffic, so
   the advice never predicts a speedup for one. For each other drafter that can serve the
   target it gives the break-even acceptance instead: the smallest alpha (the ``same``
   profile, any gamma 1..10) at which that drafter would beat the deployed drafter's best
   setting by more than ``MIN_GAIN``, to try and measure (:func:`break_even_alphas`); a
   drafter that does not fit beside the target at B and T is said so, with no acceptance.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.formatting import EVEN_MARGIN, gib
from specmodel.formatting import times_distinct as _times
from specmodel.model.acceptance import conditional_from_per_position
from specmodel.model.breakeven import first_crossing
from specmodel.model.drafters import check_drafter, drafter_names, has_declared_head
from specmodel.model.evaluate import evaluate, evaluate_per_position
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import DEFAULTS
from specmodel.model.settings import Settings
from specmodel.model.specs import added_architectures
from specmodel.model.trees import check_tokens_per_pass, cut_tree
from specmodel.model.types import FloatArray
from specmodel.uncertainty import DEFAULT_LEVEL, speedup_interval
from specmodel.vllm.speculative_config import ServedDrafter, served_drafter

#: A predicted gain must exceed this to count: the margin within which a speedup is called
#: even everywhere (:data:`specmodel.formatting.EVEN_MARGIN`, the tolerance of the article's
#: speedups in the calibration table). A smaller predicted gain is within the model's own
#: error, and is no reason to turn speculation on or to change drafters.
MIN_GAIN = EVEN_MARGIN

#: What the advice can say for the deployed drafter (:attr:`Advice.verdict`).
ADVICE = ("keep", "lower-gamma", "off", "measure", "does-not-fit")

#: Gammas an alternative drafter is tried at when its break-even acceptance is sought.
ALTERNATIVE_GAMMAS = tuple(range(1, 11))


@dataclass(frozen=True)
class Alternative:
    """Another drafter, and the acceptance it would need on this traffic to beat the deployed
    drafter's best setting by more than MIN_GAIN."""

    drafter: str
    break_even_alpha: float | None  #: the ``same`` profile's alpha; None: no acceptance would do
    gamma: int | None  #: its best gamma at that acceptance
    fits: bool = True  #: whether it fits beside the target at this concurrency and context


@dataclass(frozen=True)
class Advice:
    """The inferred acceptance, the predictions and the verdict."""

    per_position: tuple[float, ...]  #: measured unconditional acceptance u_1..u_m
    conditional: tuple[float, ...]  #: a_j = u_j / u_{j-1}
    served: ServedDrafter  #: the drafter as the user named it
    deployed_gamma: int
    concurrency: int
    context: int
    hardware: str
    target: str
    engine: str  #: the engine profile that priced the passes
    speedup: tuple[float, ...]  #: s_g for g = 1..m with the deployed drafter
    recommended_gamma: int | None  #: for the deployed drafter; 0: no speculation; None: it does not fit
    verdict: str  #: one of :data:`ADVICE`
    reason: str
    alternatives: tuple[Alternative, ...]  #: other drafters to try, with the acceptance each would need
    tensor_parallel: int = 1  #: GPUs the target is split over
    fits: bool = True  #: the deployment fits in the GPUs' usable memory
    max_concurrency: int | None = None  #: most sequences that fit at this context, with the drafter
    max_concurrency_without_draft: int | None = None  #: the same without speculation
    observed: bool = False  #: the server was seen running ``concurrency`` requests (it holds them)
    speedup_low: tuple[float, ...] = ()  #: low end of each s_g's interval
    speedup_high: tuple[float, ...] = ()  #: high end of each s_g's interval
    level: float = DEFAULT_LEVEL  #: the intervals' two-sided level
    #: under ``measure``: the two gammas to compare (0: speculation off)
    compare: tuple[int, ...] = ()


# --- the numbers --------------------------------------------------------------------------


def predictions(
    per_position: npt.ArrayLike,
    concurrency: int,
    context: int,
    drafter: str,
    hardware: str | None = None,
    target: str | None = None,
    settings: Settings | None = None,
    engine: str = "vllm",
    layout: dict[str, int] | None = None,
    tree_widths: tuple[int, ...] | None = None,
) -> list[Evaluation]:
    """The model's evaluation for g = 1..m under ``engine`` when the first g measured positions
    are drafted (:func:`specmodel.evaluate_per_position`), with the ``layout`` fields
    (tensor_parallel, draft_tensor_parallel, tree_topk, verify_tokens, tree_draft_positions),
    the tree cut to depth g (:func:`specmodel.model.trees.cut_tree`: a vLLM tree of level
    ``tree_widths`` keeps its first g levels; an SGLang tree verifies at most
    ``w + (g - 1) w^2 + 1`` positions); ``s_g`` is each one's speedup."""
    u = np.asarray(per_position, dtype=float)
    layout = dict(layout or {})
    out = []
    for g in range(1, u.shape[-1] + 1):
        fields = cut_tree(layout, g, tree_widths)
        out.append(evaluate_per_position(u[:g], concurrency, context, drafter, hardware, target,
                                         settings=settings, engine=engine, **fields))  # fmt: skip
    return out


def best_gamma(speedups: npt.ArrayLike) -> int:
    """The gamma (1-based) with the highest speedup, or 0 if none beats plain decoding by
    more than :data:`MIN_GAIN`.

    >>> best_gamma([1.2, 1.5, 1.4]), best_gamma([0.9, 0.8]), best_gamma([1.01, 1.02])
    (2, 0, 0)
    """
    s = np.asarray(speedups, dtype=float)
    g = int(np.argmax(s))
    return g + 1 if s[g] > 1.0 + MIN_GAIN else 0


def advise(
    per_position: npt.ArrayLike,
    concurrency: int,
    context: int = DEFAULTS["context"],
    served: ServedDrafter | None = None,
    hardware: str | None = None,
    target: str | None = None,
    settings: Settings | None = None,
    engine: str = "vllm",
    tensor_parallel: int = 1,
    observed: bool = False,
    level: float = DEFAULT_LEVEL,
    measured: str = "the server's metrics",
) -> Advice:
    """Apply the module's rule to measured per-position acceptance, on ``tensor_parallel`` GPUs with the deployment's
    drafter layout (:meth:`ServedDrafter.layout`: the drafter's GPUs, a tree). ``observed``: the server was seen
    running ``concurrency`` requests, so it holds them whatever the model's memory estimate says; the verdict is then
    given, and :attr:`Advice.fits` records that the estimate disagrees. ``measured``: where the acceptance came from
    (:func:`_deployed_gamma`); ``level``: the intervals' (:func:`specmodel.uncertainty.speedup_interval`).

    >>> drafter = served_drafter("qwen3-0.6b")
    >>> advise([0.75, 0.478, 0.259, 0.119], concurrency=1, served=drafter, engine="ideal").verdict
    'keep'
    >>> a = advise([0.75, 0.478, 0.259, 0.119], concurrency=64, served=drafter, engine="vllm")
    >>> a.recommended_gamma, a.verdict, a.compare
    (4, 'measure', (1, 4))
    """
    settings, u = settings or Settings(), np.asarray(per_position, dtype=float)
    hardware, target = hardware or settings.deployment.hardware, target or settings.deployment.target
    served = served or served_drafter(settings.deployment.draft, target)
    check_drafter(served.drafter, target)
    deployed = _deployed_gamma(u, served, measured)
    layout = {"tensor_parallel": tensor_parallel, **served.layout()}
    speedups = partial(_speedups, u, concurrency, context, served, hardware, target, engine=engine, layout=layout)
    evaluations = predictions(u, concurrency, context, served.drafter, hardware, target, settings, engine, layout,
                              served.tree_widths)  # fmt: skip
    s = np.array([float(e.speedup) for e in evaluations])
    low, high = speedup_interval(settings, engine, served.drafter, concurrency, s, level, predict=speedups)
    at, fits = evaluations[deployed - 1], bool(evaluations[deployed - 1].fits)
    verdict, gamma = decide(s, deployed, low, high) if fits or observed else ("does-not-fit", None)
    conditional = conditional_from_per_position(u)
    alternatives: tuple[Alternative, ...] = ()
    if gamma is None:
        reason = _no_fit_reason(at, int(concurrency), int(context), served.drafter)
    else:
        goal = (1.0 + MIN_GAIN) * max(1.0, float(s[gamma - 1]) if gamma else 1.0)
        alternatives = _alternatives(served.drafter, goal, concurrency, context, hardware, target, settings, engine,
                                     tensor_parallel)  # fmt: skip
        reason = _reason(verdict, s, deployed, gamma, served.drafter, int(concurrency), conditional, (low, high, level))
    return Advice(
        per_position=tuple(float(x) for x in u),
        conditional=tuple(float(x) for x in conditional),
        served=served, deployed_gamma=int(deployed), concurrency=int(concurrency), context=int(context),
        hardware=hardware, target=target, engine=engine, speedup=tuple(float(x) for x in s),
        recommended_gamma=gamma, verdict=verdict, reason=reason, alternatives=alternatives,
        tensor_parallel=int(tensor_parallel), fits=fits, max_concurrency=int(at.max_concurrency),
        max_concurrency_without_draft=int(at.max_concurrency_without_draft), observed=observed,
        speedup_low=tuple(map(float, low)), speedup_high=tuple(map(float, high)), level=float(level),
        compare=measure_pair(s, deployed) if verdict == "measure" else (),
    )  # fmt: skip


def _speedups(
    u: FloatArray,
    concurrency: int,
    context: int,
    served: ServedDrafter,
    hardware: str,
    target: str,
    settings: Settings,
    engine: str,
    layout: dict[str, int],
) -> FloatArray:
    """s_g for g = 1..m under ``settings`` (:func:`predictions`): what a user's fit's interval
    differentiates when a fitted constant moves."""
    found = predictions(u, concurrency, context, served.drafter, hardware, target, settings, engine, layout,
                        served.tree_widths)  # fmt: skip
    return np.array([float(e.speedup) for e in found])


def _alternatives(
    deployed: str,
    goal: float,
    concurrency: int,
    context: int,
    hardware: str,
    target: str,
    settings: Settings,
    engine: str,
    tensor_parallel: int,
) -> tuple[Alternative, ...]:
    """The other drafters of the catalogue that ``target`` has (an MTP head only where its
    config declares one), each with its break-even acceptance, the likeliest first."""
    others = [d for d in drafter_names(target) if d != deployed and has_declared_head(d, target)
              and d not in added_architectures()]  # fmt: skip
    found = break_even_alphas(others, goal, concurrency, context, hardware, target, settings, engine, tensor_parallel)
    return tuple(sorted(found, key=lambda a: (not a.fits, a.break_even_alpha is None, a.break_even_alpha or 0.0,
                                              a.drafter)))  # fmt: skip


def _no_fit_reason(at: Evaluation, concurrency: int, context: int, drafter: str) -> str:
    """Why a deployment that does not fit gets no gamma, and what would fit."""
    need, usable = gib(float(at.memory_required_bytes)), gib(float(at.usable_memory_bytes))
    with_draft, without = int(at.max_concurrency), int(at.max_concurrency_without_draft)
    text = (
        f"{concurrency} sequence{'s' if concurrency != 1 else ''} of context {context} with {drafter} need {need} "
        f"on the busiest GPU, but {usable} is usable: the deployment does not fit in memory, so no gamma is advised"
    )
    if without >= concurrency:
        return text + (
            f"; with {drafter} at most {with_draft} sequences fit, {without} without it: lower the concurrency to "
            f"{with_draft} or turn speculation off"
        )
    if without == 0:
        return text + "; the target's weights alone do not fit: check --hardware and --tensor-parallel"
    return text + (
        f"; even without speculation at most {without} sequences fit: check --concurrency, --context, "
        "--tensor-parallel and --hardware"
    )


def _deployed_gamma(u: np.ndarray, served: ServedDrafter, measured: str) -> int:
    """The deployed gamma: the configuration's (a tree's depth), which must match the metrics' positions,
    of a tree that yields the tokens per pass ``measured`` measured (:func:`_check_measured_tree`)."""
    if u.ndim != 1 or u.size < 1:
        raise SpecModelError(f"per-position acceptance must be a list of 1 or more rates; got shape {u.shape}")
    deployed = served.gamma if served.gamma is not None else u.size
    if deployed != u.size:
        what = "speculative_token_tree of depth" if served.tree_topk else "num_speculative_tokens"
        raise SpecModelError(
            f"{what} {deployed} in --speculative-config, but the metrics have {u.size} draft positions"
        )
    _check_measured_tree(u, served, measured)
    return int(deployed)


def _check_measured_tree(u: np.ndarray, served: ServedDrafter, measured: str) -> None:
    """The mean acceptance length measured by ``measured`` (1 + the sum of the per-position
    acceptance ``u``, tokens per verify pass) against the deployed tree: more tokens per pass
    than its verified positions yield is refused, naming both
    (:func:`specmodel.model.trees.check_tokens_per_pass`). A chain, or a tree of the default
    size, verifies gamma + 1 positions or more, which no measured acceptance exceeds; a count
    below 2 is refused with the scenario's other checks, as ``point`` refuses it."""
    if served.verify_tokens is None or served.verify_tokens < 2:
        return
    if served.tree_widths is not None:
        tree = "the deployed speculative_token_tree"
    else:
        tree = f"--verify-tokens {served.verify_tokens}"
    check_tokens_per_pass(1.0 + float(np.sum(u)), u.size, served.verify_tokens, measured, tree)


def decide(
    s: FloatArray, deployed: int, low: FloatArray | None = None, high: FloatArray | None = None
) -> tuple[str, int]:
    """(verdict, recommended gamma) for the deployed drafter by the module's rule, each verdict
    only where the intervals ``[low, high]`` clear the margin (none given: the point
    predictions alone), else ``measure`` with the deployed gamma kept.

    >>> decide(np.array([1.2, 1.5, 1.4]), 3), decide(np.array([1.2, 1.50, 1.49]), 3), decide(np.array([1.01]), 1)
    (('lower-gamma', 2), ('keep', 3), ('off', 0))
    >>> s = np.array([1.2, 1.5, 1.4])
    >>> decide(s, 3, s * 0.9, s * 1.1), decide(s, 3, s * 0.99, s * 1.01)
    (('measure', 3), ('lower-gamma', 2))
    >>> decide(np.array([1.01]), 1, np.array([0.9]), np.array([1.1])), decide(s, 2, s * 0.6, s * 1.4)
    (('measure', 1), ('measure', 2))
    """
    low = s if low is None else low
    high = s if high is None else high
    best = best_gamma(s)
    if best == 0:
        return ("off", 0) if float(np.max(high)) <= 1.0 + MIN_GAIN else ("measure", deployed)
    if best != deployed and s[best - 1] > (1.0 + MIN_GAIN) * s[deployed - 1]:
        clear = low[best - 1] > (1.0 + MIN_GAIN) * high[deployed - 1]
        return ("lower-gamma", best) if clear else ("measure", deployed)
    return ("keep", deployed) if low[deployed - 1] >= 1.0 else ("measure", deployed)


def measure_pair(s: FloatArray, deployed: int) -> tuple[int, int]:
    """The two gammas a ``measure`` verdict asks to compare (0: speculation off): the point
    predictions' lower gamma and the deployed one, the best gamma and off where the point says
    off, else the deployed gamma and off.

    >>> measure_pair(np.array([1.2, 1.5, 1.4]), 3), measure_pair(np.array([1.01, 1.0]), 2)
    ((2, 3), (1, 0))
    >>> measure_pair(np.array([1.1, 1.2]), 2)
    (2, 0)
    """
    verdict, gamma = decide(s, deployed)
    if verdict == "lower-gamma":
        return gamma, deployed
    if verdict == "off":
        return int(np.argmax(s)) + 1, 0
    return deployed, 0


def with_interval(s: float, low: float, high: float, level: float) -> str:
    """A speedup with its interval: ``1.27x (1.10-1.41, 80%)``.

    >>> with_interval(1.2712, 1.1, 1.414, 0.8)
    '1.27x (1.10-1.41, 80%)'
    """
    return f"{_times(s)} ({low:.2f}-{high:.2f}, {level:.0%})"


#: The alphas the break-even search evaluates (the crossing is interpolated between them).
BREAK_EVEN_ALPHAS = tuple(round(0.05 * i, 2) for i in range(1, 20)) + (0.99,)


def break_even_alphas(
    drafters: list[str],
    goal: float,
    concurrency: int,
    context: int,
    hardware: str,
    target: str,
    settings: Settings,
    engine: str,
    tensor_parallel: int = 1,
) -> list[Alternative]:
    """For each drafter (a chain, on the target's ``tensor_parallel`` GPUs), the smallest alpha
    of the ``same`` profile at which it reaches a
    speedup of ``goal`` at its best gamma of :data:`ALTERNATIVE_GAMMAS`: linearly interpolated
    between the alphas of :data:`BREAK_EVEN_ALPHAS`
    (:func:`specmodel.model.breakeven.first_crossing`), with the best gamma at the first alpha
    past it, among the settings that fit in memory (none: ``fits`` False). One grid
    evaluation for all drafters."""
    if not drafters:
        return []
    alphas, gammas = np.array(BREAK_EVEN_ALPHAS), np.array(ALTERNATIVE_GAMMAS)
    ev = evaluate(concurrency=concurrency, context=context, drafter=np.array(drafters)[:, None, None],
                  acceptance="same", alpha=alphas[None, :, None], gamma=gammas[None, None, :],
                  hardware=hardware, target=target, engine=engine, settings=settings,
                  tensor_parallel=tensor_parallel)  # fmt: skip
    speedup = np.where(np.broadcast_to(ev.fits, ev.speedup.shape), ev.speedup, -np.inf)
    out = []
    for drafter, grid in zip(drafters, speedup, strict=True):
        if not np.isfinite(grid).any():
            out.append(Alternative(drafter, None, None, fits=False))
            continue
        best = grid.max(axis=1)
        alpha = float(alphas[0]) if best[0] >= goal else first_crossing(alphas, best, goal)
        if np.isnan(alpha):
            out.append(Alternative(drafter, None, None))
            continue
        past = int(np.searchsorted(alphas, alpha))
        out.append(Alternative(drafter, alpha, int(np.argmax(grid[min(past, len(alphas) - 1)])) + 1))
    return out


def _measure_reason(
    s: FloatArray, deployed: int, concurrency: int, bounds: tuple[FloatArray, FloatArray, float]
) -> str:
    """Why the model cannot decide, and which two settings to measure against each other."""
    low, high, level = bounds
    a, b = measure_pair(s, deployed)
    sequences = f"{concurrency} sequence{'s' if concurrency != 1 else ''}"
    shown = {g: with_interval(s[g - 1], low[g - 1], high[g - 1], level) for g in (a, b) if g}
    if b:
        told = (f"gamma {a} is predicted at {shown[a]} against {shown[b]} at the deployed gamma {b}: the intervals "
                f"overlap, so the model cannot tell the two apart")  # fmt: skip
    else:
        told = (f"gamma {a} is predicted at {shown[a]}: the interval reaches both sides of plain decoding's "
                f"1.00x and its {MIN_GAIN:.0%} margin, so the model cannot tell whether speculation pays")  # fmt: skip
    other = f"gamma {b}" if b else "speculation off"
    return (f"at {sequences}, {told}; measure gamma {a} against {other} at {sequences}, and keep the deployed gamma "
            f"{deployed} until then")  # fmt: skip


def _reason(
    verdict: str,
    s: FloatArray,
    deployed: int,
    gamma: int,
    drafter: str,
    concurrency: int,
    conditional: FloatArray,
    bounds: tuple[FloatArray, FloatArray, float],
) -> str:
    """One plain sentence with the numbers behind the verdict."""
    if verdict == "measure":
        return _measure_reason(s, deployed, concurrency, bounds)
    at = f"at {concurrency} concurrent sequence{'s' if concurrency != 1 else ''}"
    top = int(np.argmax(s)) + 1
    if verdict == "off":
        return (
            f"{at}, no gamma of {drafter} beats plain decoding by more than {MIN_GAIN:.0%}: the best is "
            f"{_times(s[top - 1])} at gamma {top}; turn speculation off"
        )
    if verdict == "keep":
        text = f"{at}, the deployed gamma {deployed} gives {_times(s[deployed - 1])}"
        if top != deployed:
            return text + (
                f"; gamma {top} would give {_times(s[top - 1])}, within the model's {MIN_GAIN:.0%} "
                "tolerance, so not worth a change"
            )
        return text + f", the best of 1..{len(s)}"
    return (
        f"{at}, gamma {gamma} gives {_times(s[gamma - 1])} against {_times(s[deployed - 1])} at the deployed gamma "
        f"{deployed}: guesses past position {gamma} are accepted too rarely (conditional acceptance "
        f"{conditional[gamma]:.2f} at position {gamma + 1}) to pay for drafting and verifying them"
    )
