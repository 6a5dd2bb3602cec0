"""What the model says about a scenario: the :class:`Evaluation` record, and the formulas
that summarise a scenario from its passes (draft share, arithmetic per output token)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from specmodel.model.types import BoolArray, FloatArray, Numeric


@dataclass(frozen=True)
class Evaluation:
    """Everything the model says about a scenario or a grid of them, in SI units; every
    array has the grid's shape (``per_position`` adds a trailing axis of positions).

    Two speedups, as benchmarks report them (:data:`specmodel.measurements.SPEEDUP_DEFINITIONS`):

    - ``throughput_speedup`` (= ``speedup``): end-to-end output throughput, speculative over
      plain, at the same concurrency, ``(G t_plain + P_plain) / (N_it t_iter + P_spec)`` per
      sequence, where P is the time the prefill of the prompts that replace finished sequences
      adds to the passes (steady batching; ``vllm bench serve``'s output throughput).
    - ``decode_speedup``: plain time per output token over speculative time per output token
      in decode alone, ``G t_plain / (N_it t_iter)`` (vanilla TPOT / speculative TPOT; what a
      user feels once the answer streams). Other requests' prefill in the same passes is not
      counted, so it is a measured TPOT ratio exactly at one request.

    Under ``cohort`` batching nothing is prefilled while the cohort decodes (P = 0) and the
    two are the same numbers. Under ``steady`` batching the throughput speedup lies between
    the decode speedup and the prefill's ratio P_plain / P_spec (a mediant; P_spec >= P_plain,
    the same arithmetic in fewer, busier passes), so it is at most the decode speedup where
    speculation wins and tends to that ratio, about 1, when long prompts make the prefill dominate.
    """

    speedup: FloatArray  #: speculative over plain output tokens/s, prefill included (= throughput_speedup)
    decode_speedup: FloatArray  #: plain over speculative time per output token, decode alone (TPOT ratio)
    spec_tokens_per_s: FloatArray  #: output tokens/s over all sequences, speculative
    base_tokens_per_s: FloatArray  #: output tokens/s over all sequences, plain decoding
    spec_tokens_per_s_per_sequence: FloatArray  #: output tokens/s each sequence receives, speculative
    base_tokens_per_s_per_sequence: FloatArray  #: the same, plain decoding
    spec_time_parts: FloatArray  #: seconds of wall clock per output token, split into TIME_PARTS (trailing axis)
    base_time_parts: FloatArray  #: the same for plain decoding (draft parts 0)
    mean_acceptance_length: FloatArray  #: expected tokens per target pass, E[X]
    per_position: FloatArray  #: unconditional acceptance of positions 1..gamma_max
    draft_share: FloatArray  #: share of wall clock spent in draft passes
    arithmetic_ratio: FloatArray  #: FLOPs per output token, speculative / plain
    expected_iterations: FloatArray  #: iterations per sequence for its G tokens, E[N_it]
    verify_idle: FloatArray  #: idle share of the tensor cores in the (full-batch) verify pass
    verify_bytes: FloatArray
    verify_flops: FloatArray
    verify_memory_time: FloatArray  #: seconds
    verify_compute_time: FloatArray  #: seconds
    verify_allreduce_time: FloatArray  #: seconds of the verify pass's all-reduces (0 on one GPU)
    verify_weights_read_bytes: FloatArray  #: weights the verify pass reads, all GPUs (MoE: shared + routed experts)
    plain_weights_read_bytes: FloatArray  #: the same for the plain decode step
    verify_communication_share: FloatArray  #: share of the verify pass spent in all-reduces
    plain_compute_time: FloatArray  #: seconds of arithmetic in the full-batch plain decode pass (Q = 1)
    plain_intensity: FloatArray  #: FLOP per byte of the full-batch plain decode pass
    draft_step_bytes: FloatArray  #: bytes one full-batch draft pass moves (0 for n-gram)
    # One iteration's passes and the plain step, each over the full batch of B sequences, as one GPU
    # sees them (:class:`specmodel.model.passes.PassPrice`): time = max(memory, arithmetic) + all-reduces.
    verify_time: FloatArray  #: seconds of the full-batch verify pass on the roofline
    draft_step_flops: FloatArray  #: FLOPs of one full-batch draft pass (0 for n-gram)
    draft_step_memory_time: FloatArray  #: seconds one full-batch draft pass spends moving its bytes
    draft_step_compute_time: FloatArray  #: seconds of arithmetic in one full-batch draft pass
    draft_step_time: FloatArray  #: seconds of one full-batch draft pass on the roofline (gamma of them per iteration)
    plain_bytes: FloatArray  #: bytes the full-batch plain decode pass moves
    plain_flops: FloatArray  #: FLOPs of the full-batch plain decode pass
    plain_memory_time: FloatArray  #: seconds the full-batch plain decode pass spends moving its bytes
    plain_time: FloatArray  #: seconds of the full-batch plain decode pass on the roofline (one token per sequence)
    target_weight_bytes: FloatArray
    target_weight_bytes_per_gpu: FloatArray  #: the target's resident weights on each GPU (1/N_g)
    target_kv_bytes_per_token_per_gpu: FloatArray  #: each GPU's share of the target's cache per token
    draft_weight_bytes: FloatArray  #: weights one draft pass reads
    draft_weight_fraction: FloatArray  #: draft weights read per pass / target weights
    target_kv_bytes_per_token: FloatArray
    draft_kv_bytes_per_token: FloatArray
    draft_kv_fraction: FloatArray  #: the drafter's KV cache per token / the target's
    accepted_throughput: FloatArray  #: accepted draft tokens/s over all sequences
    drafted_throughput: FloatArray  #: draft tokens/s over all sequences
    memory_required_bytes: FloatArray  #: on the busiest GPU: weights + both caches at the end of generation + workspace
    memory_capacity_bytes: FloatArray  #: the memory one GPU reports (nvidia-smi's total), B
    usable_memory_bytes: FloatArray  #: capacity x GPU_MEMORY_UTILIZATION
    fits: BoolArray  #: memory_required_bytes <= usable_memory_bytes (booleans)
    max_concurrency: FloatArray  #: most sequences that fit at this context, with the drafter
    max_concurrency_without_draft: FloatArray  #: the same for plain decoding (target alone)
    tensor_parallel: FloatArray  #: N_g, GPUs the target is split over
    alpha: (
        FloatArray  #: the acceptance profile's alpha (solved from a mean acceptance length if given); NaN if measured
    )
    ngram_match_rate: FloatArray  #: share of iterations in which the drafter drafts (1 but for an n-gram lookup)
    generated_tokens: int  #: G, tokens each sequence generates

    @property
    def throughput_speedup(self) -> FloatArray:
        """Speculative over plain end-to-end output throughput at the same concurrency, the
        prompts' prefill included (what ``vllm bench serve`` reports as output throughput):
        ``speedup`` by its definition's name."""
        return self.speedup


