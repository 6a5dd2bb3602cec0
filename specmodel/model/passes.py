"""The price of a forward pass, written once: what a pass of a model costs per unit of its
inputs (:class:`PassCoefficients`), and its bytes, FLOPs, memory and arithmetic time over B
sequences with Q query positions each (:class:`PassPrice`), with the per-sequence terms the
cohort sums (:func:`specmodel.model.cohort.expected_pass_time_sum`).

A pass over B sequences costs ``max(m0 + m1 B, c1 B)`` on the roofline, with m0 the time to
read the weights, m1 each sequence's cache read and c1 each sequence's arithmetic; the full
batch's bytes, FLOPs and times below are the same pass evaluated at a given B.

Split over N_g GPUs by tensor parallelism (:mod:`specmodel.model.parallel`), every figure is one
GPU's: 1/N_g of the weights and of the arithmetic, its share of the cache, and the pass adds
its all-reduces (:func:`specmodel.model.parallel.pass_allreduce_time`, the one formula for
them), ``k0 + k1 B`` on the critical path. With N_g = 1 nothing changes, bit for bit.

A mixture-of-experts model reads, besides W, one expert's bytes (in every MoE layer) per
distinct expert its B Q tokens route to (:func:`specmodel.model.experts.routed_expert_bytes`):
the pass's memory is then not linear in B, and a verify pass over gamma + 1 positions reads
more experts than a plain step even for one sequence.

A model with an untied input embedding reads, in an engine that looks tokens up as engines do
(``embedding_read = "gather"``, :mod:`specmodel.model.engines`), the B Q rows of D elements its
tokens index (:func:`specmodel.model.architecture.embedding_gather_bytes`) instead of the
V x D table: W then leaves the table out and each query position adds D b bytes. The ``ideal``
engine reads the whole table, every weight once, as the article does (its verify pass moves
15.6 GiB, ``specmodel/data/calibration.csv``). A tied table is the output head, read whole by
every pass either way.

In an engine that names a grouped-GEMM kernel (:mod:`specmodel.model.kernels`), the routed
experts' FLOPs run at that kernel's measured efficiency at the tokens each expert receives,
``F_e / (peak eff(m))`` (:func:`specmodel.model.experts.routed_expert_compute_time`), and the
rest of the arithmetic at the engine's efficiency; the sum is the pass's compute time, combined
with its memory time as before. The cohort's per-sequence arithmetic ``c1`` stays linear (the
ideal engine names no kernel).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

import numpy as np

from specmodel.model import architecture as arch_
from specmodel.model import kernels, parallel, quantization, roofline
from specmodel.model.experts import routed_expert_bytes, routed_expert_compute_time, tokens_per_expert
from specmodel.model.specs import Architecture, Hardware
from specmodel.model.types import FloatArray, IntArray, Numeric

#: What the coefficients of a pass are: floats for one model, arrays for a grid of drafters.
N_co = TypeVar("N_co", bound=Numeric, covariant=True)


@dataclass(frozen=True, kw_only=True)
class PassCoefficients(Generic[N_co]):
    """What one forward pass of a model costs, per unit of its inputs (SI units).

    ``weight_bytes`` is what a pass reads; ``resident_bytes`` is what the model adds to the
    card's memory (they differ for a head that reads the target's LM head). ``layers``,
    ``kv_heads`` and ``activation_bytes`` (one position's hidden state, D b bytes) are what
    tensor parallelism needs: 2 L all-reduces of B Q D b bytes per pass, and the cache split by
    KV heads (:mod:`specmodel.model.parallel`). A mixture-of-experts model's ``weight_bytes``
    are the weights every pass reads; it also reads ``expert_bytes`` (one expert in every MoE
    layer) for each distinct expert its tokens route to, top ``experts_per_token`` of
    ``experts`` (:mod:`specmodel.model.experts`); 0, 1, 1 for a dense model.
    ``expert_flops_per_position`` is the part of ``dense_flops_per_position`` spent in the k
    routed experts, ``L_moe k 3 D F_moe`` times the FLOPs per parameter, and
    ``expert_parameters`` one expert of one layer, ``3 D F_moe`` (0 for a dense model).
    ``input_embedding_bytes`` is the part of ``weight_bytes`` that an engine which gathers
    embedding rows does not read (an untied input table, ``V D b``), and
    ``embedding_row_bytes`` what it reads instead per query position (``D b``); both 0 for a
    tied table and for anything that is not a model of its own.
    ``quantized_flops_per_position`` is the part of ``dense_flops_per_position`` spent in
    linear layers a ``weight_format`` quantizes (FLOPs per parameter times
    :func:`specmodel.model.architecture.active_linear_parameters`; 0 without a format) and
    ``weight_format_code`` that format's :data:`specmodel.model.quantization.FORMAT_CODES` code,
    which sets the peak they run at on a card (:func:`price_pass`)."""

    weight_bytes: N_co
    resident_bytes: N_co
    kv_bytes_per_token: N_co
    dense_flops_per_position: N_co
    attention_flops_per_token: N_co
    layers: N_co
    kv_heads: N_co
    activation_bytes: N_co
    expert_bytes: N_co = 0.0  # type: ignore[assignment]
    experts: N_co = 1.0  # type: ignore[assignment]
    experts_per_token: N_co = 1.0  # type: ignore[assignment]
    expert_flops_per_position: N_co = 0.0  # type: ignore[assignment]
    expert_parameters: N_co = 0.0  # type: ignore[assignment]
    input_embedding_bytes: N_co = 0.0  # type: ignore[assignment]
    embedding_row_bytes: N_co = 0.0  # type: ignore[assignment]
    quantized_flops_per_position: N_co = 0.0  # type: ignore[assignment]
    weight_format_code: N_co = 0.0  # type: ignore[assignment]

    @classmethod
    def of_model(
        cls: type[PassCoefficients[Any]], arch: Architecture, flops_per_parameter: float
    ) -> PassCoefficients[float]:
        """A model of its own: holds all its weights; reads the shared ones every pass and the
        experts its tokens route to."""
        moe = arch_.is_moe(arch)
        return cls(
            weight_bytes=float(arch_.shared_weight_bytes(arch)),
            resident_bytes=float(arch_.weight_bytes(arch)),
            kv_bytes_per_token=float(arch_.kv_cache_bytes_per_token(arch)),
            dense_flops_per_position=float(arch_.dense_flops_per_position(arch, flops_per_parameter)),
            attention_flops_per_token=float(arch_.attention_flops_per_position_per_token(arch)),
            layers=float(arch.num_hidden_layers),
            kv_heads=float(arch_.tensor_parallel_kv_heads(arch)),
            activation_bytes=float(arch.hidden_size * arch.bytes_per_element),
            expert_bytes=float(arch_.moe_layer_count(arch) * arch_.expert_bytes(arch)) if moe else 0.0,
            experts=float(arch.num_experts or 1) if moe else 1.0,
            experts_per_token=float(arch.num_experts_per_tok or 1) if moe else 1.0,
            expert_flops_per_position=float(_routed_expert_flops_per_position(arch, flops_per_parameter)),
            expert_parameters=float(arch_.expert_parameters(arch)),
            input_embedding_bytes=float(arch_.input_embedding_bytes(arch)),
            embedding_row_bytes=float(arch_.embedding_gather_bytes(arch, 1)),
            quantized_flops_per_position=float(_quantized_flops_per_position(arch, flops_per_parameter)),
            weight_format_code=quantization.format_code(arch),
        )

    @classmethod
    def nothing(cls: type[PassCoefficients[Any]]) -> PassCoefficients[float]:
        """No pass at all (the n-gram lookup's draft step; a drafter's once-per-iteration read
        when it has none)."""
        return cls(
            weight_bytes=0.0,
            resident_bytes=0.0,
            kv_bytes_per_token=0.0,
            dense_flops_per_position=0.0,
            attention_flops_per_token=0.0,
            layers=0.0,
            kv_heads=0.0,
            activation_bytes=0.0,
        )

    @classmethod
    def gathered(
        cls: type[PassCoefficients[Any]], each: list[PassCoefficients[float]], index: IntArray
    ) -> PassCoefficients[FloatArray]:
        """Arrays over a grid: ``each[index[i]]``'s coefficients for scenario i."""
        columns = {f.name: np.array([getattr(c, f.name) for c in each], dtype=float)[index] for f in fields(cls)}
        return cls(**columns)

    def flops_per_position(self, kv_length: Numeric) -> Numeric:
        """FLOPs for one query position at KV length n (:func:`specmodel.model.roofline.flops_per_position`)."""
        return roofline.flops_per_position(self.dense_flops_per_position, self.attention_flops_per_token, kv_length)

    def kv_share(self, gpus: Numeric) -> FloatArray:
        """Share of the model's cache one of ``gpus`` GPUs holds (by KV heads; all of it for a
        model without a cache)."""
        return parallel.kv_share_per_gpu(np.maximum(self.kv_heads, 1.0), gpus)

    def kv_bytes_per_token_per_gpu(self, gpus: Numeric) -> FloatArray:
        """Cache bytes per token on each of ``gpus`` GPUs: ``kv x`` :meth:`kv_share`."""
        return np.asarray(self.kv_bytes_per_token * self.kv_share(gpus), dtype=float)


@dataclass(frozen=True, kw_only=True)
class PassPrice:
    """One model's forward pass at KV length n with Q positions per sequence, on one card
    (SI units). Fields may be arrays that broadcast (one pass per scenario)."""

    weight_bytes: Numeric  #: W, read once per pass (without an untied input table its engine gathers from)
    kv_bytes_per_token: Numeric  #: kv, per cached token of one sequence
    kv_length: Numeric  #: n, tokens in each sequence's cache
    positions: Numeric  #: Q, query positions per sequence
    position_flops: Numeric  #: f, FLOPs per query position at KV length n
    memory_bandwidth: float  #: B/s, datasheet
    peak_flops: float  #: FLOP/s, datasheet
    memory_efficiency: Numeric  #: ``MEMORY_EFFICIENCY``, or the engine's own
    compute_efficiency: Numeric  #: ``COMPUTE_EFFICIENCY``, or the engine's own
    shards: Numeric = 1.0  #: N_g, GPUs the weights and arithmetic are split over (a drafter's: 1 or N_g)
    kv_share: Numeric = 1.0  #: share of the cache one GPU holds
    layers: Numeric = 0.0  #: L, whose 2 L all-reduces a pass split over N_g > 1 GPUs pays
    activation_bytes: Numeric = 0.0  #: D b, what one query position sends through each all-reduce
    link_bandwidth: Numeric = np.inf  #: B/s each GPU of the group sends, per direction
    link_latency: Numeric = 0.0  #: seconds of one all-reduce before a byte moves
    expert_bytes: Numeric = 0.0  #: bytes of one expert in every MoE layer (0: a dense model)
    experts: Numeric = 1.0  #: E, experts per MoE layer
    experts_per_token: Numeric = 1.0  #: k, experts each token routes to
    expert_flops_per_position: Numeric = 0.0  #: f_e, the part of f in the k routed experts
    kernel_e_max: Numeric = 0.0  #: e_max of the grouped-GEMM curve, of ``peak_flops`` (0: no curve)
    kernel_m_half: Numeric = 0.0  #: m_half of the grouped-GEMM curve, tokens per expert
    gathered_bytes_per_position: Numeric = 0.0  #: g, embedding bytes gathered per query position (0: none)
    quantized_flops_per_position: Numeric = 0.0  #: f_q, the part of f in quantized linear layers (0: none)
    quantized_speedup: Numeric = 1.0  #: r, peak(format) / peak(bf16) those FLOPs run at

    def take(self, rows: Any) -> PassPrice:
        """The passes of the scenarios ``rows`` selects (a mask or a slice of flat arrays)."""
        return PassPrice(**{f: _rows(getattr(self, f), rows) for f in self.__dataclass_fields__})

    def weights_read(self, batch: Numeric) -> Numeric:
        """Weight bytes the pass reads, whole: ``W + B Q g + e x E(1 - (1 - k/E)^(B Q))`` (g:
        the embedding bytes gathered per position, :meth:`gathered_bytes`; e: one expert's
        bytes, the last term :meth:`routed_bytes`, 0 for a dense model)."""
        return self.weight_bytes + self.gathered_bytes(batch) + self.routed_bytes(batch)

    def gathered_bytes(self, batch: Numeric) -> Numeric:
        """``B Q g``: the embedding rows the pass's B Q positions look up (0 where the engine
        reads the whole table, or the table is tied)."""
        if not np.any(self.gathered_bytes_per_position):
            return 0.0
        return np.multiply(np.multiply(batch, self.positions), self.gathered_bytes_per_position)

    def routed_bytes(self, batch: Numeric) -> Numeric:
        """``e x E(1 - (1 - k/E)^(B Q))``: the routed experts' bytes (0 for a dense model)."""
        if not np.any(self.expert_bytes):
            return 0.0
        tokens = np.multiply(batch, self.positions)
        return routed_expert_bytes(self.expert_bytes, tokens, self.experts, self.experts_per_token)

    def bytes(self, batch: Numeric) -> Numeric:
        """``W' / N_g + B n kv s``, one GPU's bytes (:func:`specmodel.model.roofline.pass_bytes`;
        W' the weights read, :meth:`weights_read`; s its share of the cache)."""
        return roofline.pass_bytes(
            self.weights_read(batch) / self.shards, self.kv_bytes_per_token * self.kv_share, batch, self.kv_length
        )

    def flops(self, batch: Numeric) -> Numeric:
        """``Q (B f) / N_g``, one GPU's FLOPs (:func:`specmodel.model.roofline.pass_flops`)."""
        return roofline.pass_flops(self.position_flops, batch, self.positions) / self.shards

    def comm_time(self, batch: Numeric) -> Numeric:
        """Seconds of the pass's all-reduces (:func:`specmodel.model.parallel.pass_allreduce_time`,
        each of the B Q positions' activations; 0 on one GPU)."""
        message = self.activation_bytes * np.multiply(self.positions, batch)
        return parallel.pass_allreduce_time(self.layers, message, self.shards, self.link_bandwidth, self.link_latency)

    def memory_time(self, batch: Numeric) -> Numeric:
        """Seconds to move the pass's bytes."""
        return roofline.memory_time(self.bytes(batch), self.memory_bandwidth, self.memory_efficiency)

    def weights_memory_time(self, batch: Numeric) -> Numeric:
        """Seconds of the pass's memory time spent reading weights (``W' / N_g`` of
        :meth:`bytes`, routed experts and gathered embedding rows included)."""
        return roofline.memory_time(
            self.weights_read(batch) / self.shards, self.memory_bandwidth, self.memory_efficiency
        )

    def kv_memory_time(self, batch: Numeric) -> Numeric:
        """Seconds of the pass's memory time spent reading the B sequences' caches (``B n kv s``)."""
        kv = roofline.pass_bytes(0.0, self.kv_bytes_per_token * self.kv_share, batch, self.kv_length)
        return roofline.memory_time(kv, self.memory_bandwidth, self.memory_efficiency)

    def expert_flops(self, batch: Numeric) -> Numeric:
        """``Q B f_e / N_g``, one GPU's routed expert FLOPs (part of :meth:`flops`)."""
        return roofline.pass_flops(self.expert_flops_per_position, batch, self.positions) / self.shards

    def compute_time(self, batch: Numeric, extra_flops: Numeric = 0.0) -> Numeric:
        """Seconds of the pass's arithmetic (plus ``extra_flops`` of other work in the pass, at
        the engine's efficiency): all of it at ``compute_efficiency``, or, with a grouped-GEMM
        curve, the routed experts' FLOPs at the curve's efficiency at m tokens per expert
        (:func:`specmodel.model.experts.tokens_per_expert` of the B Q positions) and the rest
        at ``compute_efficiency``. The FLOPs of quantized linear layers (f_q per position) run
        r = ``quantized_speedup`` times faster: they count ``1/r`` of a BF16 FLOP
        (:meth:`bf16_equivalent_flops`), and the grouped-GEMM curve's experts run at ``r`` x peak."""
        flops = self.flops(batch) + extra_flops / self.shards
        if not np.any(self.kernel_e_max):
            flops = self.bf16_equivalent_flops(flops, self.quantized_flops(batch))
            return roofline.compute_time(flops, self.peak_flops, self.compute_efficiency)
        experts = np.where(np.asarray(self.kernel_e_max) > 0, self.expert_flops(batch), 0.0)
        m = tokens_per_expert(np.multiply(batch, self.positions), self.experts, self.experts_per_token)
        peak = self.peak_flops * np.asarray(self.quantized_speedup) if self.is_quantized() else self.peak_flops
        grouped = routed_expert_compute_time(experts, peak, m, self.kernel_e_max, self.kernel_m_half)
        rest = self.bf16_equivalent_flops(flops - experts, self.quantized_flops(batch) - experts)
        return roofline.compute_time(rest, self.peak_flops, self.compute_efficiency) + grouped

    def is_quantized(self) -> bool:
        """Whether any of the passes has FLOPs in quantized linear layers."""
        return bool(np.any(self.quantized_flops_per_position))

    def quantized_flops(self, batch: Numeric) -> Numeric:
        """``Q B f_q / N_g``, one GPU's FLOPs in quantized linear layers (part of :meth:`flops`)."""
        return roofline.pass_flops(self.quantized_flops_per_position, batch, self.positions) / self.shards

    def bf16_equivalent_flops(self, flops: Numeric, quantized: Numeric) -> Numeric:
        """``F - F_q (1 - 1/r)``: ``flops`` of which ``quantized`` run r = ``quantized_speedup``
        times faster, as the BF16 FLOPs that take as long (``flops`` itself, unchanged, where
        nothing is quantized)."""
        if not self.is_quantized():
            return flops
        return flops - quantized * (1.0 - 1.0 / np.asarray(self.quantized_speedup, dtype=float))

    def time(self, batch: Numeric) -> FloatArray:
        """The pass's roofline time, the longer of the two, plus its all-reduces."""
        return roofline.pass_time(self.memory_time(batch), self.compute_time(batch)) + self.comm_time(batch)

    def idle(self, batch: Numeric) -> FloatArray:
        """Share of the pass the tensor cores sit idle (:func:`specmodel.model.roofline.idle_share`)."""
        return roofline.idle_share(self.memory_time(batch), self.compute_time(batch))

    def engine_time(self, batch: Numeric, overlap: Numeric, extra_flops: Numeric = 0.0) -> FloatArray:
        """The pass's time in an engine whose memory and arithmetic overlap with exponent p =
        ``overlap`` (:func:`specmodel.model.roofline.combined_time`), with ``extra_flops``
        of other work folded into the same pass (prefill chunks under continuous batching)."""
        compute = self.compute_time(batch, extra_flops)
        combined = roofline.combined_time(self.memory_time(batch), compute, overlap) + self.comm_time(batch)
        return np.asarray(combined, dtype=float)

    def cohort_terms(self) -> tuple[Numeric, Numeric, Numeric]:
        """``(m0, m1, c1)``: the weights' memory time, one sequence's memory time (its cache
        and the embedding rows it gathers, :meth:`gather_memory_time`) and one sequence's
        arithmetic time, so that a pass over A sequences takes ``max(m0 + m1 A, c1 A)``."""
        m0 = roofline.memory_time(self.weight_bytes / self.shards, self.memory_bandwidth, self.memory_efficiency)
        cache = self.kv_length * self.kv_bytes_per_token * self.kv_share
        m1 = roofline.memory_time(cache, self.memory_bandwidth, self.memory_efficiency) + self.gather_memory_time()
        flops = self.bf16_equivalent_flops(self.position_flops, self.quantized_flops_per_position)
        c1 = roofline.compute_time(self.positions * flops / self.shards, self.peak_flops, self.compute_efficiency)
        return m0, m1, c1

    def expert_memory_time(self, active: Numeric) -> Numeric:
        """Seconds one GPU spends reading the routed experts of a pass over ``active`` sequences
        (0 for a dense model): the part of the pass's memory time that is not ``m0 + m1 A``."""
        routed = self.routed_bytes(active) / self.shards
        return roofline.memory_time(routed, self.memory_bandwidth, self.memory_efficiency)

    def gather_memory_time(self) -> Numeric:
        """Seconds one GPU spends per sequence gathering its Q positions' embedding rows,
        ``Q g / N_g`` at the achievable bandwidth (a vocabulary-parallel table splits the rows
        over the GPUs); the weights' share of ``m1`` in :meth:`cohort_terms`."""
        return roofline.memory_time(
            np.multiply(self.positions, self.gathered_bytes_per_position) / self.shards,
            self.memory_bandwidth,
            self.memory_efficiency,
        )

    def comm_terms(self) -> tuple[Numeric, Numeric]:
        """``(k0, k1)``: the all-reduces of a pass over A sequences take ``k0 + k1 A`` (their
        time is linear in the bytes sent, so k0 is the time at A = 0 and k1 the rise per sequence)."""
        k0 = self.comm_time(0.0)
        return k0, self.comm_time(1.0) - k0


def price_pass(
    coefficients: PassCoefficients[Numeric],
    kv_length: Numeric,
    positions: Numeric,
    hardware: Hardware,
    memory_efficiency: Numeric,
    compute_efficiency: Numeric,
    gpus: Numeric = 1.0,
    moe_kernel: Any = None,
    gather_embedding: Numeric = False,
) -> PassPrice:
    """The pass of a model with ``coefficients`` (fields may be arrays) at KV length n with
    Q ``positions`` per sequence, on ``hardware`` at the given achievable fractions of its
    bandwidth and FLOP/s, split over ``gpus`` by tensor parallelism (the group's links from
    :func:`specmodel.model.parallel.group_link`); ``moe_kernel`` names the grouped-GEMM
    kernel family of each pass's engine (a name or an array of them, "" or None for none), whose
    curve for the experts on one GPU (:func:`specmodel.model.kernels.curve_columns`) prices the
    routed expert FLOPs. Where ``gather_embedding`` holds (the pass's engine looks tokens up
    row by row), an untied input table leaves W and each query position gathers its row."""
    bandwidth, latency = parallel.group_link(hardware.interconnect, gpus)
    gather = np.asarray(gather_embedding, dtype=float)
    e_max, m_half = _kernel_curve(moe_kernel, coefficients.expert_parameters, gpus)
    return PassPrice(
        weight_bytes=coefficients.weight_bytes - gather * coefficients.input_embedding_bytes,
        kv_bytes_per_token=coefficients.kv_bytes_per_token,
        kv_length=kv_length,
        positions=positions,
        position_flops=coefficients.flops_per_position(kv_length),
        memory_bandwidth=hardware.memory_bandwidth.value,
        peak_flops=hardware.peak_flops.value,
        memory_efficiency=memory_efficiency,
        compute_efficiency=compute_efficiency,
        shards=np.asarray(gpus, dtype=float),
        kv_share=coefficients.kv_share(gpus),
        layers=coefficients.layers,
        activation_bytes=coefficients.activation_bytes,
        link_bandwidth=bandwidth,
        link_latency=latency,
        expert_bytes=coefficients.expert_bytes,
        experts=coefficients.experts,
        experts_per_token=coefficients.experts_per_token,
        expert_flops_per_position=coefficients.expert_flops_per_position,
        kernel_e_max=e_max,
        kernel_m_half=m_half,
        gathered_bytes_per_position=gather * coefficients.embedding_row_bytes,
        quantized_flops_per_position=coefficients.quantized_flops_per_position,
        quantized_speedup=quantization.peak_ratio(hardware, coefficients.weight_format_code),
    )


def _kernel_curve(moe_kernel: Any, expert_parameters: Numeric, gpus: Numeric) -> tuple[Numeric, Numeric]:
    """``(e_max, m_half)`` of each pass's curve for its experts split over ``gpus`` (0, 0 with
    no kernel or no experts)."""
    if moe_kernel is None or not np.any(expert_parameters):
        return 0.0, 0.0
    names, size = np.broadcast_arrays(np.asarray(moe_kernel, dtype=str), np.divide(expert_parameters, gpus))
    return kernels.curve_columns(names, size)


def _routed_expert_flops_per_position(arch: Architecture, flops_per_parameter: float) -> float:
    """``f_e = FLOPS_PER_PARAMETER x L_moe k 3 D F_moe``: FLOPs per position in the k routed
    experts of every MoE layer (2 per weight, as :func:`specmodel.model.architecture.dense_flops_per_position`
    counts them; 0 for a dense model)."""
    if not arch_.is_moe(arch):
        return 0.0
    k = arch.num_experts_per_tok or 0
    return flops_per_parameter * arch_.moe_layer_count(arch) * k * arch_.expert_parameters(arch)


def _quantized_flops_per_position(arch: Architecture, flops_per_parameter: float) -> float:
    """``f_q = FLOPS_PER_PARAMETER x P_lin,active``: FLOPs per position in the linear layers a
    ``weight_format`` quantizes (:func:`specmodel.model.architecture.active_linear_parameters`;
    0 without a format). Attention's score and value products and the output head are not
    among them: they run at the BF16 peak."""
    if arch.weight_format is None:
        return 0.0
    return flops_per_parameter * arch_.active_linear_parameters(arch)


def kv_read_length(context: Numeric, generated_tokens: int, kv_read_fraction: float) -> FloatArray:
    """KV length the average pass reads: ``n = T + KV_READ_FRACTION x G``.

    >>> float(kv_read_length(2048, 256, 0.5))
    2176.0
    """
    return np.asarray(context, dtype=float) + kv_read_fraction * generated_tokens


def _rows(value: Any, rows: Any) -> Any:
    """``value[rows]`` for an array, ``value`` itself for a scalar shared by every row."""
    return value[rows] if np.ndim(value) else value
