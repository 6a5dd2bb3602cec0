"""The price of a forward pass, written once: bytes, FLOPs, memory and arithmetic time of a
pass of one model over B sequences with Q query positions each, and the per-sequence terms
the cohort sums (:func:`specmodel.model.cohort.expected_pass_time_sum`).

A pass over B sequences costs ``max(m0 + m1 B, c1 B)`` on the roofline, with m0 the time to
read the weights, m1 each sequence's cache read and c1 each sequence's arithmetic; the full
batch's bytes, FLOPs and times below are the same pass evaluated at a given B.

Split over N GPUs by tensor parallelism (:mod:`specmodel.model.parallel`), every figure is one
GPU's: 1/N of the weights and of the arithmetic, its share of the cache, and the pass adds
its all-reduces, ``k0 + k1 B`` on the critical path (k0 their latencies, k1 the bytes each
sequence's Q positions send). With N = 1 nothing changes, bit for bit.

A mixture-of-experts model reads, besides W, one expert's bytes (in every MoE layer) per
distinct expert its B Q tokens route to (:func:`specmodel.model.experts.expected_distinct_experts`):
the pass's memory is then not linear in B, and a verify pass over gamma + 1 positions reads
more experts than a plain step even for one sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specmodel.model import parallel, roofline
from specmodel.model.drafters import PassCoefficients
from specmodel.model.engines import combined_time
from specmodel.model.experts import expected_distinct_experts
from specmodel.model.settings import Constants
from specmodel.model.specs import Hardware
from specmodel.model.types import FloatArray, Numeric


@dataclass(frozen=True)
class PassPrice:
    """One model's forward pass at KV length n with Q positions per sequence, on one card
    (SI units). Fields may be arrays that broadcast (one pass per scenario)."""

    weight_bytes: Numeric  #: W, read once per pass
    kv_bytes_per_token: Numeric  #: kv, per cached token of one sequence
    kv_length: Numeric  #: n, tokens in each sequence's cache
    positions: Numeric  #: Q, query positions per sequence
    position_flops: Numeric  #: f, FLOPs per query position at KV length n
    memory_bandwidth: float  #: B/s, datasheet
    peak_flops: float  #: FLOP/s, datasheet
    memory_efficiency: float  #: ``MEMORY_EFFICIENCY``
    compute_efficiency: Numeric  #: ``COMPUTE_EFFICIENCY``, or the engine's own
    shards: Numeric = 1.0  #: N, GPUs the weights and arithmetic are split over
    kv_share: Numeric = 1.0  #: share of the cache one GPU holds
    comm_fixed: Numeric = 0.0  #: k0, seconds of all-reduce latency per pass
    comm_per_position: Numeric = 0.0  #: seconds of all-reduce traffic per query position of one sequence
    expert_bytes: Numeric = 0.0  #: bytes of one expert in every MoE layer (0: a dense model)
    experts: Numeric = 1.0  #: E, experts per MoE layer
    experts_per_token: Numeric = 1.0  #: k, experts each token routes to

    def weights_read(self, batch: Numeric) -> Numeric:
        """Weight bytes the pass reads, whole: ``W + e x E(1 - (1 - k/E)^(B Q))`` (e: one
        expert's bytes; the second term is 0 for a dense model)."""
        if not np.any(self.expert_bytes):
            return self.weight_bytes
        routed = expected_distinct_experts(np.multiply(batch, self.positions), self.experts, self.experts_per_token)
        return self.weight_bytes + self.expert_bytes * routed

    def bytes(self, batch: Numeric) -> Numeric:
        """``W' / N + B n kv s``, one GPU's bytes (:func:`specmodel.model.roofline.pass_bytes`;
        W' the weights read, :meth:`weights_read`; s its share of the cache)."""
        return roofline.pass_bytes(
            self.weights_read(batch) / self.shards, self.kv_bytes_per_token * self.kv_share, batch, self.kv_length
        )

    def flops(self, batch: Numeric) -> Numeric:
        """``Q (B f) / N``, one GPU's FLOPs (:func:`specmodel.model.roofline.pass_flops`)."""
        return roofline.pass_flops(self.position_flops, batch, self.positions) / self.shards

    def comm_time(self, batch: Numeric) -> Numeric:
        """Seconds of the pass's all-reduces: ``k0 + k1 Q B`` (0 on one GPU)."""
        return self.comm_fixed + self.comm_per_position * self.positions * batch

    def memory_time(self, batch: Numeric) -> Numeric:
        """Seconds to move the pass's bytes."""
        return roofline.memory_time(self.bytes(batch), self.memory_bandwidth, self.memory_efficiency)

    def weights_memory_time(self, batch: Numeric) -> Numeric:
        """Seconds of the pass's memory time spent reading weights (``W' / N`` of
        :meth:`bytes`, routed experts included)."""
        return roofline.memory_time(
            self.weights_read(batch) / self.shards, self.memory_bandwidth, self.memory_efficiency
        )

    def kv_memory_time(self, batch: Numeric) -> Numeric:
        """Seconds of the pass's memory time spent reading the B sequences' caches (``B n kv s``)."""
        kv = roofline.pass_bytes(0.0, self.kv_bytes_per_token * self.kv_share, batch, self.kv_length)
        return roofline.memory_time(kv, self.memory_bandwidth, self.memory_efficiency)

    def compute_time(self, batch: Numeric) -> Numeric:
        """Seconds of the pass's arithmetic."""
        return roofline.compute_time(self.flops(batch), self.peak_flops, self.compute_efficiency)

    def time(self, batch: Numeric) -> FloatArray:
        """The pass's roofline time, the longer of the two, plus its all-reduces."""
        return roofline.pass_time(self.memory_time(batch), self.compute_time(batch)) + self.comm_time(batch)

    def idle(self, batch: Numeric) -> FloatArray:
        """Share of the pass the tensor cores sit idle (:func:`specmodel.model.roofline.idle_share`)."""
        return roofline.idle_share(self.memory_time(batch), self.compute_time(batch))

    def engine_time(self, batch: Numeric, overlap: Numeric, extra_flops: Numeric = 0.0) -> FloatArray:
        """The pass's time in an engine whose memory and arithmetic overlap with exponent p =
        ``overlap`` (:func:`specmodel.model.engines.combined_time`), with ``extra_flops``
        of other work folded into the same pass (prefill chunks under continuous batching)."""
        flops = self.flops(batch) + extra_flops / self.shards
        compute = roofline.compute_time(flops, self.peak_flops, self.compute_efficiency)
        combined = combined_time(self.memory_time(batch), compute, overlap) + self.comm_time(batch)
        return np.asarray(combined, dtype=float)

    def cohort_terms(self) -> tuple[Numeric, Numeric, Numeric]:
        """``(m0, m1, c1)``: the weights' memory time, one sequence's cache memory time and one
        sequence's arithmetic time, so that a pass over A sequences takes
        ``max(m0 + m1 A, c1 A)``."""
        m0 = roofline.memory_time(self.weight_bytes / self.shards, self.memory_bandwidth, self.memory_efficiency)
        m1 = roofline.memory_time(
            self.kv_length * self.kv_bytes_per_token * self.kv_share, self.memory_bandwidth, self.memory_efficiency
        )
        c1 = roofline.compute_time(
            self.positions * self.position_flops / self.shards, self.peak_flops, self.compute_efficiency
        )
        return m0, m1, c1

    def expert_memory_time(self, active: Numeric) -> Numeric:
        """Seconds one GPU spends reading the routed experts of a pass over ``active`` sequences
        (0 for a dense model): the part of the pass's memory time that is not ``m0 + m1 A``."""
        routed = self.weights_read(active) - self.weight_bytes
        return roofline.memory_time(routed / self.shards, self.memory_bandwidth, self.memory_efficiency)

    def comm_terms(self) -> tuple[Numeric, Numeric]:
        """``(k0, k1)``: the all-reduces of a pass over A sequences take ``k0 + k1 A``."""
        return self.comm_fixed, self.comm_per_position * self.positions


def price_pass(
    coefficients: PassCoefficients[Numeric],
    kv_length: Numeric,
    positions: Numeric,
    hardware: Hardware,
    constants: Constants,
    compute_efficiency: Numeric | None = None,
    gpus: Numeric = 1.0,
) -> PassPrice:
    """The pass of a model with ``coefficients`` (fields may be arrays) at KV length n with
    Q ``positions`` per sequence, on ``hardware`` at the constants' efficiencies (or at an
    engine's own ``compute_efficiency``), split over ``gpus`` by tensor parallelism."""
    link = hardware.interconnect
    bandwidth = parallel.group_bandwidth(link.bandwidth.value, link.topology, gpus)
    latency = parallel.allreduce_latency(gpus, link.allreduce_latency.value, link.hop_latency.value)
    reduces = parallel.allreduces_per_pass(coefficients.layers, gpus)
    traffic = parallel.allreduce_traffic_factor(gpus) * coefficients.activation_bytes / bandwidth
    return PassPrice(
        weight_bytes=coefficients.weight_bytes,
        kv_bytes_per_token=coefficients.kv_bytes_per_token,
        kv_length=kv_length,
        positions=positions,
        position_flops=coefficients.flops_per_position(kv_length),
        memory_bandwidth=hardware.memory_bandwidth.value,
        peak_flops=hardware.peak_flops.value,
        memory_efficiency=constants.MEMORY_EFFICIENCY,
        compute_efficiency=constants.COMPUTE_EFFICIENCY if compute_efficiency is None else compute_efficiency,
        shards=np.asarray(gpus, dtype=float),
        kv_share=parallel.kv_share_per_gpu(np.maximum(coefficients.kv_heads, 1.0), gpus),
        comm_fixed=reduces * latency,
        comm_per_position=reduces * traffic,
        expert_bytes=coefficients.expert_bytes,
        experts=coefficients.experts,
        experts_per_token=coefficients.experts_per_token,
    )


def kv_read_length(context: Numeric, generated_tokens: int, kv_read_fraction: float) -> FloatArray:
    """KV length the average pass reads: ``n = T + KV_READ_FRACTION x G``.

    >>> float(kv_read_length(2048, 256, 0.5))
    2176.0
    """
    return np.asarray(context, dtype=float) + kv_read_fraction * generated_tokens