def concatenate(parts: list[Evaluation], axis: int) -> Evaluation:
    """Evaluations of adjacent sub-grids joined along ``axis``."""
    joined = {
        f.name: np.concatenate([getattr(p, f.name) for p in parts], axis=axis)
        for f in fields(parts[0])
        if f.name != "generated_tokens"
    }
    return Evaluation(**joined, generated_tokens=parts[0].generated_tokens)


#: The one field that is no prediction and may be NaN by design: alpha, where the acceptance was measured.
NOT_PREDICTED = ("alpha",)


def first_non_finite(evaluation: Evaluation) -> tuple[str, tuple[int, ...], float] | None:
    """The first field of ``evaluation`` (in declaration order) that holds a NaN or an
    infinity, the grid index of the first scenario where it does, and that value; None when
    every number the model says is finite (:data:`NOT_PREDICTED` aside). A trailing axis
    (positions, time parts) is dropped from the index."""
    rank = np.ndim(evaluation.speedup)
    for f in fields(evaluation):
        value = getattr(evaluation, f.name)
        if f.name in NOT_PREDICTED or not isinstance(value, np.ndarray) or value.dtype.kind != "f":
            continue
        finite = np.isfinite(value)
        if not finite.all():
            where = np.unravel_index(int(np.argmin(finite)), finite.shape)
            return f.name, tuple(int(i) for i in where[:rank]), float(value[where])
    return None


def draft_share(draft_seconds: Numeric, iteration_seconds: Numeric) -> Numeric:
    """Share of the wall clock spent in draft passes: ``t_draft / (t_draft + t_verify)``,
    both summed over the whole run.

    >>> draft_share(1.0, 4.0)
    0.25
    """
    return draft_seconds / iteration_seconds


def arithmetic_ratio(
    iterations: Any,
    verify_positions: Any,
    draft_positions: Any,
    target_flops_per_position: Any,
    draft_flops_per_position: Any,
    generated_tokens: int,
) -> Any:
    """FLOPs per output token, speculative over plain:
    ``E[N_it] (Q f_t + gamma Q_d f_d) / (G f_t)``, where a sequence needs E[N_it] iterations of
    one verify pass over Q positions (gamma + 1 for a chain, Q_v for a tree; fewer on average for
    an n-gram lookup that does not always find a match) and gamma draft passes of Q_d positions
    each (``draft_positions`` = gamma Q_d; Q_d = 1 for a chain) for its G tokens, and plain
    decoding spends f_t per token. Compare Leviathan et al. 2023 (arXiv:2211.17192),
    Theorem 3.11, which is the i.i.d., no-overshoot chain.

    >>> float(arithmetic_ratio(iterations=64, verify_positions=5, draft_positions=4, target_flops_per_position=1.0,
    ...                        draft_flops_per_position=0.0, generated_tokens=256))
    1.25
    """
    spec = iterations * (verify_positions * target_flops_per_position + draft_positions * draft_flops_per_position)
    return spec / (generated_tokens * target_flops_per_position)
