"""How long B sequences take to generate G tokens each, speculating or not, under an engine:
as a ``cohort`` that starts together and drains (the article's), or as a ``steady`` batch
that continuous batching keeps full (as serving benchmarks run).

Every pass is priced once (:mod:`specmodel.model.passes`); an engine adds a fixed time per
target pass t_0 plus t_s per sequence in it, per draft pass t_d, per iteration t_i, an n-gram
lookup t_n per sequence, and combines memory and arithmetic time with exponent p
(:func:`specmodel.model.roofline.combined_time`). With every fixed time zero and p = inf the
cohort is the article's model exactly.

Steady state (Little's law on a full batch): every iteration advances all B sequences by
E[X] tokens each, so B G tokens take ``(G / E[X]) t_iter`` with
``t_iter = t_i + t_0 + B t_s + t_verify + gamma (t_d + t_draft) + B t_n``, and plain decoding
takes ``G (t_0 + B t_s + t_plain)``. Finished sequences are replaced by new ones whose prompts are
prefilled in the same passes (chunked prefill): T / G prompt tokens per generated token,
which add arithmetic (at the prompt's mean KV length T / 2) but no weight reads, spread evenly
over the passes or, under an engine with a token budget per pass, a whole chunk of a prompt in
a few of them (:mod:`specmodel.model.prefill`).

Two times per run, hence two speedups (:class:`specmodel.model.evaluation.Evaluation`): the
wall clock with that prefill (what output throughput measures: ``spec_seconds``,
``base_seconds``) and the decode alone, the same passes with no prefill arithmetic (what time
per output token measures: ``spec_decode_seconds``, ``base_decode_seconds``). A cohort prefills
nothing while it decodes, so there the two are the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from specmodel.model import cohort, prefill
from specmodel.model.passes import PassPrice
from specmodel.model.roofline import combined_time
from specmodel.model.types import BoolArray, FloatArray, IntArray, Numeric


@dataclass(frozen=True)
class EngineTerms:
    """An engine's constants per scenario (arrays of the grid's flat shape; seconds)."""

    target_pass: FloatArray  #: t_0 per target pass
    sequence_pass: FloatArray  #: t_s per sequence per target pass
    draft_pass: FloatArray  #: t_d per draft pass, by the scenario's drafter kind
    lookup: FloatArray  #: t_n per sequence per iteration of a drafter that drafts by lookup (0 for the others)
    iteration: FloatArray  #: t_i per speculative iteration
    overlap: FloatArray  #: p of the memory/arithmetic combination (inf: max)
    token_budget: FloatArray  #: tokens a pass may schedule, prefill included (NaN: prefill spread evenly)

    def take(self, rows: BoolArray | slice) -> EngineTerms:
        """The terms of the scenarios ``rows`` selects."""
        return EngineTerms(**{f: getattr(self, f)[rows] for f in self.__dataclass_fields__})


#: Where the wall clock goes, in this order: reading the target's weights and its caches,
#: the target pass's arithmetic beyond its memory time (the part of the pass that is not
#: hidden under memory traffic), the same three for the drafter (its passes and its
#: once-per-iteration read), all-reduces between GPUs, and the engine's fixed costs.
TIME_PARTS = (
    "target_weights",
    "target_kv",
    "target_arithmetic",
    "draft_weights",
    "draft_kv",
    "draft_arithmetic",
    "communication",
    "engine_fixed",
)


@dataclass(frozen=True)
class Timing:
    """Wall time of B sequences generating G tokens each (seconds, flat arrays), and the same
    split into :data:`TIME_PARTS` (a trailing axis, in that order; each row sums to the total)."""

    spec_seconds: FloatArray  #: speculative, with the prompts' prefill where the batching has one
    base_seconds: FloatArray  #: plain decoding, the same
    spec_decode_seconds: FloatArray  #: speculative, decode alone (no prefill arithmetic)
    base_decode_seconds: FloatArray  #: plain decoding, decode alone
    draft_seconds: FloatArray  #: the part of spec_seconds spent drafting
    iterations: FloatArray  #: iterations per sequence
    spec_parts: FloatArray  #: spec_seconds split into TIME_PARTS
    base_parts: FloatArray  #: base_seconds split into TIME_PARTS (the draft parts are 0)

    #: The fields with one number per scenario (the parts add the TIME_PARTS axis).
    TOTALS: ClassVar = ("spec_seconds", "base_seconds", "spec_decode_seconds", "base_decode_seconds",
                        "draft_seconds", "iterations")  # fmt: skip


def pass_parts(price: PassPrice, batch: Numeric, seconds: Numeric) -> tuple[Numeric, Numeric, Numeric, Numeric]:
    """``(weights, cache, arithmetic, communication)`` seconds of a pass of ``price`` over
    ``batch`` sequences that took ``seconds`` in all: the memory time of its weights and of
    its caches, its all-reduces, and what is left, the arithmetic that memory traffic did
    not hide (``seconds - t_mem - t_comm``; 0 for a memory-bound pass on the roofline)."""
    weights, cache, comm = price.weights_memory_time(batch), price.kv_memory_time(batch), price.comm_time(batch)
    return weights, cache, np.maximum(seconds - weights - cache - comm, 0.0), comm


def _stack_parts(target: tuple, draft: tuple, fixed: Numeric, shape: tuple[int, ...]) -> FloatArray:
    """The eight :data:`TIME_PARTS` from a target's and a drafter's ``pass_parts`` and the
    engine's fixed time, stacked on a trailing axis."""
    tw, tk, ta, tc = target
    dw, dk, da, dc = draft
    parts = (tw, tk, ta, dw, dk, da, np.add(tc, dc), fixed)
    return np.stack([np.broadcast_to(np.asarray(x, dtype=float), shape) for x in parts], axis=-1)


