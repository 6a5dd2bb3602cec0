"""Grouped expert matrix multiplies: the measured efficiency curves of the kernels that run a
mixture-of-experts layer (``data/kernels.toml``), and which curve a model's experts take.

A kernel family (e.g. ``triton-fused-moe``, vLLM's Triton ``fused_moe``) holds one curve per
measured expert shape; each curve is ``eff(m) = e_max m / (m + m_half)`` of a dense peak
(:func:`specmodel.model.experts.grouped_gemm_efficiency`), every constant with its source.

Which curve: the one whose measured expert (``3 H N`` parameters on one GPU) is nearest in
log size to the model's expert on one GPU (``3 D F_moe / N_tp``, tensor parallelism splits
every expert's intermediate width). The ceiling e_max is set by how well the kernel's tiles
fill with the expert's two matrices: on H100 the Triton kernel reaches 0.82 of the BF16 peak
with Mixtral's 4096 x 7168 experts but 0.225 with Qwen3-30B-A3B's 2048 x 768 (vLLM PR #24700);
one curve per engine would price one of the two 3.6 times off. Two measured shapes are all
there is, so nearest-in-size returns each measurement for its own shape and the nearer one
for any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated, Literal

import numpy as np
from annotated_types import Gt, MinLen

from specmodel.model.specs import Sourced, load_catalog, lookup
from specmodel.model.types import FloatArray, IntArray, Numeric
from specmodel.records import Record

#: A card's dense FP8 peak over its dense BF16 peak (the hardware catalogue's ``peak_flops``):
#: 1,979 / 989.4 TFLOP/s on H100 SXM (NVIDIA H100 datasheet, dense columns) and H800.
FP8_OVER_BF16_PEAK = 2.0


@dataclass(frozen=True, kw_only=True)
class KernelCurve(Record):
    """One measured efficiency curve: ``e_max`` of the ``peak`` (a fraction), ``m_half``
    tokens per expert, for experts of ``hidden_size x intermediate_size`` on one GPU, with the
    per-layer kernel times it was fitted to (``points``: tokens in the batch, seconds)."""

    label: str
    hidden_size: Annotated[int, Gt(0)]
    intermediate_size: Annotated[int, Gt(0)]  #: per GPU
    experts: Annotated[int, Gt(0)] | None = None  #: E of the measured layer (for ``points``)
    experts_per_token: Annotated[int, Gt(0)] | None = None  #: k of the measured layer
    peak: Literal["bf16", "fp8"]
    e_max: Sourced
    m_half: Sourced
    points: tuple[tuple[float, float], ...] = ()

    def __post_init__(self) -> None:
        if self.e_max.unit != f"of {self.peak.upper()} dense peak":
            raise ValueError(f"{self.label}: e_max must be given 'of {self.peak.upper()} dense peak'")
        if self.m_half.unit != "tokens per expert":
            raise ValueError(f"{self.label}: m_half must be given in tokens per expert")

    @property
    def expert_parameters(self) -> int:
        """Parameters of one measured expert on one GPU, a gated MLP: ``3 H N``."""
        return 3 * self.hidden_size * self.intermediate_size

    @property
    def e_max_of_bf16_peak(self) -> float:
        """``e_max`` as a fraction of the dense BF16 peak, the hardware catalogue's
        ``peak_flops``: the kernel's absolute rate is what carries to a model of another
        precision (an FP8 curve's ceiling is twice its FP8 fraction, :data:`FP8_OVER_BF16_PEAK`)."""
        return self.e_max.value * (FP8_OVER_BF16_PEAK if self.peak == "fp8" else 1.0)


@dataclass(frozen=True, kw_only=True)
class MoEKernel(Record):
    """A family of grouped-GEMM curves (``data/kernels.toml``), one per measured expert shape."""

    key: str
    name: str
    description: str
    curves: Annotated[tuple[KernelCurve, ...], MinLen(1)]


@cache
def kernel_catalog() -> dict[str, MoEKernel]:
    """Every grouped-GEMM kernel family in ``data/kernels.toml``, by key."""
    return load_catalog("kernels.toml", MoEKernel)


def get_kernel(key: str) -> MoEKernel:
    """The kernel family called ``key`` (e.g. ``"triton-fused-moe"``)."""
    return lookup(kernel_catalog(), key, "MoE kernel")


def nearest_curve_index(sizes: Numeric, expert_parameters: Numeric) -> IntArray:
    """Index of the curve whose measured expert size is nearest in log to each of
    ``expert_parameters`` (one expert on one GPU): ``argmin_c |ln s - ln s_c|``.

    >>> nearest_curve_index(np.array([88e6, 4.7e6]), np.array([4.7e6, 18.9e6, 100e6])).tolist()
    [1, 1, 0]
    """
    logs = np.log(np.asarray(sizes, dtype=float))
    wanted = np.log(np.maximum(np.asarray(expert_parameters, dtype=float), 1.0))
    return np.argmin(np.abs(wanted[..., None] - logs), axis=-1)


def curve_constants(kernel: str | None, expert_parameters: Numeric) -> tuple[FloatArray, FloatArray]:
    """``(e_max, m_half)`` of the curve ``kernel``'s family gives an expert of
    ``expert_parameters`` on one GPU (:func:`nearest_curve_index`), e_max of the dense BF16
    peak; ``(0, 0)``, no curve, for no kernel or a dense model (0 expert parameters)."""
    size = np.asarray(expert_parameters, dtype=float)
    if kernel is None or not kernel:
        return np.zeros(size.shape), np.zeros(size.shape)
    curves = get_kernel(kernel).curves
    pick = nearest_curve_index(np.array([c.expert_parameters for c in curves], dtype=float), size)
    e_max = np.array([c.e_max_of_bf16_peak for c in curves])[pick]
    m_half = np.array([c.m_half.value for c in curves])[pick]
    moe = size > 0
    return np.where(moe, e_max, 0.0), np.where(moe, m_half, 0.0)


def curve_columns(kernels: np.ndarray, expert_parameters: Numeric) -> tuple[FloatArray, FloatArray]:
    """:func:`curve_constants` scenario by scenario: ``kernels[i]`` names scenario i's family
    ("" for none), ``expert_parameters`` broadcasts against it."""
    names = np.asarray(kernels, dtype=str)
    size = np.broadcast_to(np.asarray(expert_parameters, dtype=float), names.shape)
    e_max, m_half = np.zeros(names.shape), np.zeros(names.shape)
    for name in sorted(set(names.ravel().tolist())):  # not np.unique: it imports numpy.ma
        mine = names == name
        e_max[mine], m_half[mine] = curve_constants(str(name) or None, size[mine])
    return e_max, m_half
