"""A test double of a vLLM server: a seeded Monte Carlo run of the modelled system producing vLLM's counters.

The run is the model's cohort (:mod:`specmodel.model.cohort`): B sequences start together and
each generates G = 256 tokens. In every iteration each unfinished sequence drafts gamma
tokens and the target verifies them; the sequence gets X tokens, the accepted guesses plus
the target's own, with ``P(X = x)`` from :func:`specmodel.model.acceptance.tokens_per_iteration_pmf`
of the per-position acceptance (the first rejection ends the iteration; Leviathan et al.
2023, arXiv:2211.17192, Algorithm 1). A sequence leaves once it has G tokens.

Each (sequence, iteration) is one verified draft, counted as vLLM counts it
(``SpecDecodingStats.observe_draft``): one draft, gamma draft tokens, X - 1 accepted
tokens, +1 at positions 0 .. X - 2. The whole run is one logging interval; its wall time is
the model's expected cohort time ``B G / spec_tokens_per_s`` (:func:`specmodel.evaluate`),
so the throughputs are counts over the time the model predicts, not a re-timing of the
sampled iterations. Everything is vectorised over sequences and iterations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, SupportsFloat

import numpy as np
import numpy.typing as npt

from specmodel.errors import SpecModelError
from specmodel.model import acceptance as acc
from specmodel.model.constants import GENERATED_TOKENS
from specmodel.model.evaluate import evaluate, scenario_grid
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import Scenario
from specmodel.model.settings import Settings
from specmodel.model.validation import MAX_GAMMA, check_integer, check_per_position
from specmodel.vllm.counters import SpecDecodeCounters, per_position_rate
from specmodel.vllm.log_line import format_log_message
from tests.exposition import format_exposition


@dataclass(frozen=True)
class EngineRun:
    """One simulated cohort run as the engine reports it (SI units)."""

    counters: SpecDecodeCounters
    elapsed_s: float  #: the model's expected wall time of the cohort, seconds
    per_position: np.ndarray  #: the acceptance the run was drawn from, u_1..u_gamma

    @property
    def log_message(self) -> str:
        """The SpecDecodingLogging message vLLM would print for this interval."""
        return format_log_message(self.counters, self.elapsed_s)

    @property
    def exposition(self) -> str:
        """The Prometheus exposition of the counters (as if scraped after the run)."""
        return format_exposition(self.counters)


def tokens_per_iteration_draws(
    per_position: npt.ArrayLike, shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    """Draws of X, the tokens one iteration emits (1 .. gamma + 1), with
    ``P(X = x) = u_{x-1} - u_x`` (:func:`specmodel.model.acceptance.tokens_per_iteration_pmf`),
    by inverting the cumulative distribution at uniform draws.

    >>> tokens_per_iteration_draws([1.0, 1.0], (3,), np.random.default_rng(0)).tolist()
    [3, 3, 3]
    """
    pmf = acc.tokens_per_iteration_pmf(np.asarray(per_position, dtype=float))
    cdf = np.cumsum(pmf)
    u = rng.random(shape) * cdf[-1]
    return np.searchsorted(cdf, u, side="right") + 1


def active_iterations(tokens: np.ndarray, generated_tokens: int) -> np.ndarray:
    """Which iterations run, per sequence (rows) and iteration (columns): iteration i runs
    while the tokens of iterations before it sum to less than G.

    >>> active_iterations(np.array([[2, 2, 2]]), generated_tokens=3).tolist()
    [[True, True, False]]
    """
    before = np.cumsum(tokens, axis=-1) - tokens
    return before < generated_tokens


def count_drafts(tokens: np.ndarray, active: np.ndarray, gamma: int) -> SpecDecodeCounters:
    """vLLM's counters over the active (sequence, iteration) pairs: one draft of gamma
    tokens each, ``X - 1`` of them accepted, counted at positions 0 .. X - 2 (as vLLM's
    ``SpecDecodingStats.observe_draft`` counts, ``vllm/v1/spec_decode/metrics.py``).

    >>> count_drafts(np.array([[3, 1, 2]]), np.array([[True, True, False]]), 2)
    SpecDecodeCounters(num_drafts=2, num_draft_tokens=4, num_accepted_tokens=2, accepted_per_position=(1, 1))
    """
    accepted = tokens[active] - 1
    histogram = np.bincount(accepted, minlength=gamma + 1)  # drafts with exactly k accepted
    at_least = np.cumsum(histogram[::-1])[::-1]  # drafts with >= k accepted
    drafts = int(active.sum())
    return SpecDecodeCounters(
        num_drafts=drafts,
        num_draft_tokens=gamma * drafts,
        num_accepted_tokens=int(accepted.sum()),
        accepted_per_position=tuple(int(x) for x in at_least[1 : gamma + 1]),
    )


def simulate_counters(
    per_position: npt.ArrayLike, concurrency: int, seed: int = 0, generated_tokens: int = GENERATED_TOKENS
) -> SpecDecodeCounters:
    """Monte Carlo of the cohort (module docstring): B sequences generating G tokens each at
    per-position acceptance ``u_1..u_gamma``; returns vLLM's counters. Deterministic for a
    seed (numpy's default generator). Draws come in blocks of iterations, a first block
    sized for the expected number of iterations ``G / E[X]`` with room to spare, more
    until every sequence has its G tokens.

    >>> simulate_counters([1.0, 1.0, 1.0], concurrency=2, generated_tokens=10).num_drafts  # 4 tokens a pass
    6
    """
    shape = np.shape(per_position)
    if len(shape) != 1 or not 1 <= shape[0] <= MAX_GAMMA:
        raise SpecModelError(f"per-position acceptance must be a list of 1 to {MAX_GAMMA} rates; got shape {shape}")
    u = check_per_position(per_position)
    batch = int(check_integer("concurrency", concurrency, 1))
    rng = np.random.default_rng(seed)
    g = int(check_integer("generated_tokens", generated_tokens, 1))
    block = min(g, int(np.ceil(1.25 * g / float(acc.expected_tokens_per_iteration(u)))) + 8)
    tokens = tokens_per_iteration_draws(u, (batch, block), rng)
    while tokens.shape[1] < g and tokens.sum(axis=1).min() < g:
        more = tokens_per_iteration_draws(u, (batch, min(block, g - tokens.shape[1])), rng)
        tokens = np.concatenate([tokens, more], axis=1)
    return count_drafts(tokens, active_iterations(tokens, g), u.shape[-1])


def cohort_seconds(concurrency: SupportsFloat, spec_tokens_per_s: SupportsFloat, generated_tokens: int) -> float:
    """Wall time of the speculative cohort, ``B G / spec_tokens_per_s`` seconds: B sequences
    of G tokens at the model's output rate over all sequences (tokens/s).

    >>> cohort_seconds(2, 512.0, 256)
    1.0
    """
    return float(concurrency) * generated_tokens / float(spec_tokens_per_s)


def simulate(
    scenario: Scenario | None = None, /, *, seed: int = 0, settings: Settings | None = None, **fields: Any
) -> EngineRun:
    """Simulate one scenario of the model (a :class:`~specmodel.model.scenario.Scenario` or its
    fields, as :func:`specmodel.evaluate` takes them; one scenario only) and report it as the
    engine would. The per-position acceptance is the profile's, or the measured one given as
    ``per_position``.

    >>> run = simulate(concurrency=4, seed=1)
    >>> run.counters.num_draft_tokens == 4 * run.counters.num_drafts
    True
    """
    settings = settings or Settings()
    grid = scenario_grid(scenario, settings, **fields)
    if grid.concurrency.size != 1:
        raise SpecModelError(f"the engine simulates one scenario at a time; got shape {grid.shape}")
    evaluation: Evaluation = evaluate(grid, settings=settings)
    u = np.reshape(np.asarray(evaluation.per_position, dtype=float), -1)
    batch = int(grid.concurrency.reshape(-1)[0])
    counters = simulate_counters(u, batch, seed, evaluation.generated_tokens)
    elapsed = cohort_seconds(batch, np.squeeze(evaluation.spec_tokens_per_s), evaluation.generated_tokens)
    return EngineRun(counters, elapsed, u)


def simulate_per_position(
    per_position: Any,
    concurrency: Any = 1,
    context: Any = 2048,
    drafter: Any = None,
    seed: int = 0,
    hardware: str | None = None,
    settings: Settings | None = None,
) -> EngineRun:
    """As :func:`simulate`, with the per-position acceptance given (e.g. measured); gamma is
    its length (:func:`specmodel.evaluate_per_position`)."""
    return simulate(
        per_position=per_position,
        concurrency=concurrency,
        context=context,
        drafter=drafter,
        hardware=hardware,
        seed=seed,
        settings=settings,
    )


def engine_log(
    scenario: Scenario | None = None, /, *, seed: int = 0, settings: Settings | None = None, **fields: Any
) -> tuple[str, list[float]]:
    """The SpecDecodingLogging message vLLM would print for this scenario, one logging
    interval being the whole cohort run (:func:`simulate`), and the run's per-position
    acceptance rates (``accepted_per_pos / num_drafts``, unrounded; the message shows them
    to 3 decimals). Deterministic for a seed.

    >>> line, rates = engine_log(Scenario(), seed=0)
    >>> line.startswith("SpecDecoding metrics: Mean acceptance length: "), len(rates)
    (True, 4)
    """
    run = simulate(scenario, seed=seed, settings=settings, **fields)
    return run.log_message, [float(x) for x in per_position_rate(run.counters)]