@dataclass(frozen=True)
class Passes:
    """The passes of one iteration and of plain decoding (flat arrays)."""

    verify: PassPrice
    draft: PassPrice
    plain: PassPrice
    once: PassPrice  #: what the drafter reads once per iteration (EAGLE-3's fused projection; nothing for most)

    def take(self, rows: BoolArray | slice) -> Passes:
        """The passes of the scenarios ``rows`` selects."""
        return Passes(self.verify.take(rows), self.draft.take(rows), self.plain.take(rows), self.once.take(rows))


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
    exponent p (the closed form of :func:`specmodel.model.cohort.expected_pass_time_sum`
    holds only for p = inf and memory linear in A); m_e: a mixture-of-experts pass's routed
    experts (``price``), else 0; c1 A_i becomes the pass's compute time at A_i when its engine
    prices the routed experts with a grouped-GEMM curve. The table's leading iterations (all run, with B sequences)
    count as ``start`` times the term at A = B; the window's, iteration by iteration."""

    curve = price is not None and bool(np.any(price.kernel_e_max))

    def term(active: FloatArray) -> FloatArray:
        experts = 0.0 if price is None else price.expert_memory_time(active)
        memory = fixed + experts + per_sequence_memory * active
        # a grouped-GEMM curve makes the arithmetic non-linear in A (the tokens per expert)
        compute = price.compute_time(active) if curve and price is not None else per_sequence_compute * active
        return np.asarray(combined_time(memory, compute, overlap), dtype=float)

    return _window_sum(table, row, term)


def _window_sum(table: cohort.CohortTable, row: IntArray, term: Callable[[FloatArray], Any]) -> FloatArray:
    """``sum_i P(i runs) term(A_i)`` over a cohort: ``start term(B)`` for the leading
    iterations plus the window's terms, column by column (O(sqrt G) columns)."""
    total = np.asarray(table.start[row] * term(table.batch[row]), dtype=float)
    for j in range(table.active.shape[1]):
        runs, active = table.runs[row, j], table.active[row, j]
        if not np.any(runs > 0):
            break
        total = total + runs * term(active)
    return total


def _cohort_sum(
    table: cohort.CohortTable, row: IntArray, price: PassPrice, overlap: FloatArray
) -> tuple[FloatArray, tuple[FloatArray, FloatArray, FloatArray, FloatArray]]:
    """Expected time of one kind of pass summed over the cohort's iterations, and the same
    split as :func:`pass_parts` does: the roofline part, plus the all-reduces ``k0 + k1 A_i``
    of every iteration that runs (linear in the active sequences A_i, so their sum is
    ``k0 E[runs] + k1 E[sequence-iterations]``); the weights' memory time is ``m0`` per
    iteration that runs (plus the routed experts of a mixture of experts, and the embedding
    rows each sequence gathers), the caches' the rest of ``m1`` per sequence-iteration."""
    m0, m1, c1 = (np.broadcast_to(np.asarray(x, dtype=float), np.shape(row)) for x in price.cohort_terms())
    moe = bool(np.any(price.expert_bytes))
    if moe:
        roofline = smooth_pass_time_sum(table, row, m0, m1, c1, overlap, price)
    elif np.all(np.isinf(overlap)):
        roofline = np.asarray(cohort.expected_pass_time_sum(table, row, m0, m1, c1), dtype=float)
    else:
        roofline = smooth_pass_time_sum(table, row, m0, m1, c1, overlap)
    runs, sequence_iterations = table.total_runs(row), table.total_sequences(row)
    gather = price.gather_memory_time()  # the weights' part of m1: each sequence's embedding rows
    weights = m0 * runs + gather * sequence_iterations + (_expert_memory_sum(table, row, price) if moe else 0.0)
    cache = (m1 - gather) * sequence_iterations
    k0, k1 = price.comm_terms()
    comm = np.broadcast_to(np.asarray(k0 * runs + k1 * sequence_iterations, dtype=float), np.shape(row))
    arithmetic = np.maximum(roofline - weights - cache, 0.0)
    return roofline + comm, (weights, cache, arithmetic, comm)


