"""How long B sequences take to generate G tokens each, speculating or not, under an engine:
as a ``cohort`` that starts together and drains (the article's), or as a ``steady`` batch
that continuous batching keeps full (as serving benchmarks run).

Every pass is priced once (:mod:`specmodel.model.passes`); an engine adds a fixed time per
target pass t_0 plus t_s per sequence in it, per draft pass t_d, per iteration t_i, an n-gram
lookup t_n per sequence, and combines memory and arithmetic time with exponent p
(:func:`specmodel.model.engines.combined_time`). With every fixed time zero and p = inf the
cohort is the article's model exactly.

Steady state (Little's law on a full batch): every iteration advances all B sequences by
E[X] tokens each, so B G tokens take ``(G / E[X]) t_iter`` with
``t_iter = t_i + t_0 + B t_s + t_verify + gamma (t_d + t_draft) + B t_n``, and plain decoding
takes ``G (t_0 + B t_s + t_plain)``. Finished sequences are replaced by new ones whose prompts are
prefilled in the same passes (chunked prefill): T / G prompt tokens per generated token,
which add arithmetic (at the prompt's mean KV length T / 2) but no weight reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specmodel.model import cohort
from specmodel.model.engines import combined_time
from specmodel.model.passes import PassPrice
from specmodel.model.types import FloatArray, IntArray


@dataclass(frozen=True)
class EngineTerms:
    """An engine's constants per scenario (arrays of the grid's flat shape; seconds)."""

    target_pass: FloatArray  #: t_0 per target pass
    sequence_pass: FloatArray  #: t_s per sequence per target pass
    draft_pass: FloatArray  #: t_d per draft pass, by the scenario's drafter kind
    ngram_lookup: FloatArray  #: t_n per sequence per iteration (0 unless the drafter is ngram)
    iteration: FloatArray  #: t_i per speculative iteration
    overlap: FloatArray  #: p of the memory/arithmetic combination (inf: max)


@dataclass(frozen=True)
class Timing:
    """Wall time of B sequences generating G tokens each (seconds, flat arrays)."""

    spec_seconds: FloatArray
    base_seconds: FloatArray
    draft_seconds: FloatArray  #: the part of spec_seconds spent drafting
    iterations: FloatArray  #: iterations per sequence


@dataclass(frozen=True)
class Passes:
    """The passes of one iteration and of plain decoding (flat arrays)."""

    verify: PassPrice
    draft: PassPrice
    plain: PassPrice
    fused: PassPrice  #: a drafter's once-per-iteration read (EAGLE-3's fused projection)


def smooth_pass_time_sum(
    table: cohort.CohortTable,
    row: IntArray,
    fixed: FloatArray,
    per_sequence_memory: FloatArray,
    per_sequence_compute: FloatArray,
    overlap: FloatArray,
    price: PassPrice | None = None,
) -> FloatArray:
    """``sum_i P(i runs) c(m0 + m_e(A_i) + m1 A_i, c1 A_i)``, c = :func:`combined_time` with
    exponent p, iteration by iteration (the closed form of
    :func:`specmodel.model.cohort.expected_pass_time_sum` holds only for p = inf and memory
    linear in A); m_e: a mixture-of-experts pass's routed experts (``price``), else 0."""
    total = np.zeros(np.shape(row))
    for i in range(table.active.shape[1]):
        runs, active = table.runs[row, i], table.active[row, i]
        if not np.any(runs > 0):
            break
        experts = 0.0 if price is None else price.expert_memory_time(active)
        total = total + runs * combined_time(
            fixed + experts + per_sequence_memory * active, per_sequence_compute * active, overlap
        )
    return total


def _cohort_sum(table: cohort.CohortTable, row: IntArray, price: PassPrice, overlap: FloatArray) -> FloatArray:
    """Expected time of one kind of pass summed over the cohort's iterations: the roofline
    part, plus the all-reduces ``k0 + k1 A_i`` of every iteration that runs (linear in the
    active sequences A_i, so their sum is ``k0 E[runs] + k1 E[sequence-iterations]``)."""
    m0, m1, c1 = (np.broadcast_to(np.asarray(x, dtype=float), np.shape(row)) for x in price.cohort_terms())
    if np.any(price.expert_bytes):
        roofline = smooth_pass_time_sum(table, row, m0, m1, c1, overlap, price)
    elif np.all(np.isinf(overlap)):
        roofline = np.asarray(cohort.expected_pass_time_sum(table, row, m0, m1, c1), dtype=float)
    else:
        roofline = smooth_pass_time_sum(table, row, m0, m1, c1, overlap)
    k0, k1 = price.comm_terms()
    if not (np.any(k0) or np.any(k1)):
        return roofline
    g_end = table.active.shape[1]
    return roofline + k0 * table.runs_before[row, g_end] + k1 * table.sequences_before[row, g_end]


def cohort_timing(
    table: cohort.CohortTable,
    row: IntArray,
    passes: Passes,
    terms: EngineTerms,
    gamma: FloatArray,
    batch: FloatArray,
    generated_tokens: int,
    iterations: FloatArray,
) -> Timing:
    """The cohort of :mod:`specmodel.model.cohort` with the engine's terms: each iteration that
    runs pays t_0 + t_i, each draft pass t_d, each running sequence t_n."""
    g_end = table.active.shape[1]
    runs, sequence_iterations = table.runs_before[row, g_end], table.sequences_before[row, g_end]
    verify_time = (
        _cohort_sum(table, row, passes.verify, terms.overlap)
        + terms.target_pass * runs
        + terms.sequence_pass * sequence_iterations
    )
    draft_time = (
        gamma * (_cohort_sum(table, row, passes.draft, terms.overlap) + terms.draft_pass * runs)
        + terms.ngram_lookup * sequence_iterations
        + _cohort_sum(table, row, passes.fused, terms.overlap)
    )
    spec_time = verify_time + draft_time + terms.iteration * runs
    base_time = generated_tokens * (
        terms.target_pass + terms.sequence_pass * batch + passes.plain.engine_time(batch, terms.overlap)
    )
    return Timing(spec_time, base_time, draft_time, iterations)


def steady_timing(
    passes: Passes,
    terms: EngineTerms,
    gamma: FloatArray,
    batch: FloatArray,
    generated_tokens: int,
    tokens_per_iteration: FloatArray,
    prefill_flops_per_token: FloatArray,
    prompt_tokens_per_output: FloatArray,
) -> Timing:
    """A batch of B sequences kept full (module docstring)."""
    plain_prefill = batch * prompt_tokens_per_output * prefill_flops_per_token
    fixed = terms.target_pass + terms.sequence_pass * batch
    plain = fixed + passes.plain.engine_time(batch, terms.overlap, plain_prefill)
    verify = fixed + passes.verify.engine_time(batch, terms.overlap, plain_prefill * tokens_per_iteration)
    drafting = (
        gamma * (terms.draft_pass + passes.draft.engine_time(batch, terms.overlap))
        + terms.ngram_lookup * batch
        + passes.fused.engine_time(batch, terms.overlap)
    )
    iterations = generated_tokens / tokens_per_iteration
    return Timing(
        iterations * (terms.iteration + verify + drafting), generated_tokens * plain, iterations * drafting, iterations
    )