def _expert_memory_sum(table: cohort.CohortTable, row: IntArray, price: PassPrice) -> FloatArray:
    """``sum_i P(i runs) m_e(A_i)``: the routed experts' memory time over the cohort's iterations."""
    return _window_sum(table, row, price.expert_memory_time)


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
    runs, sequence_iterations = table.total_runs(row), table.total_sequences(row)
    verify_roofline, verify = _cohort_sum(table, row, passes.verify, terms.overlap)
    draft_roofline, draft = _cohort_sum(table, row, passes.draft, terms.overlap)
    once_roofline, once = _cohort_sum(table, row, passes.once, terms.overlap)
    verify_fixed = terms.target_pass * runs + terms.sequence_pass * sequence_iterations
    draft_fixed = gamma * terms.draft_pass * runs + terms.lookup * sequence_iterations
    verify_time = verify_roofline + verify_fixed
    draft_time = gamma * draft_roofline + draft_fixed + once_roofline
    spec_time = verify_time + draft_time + terms.iteration * runs
    drafting = tuple(gamma * d + f for d, f in zip(draft, once))
    spec_parts = _stack_parts(verify, drafting, verify_fixed + draft_fixed + terms.iteration * runs, np.shape(row))
    plain_fixed = terms.target_pass + terms.sequence_pass * batch
    plain_pass = passes.plain.engine_time(batch, terms.overlap)
    base_time = generated_tokens * (plain_fixed + plain_pass)
    plain = tuple(generated_tokens * x for x in pass_parts(passes.plain, batch, plain_pass))
    base_parts = _stack_parts(plain, (0.0,) * 4, generated_tokens * plain_fixed, np.shape(row))
    return Timing(spec_time, base_time, spec_time, base_time, draft_time, iterations, spec_parts, base_parts)


def _pass_with_prefill(
    price: PassPrice,
    terms: EngineTerms,
    batch: FloatArray,
    tokens_per_pass: Numeric,
    generated_tokens: int,
    prompt_tokens_per_output: FloatArray,
    prefill_flops_per_token: FloatArray,
) -> FloatArray:
    """Mean time of a pass of ``price`` in a steady batch, with the prefill of the prompts that
    replace the sequences finishing at ``tokens_per_pass`` tokens each per pass, landing on the
    passes as the engine's scheduler puts it there (:mod:`specmodel.model.prefill`)."""
    prompt_tokens = prompt_tokens_per_output * generated_tokens
    prompts = prefill.prompts_per_pass(batch, tokens_per_pass, generated_tokens)
    chunk = prefill.prefill_chunk(prompt_tokens, terms.token_budget, np.multiply(batch, price.positions))
    return prefill.mean_pass_time(
        lambda flops: price.engine_time(batch, terms.overlap, flops), prompts, prompt_tokens, prefill_flops_per_token,
        chunk,
    )  # fmt: skip


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
    """A batch of B sequences kept full (module docstring): seconds with the prefill of the
    prompts that replace finished sequences (``prompt_tokens_per_output`` T / G of them per
    output token, ``prefill_flops_per_token`` FLOPs each, spread over the passes in proportion
    to the tokens each pass outputs) and seconds of the decode alone (the same passes without it)."""
    fixed = terms.target_pass + terms.sequence_pass * batch
    plain_pass = _pass_with_prefill(passes.plain, terms, batch, 1.0, generated_tokens,
                                    prompt_tokens_per_output, prefill_flops_per_token)  # fmt: skip
    verify_pass = _pass_with_prefill(passes.verify, terms, batch, tokens_per_iteration, generated_tokens,
                                     prompt_tokens_per_output, prefill_flops_per_token)  # fmt: skip
    plain_decode = passes.plain.engine_time(batch, terms.overlap)
    verify_decode = passes.verify.engine_time(batch, terms.overlap)
    draft_pass = passes.draft.engine_time(batch, terms.overlap)
    once_pass = passes.once.engine_time(batch, terms.overlap)
    draft_fixed = gamma * terms.draft_pass + terms.lookup * batch
    drafting = gamma * draft_pass + once_pass + draft_fixed
    iterations = generated_tokens / tokens_per_iteration
    shape = np.shape(batch)
    draft_parts = tuple(
        gamma * d + f
        for d, f in zip(pass_parts(passes.draft, batch, draft_pass), pass_parts(passes.once, batch, once_pass))
    )
    spec_parts = iterations[..., None] * _stack_parts(
        pass_parts(passes.verify, batch, verify_pass), draft_parts, fixed + draft_fixed + terms.iteration, shape
    )
    base_parts = generated_tokens * _stack_parts(pass_parts(passes.plain, batch, plain_pass), (0.0,) * 4, fixed, shape)
    return Timing(
        iterations * (terms.iteration + fixed + verify_pass + drafting),
        generated_tokens * (fixed + plain_pass),
        iterations * (terms.iteration + fixed + verify_decode + drafting),
        generated_tokens * (fixed + plain_decode),
        iterations * drafting,
        iterations,
        spec_parts,
        base_parts,
    )
