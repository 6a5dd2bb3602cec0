"""Roofline cost of one forward pass (Williams, Waterman, Patterson 2009, CACM 52(4),
doi:10.1145/1498765.1498785): a pass takes the longer of its memory time and its
arithmetic time. Works elementwise on numpy arrays; SI units (bytes, FLOPs, seconds).

Notation: B sequences in the batch, Q query positions per sequence, n KV length.
"""

from __future__ import annotations

import numpy as np

from specmodel.model.types import FloatArray, Numeric


def flops_per_position(
    dense_flops_per_position: Numeric, attention_flops_per_token: Numeric, kv_length: Numeric
) -> Numeric:
    """FLOPs for one query position at KV length n: ``f_dense + f_attn n``, the dense term
    (:func:`specmodel.model.architecture.dense_flops_per_position`) plus attention over the
    n cached tokens (:func:`specmodel.model.architecture.attention_flops_per_position_per_token`).

    >>> flops_per_position(10, 2, 5)
    20
    """
    return dense_flops_per_position + attention_flops_per_token * kv_length


def pass_bytes(weight_bytes: Numeric, kv_bytes_per_token: Numeric, batch: Numeric, kv_length: Numeric) -> Numeric:
    """Bytes one pass moves: ``W + B n kv``.

    The weights are read once for the whole batch; each sequence reads its own cache of
    n tokens once, whatever its number of query positions (every query position is
    served from the same read).

    >>> int(pass_bytes(100, 2, batch=3, kv_length=10))
    160
    """
    return weight_bytes + batch * kv_length * kv_bytes_per_token


def pass_flops(position_flops: Numeric, batch: Numeric, positions: Numeric) -> Numeric:
    """FLOPs of one pass: ``Q (B f)``, with f = :func:`flops_per_position`.

    >>> int(pass_flops(15, batch=2, positions=3))
    90
    """
    return positions * (batch * position_flops)


def memory_time(bytes_moved: Numeric, memory_bandwidth: float, memory_efficiency: Numeric) -> Numeric:
    """Seconds to move ``bytes_moved`` at the achievable bandwidth ``eta_mem x BW``
    (``MEMORY_EFFICIENCY`` x the datasheet's B/s).

    >>> memory_time(8.0, 10.0, 0.8)
    1.0
    """
    return bytes_moved / (memory_efficiency * memory_bandwidth)


def compute_time(flops: Numeric, peak_flops: float, compute_efficiency: Numeric) -> Numeric:
    """Seconds to do ``flops`` at the achievable rate ``eta_flop x peak``
    (``COMPUTE_EFFICIENCY`` x the datasheet's dense FLOP/s).

    >>> compute_time(3.0, 4.0, 0.75)
    1.0
    """
    return flops / (compute_efficiency * peak_flops)


def pass_time(memory_seconds: Numeric, compute_seconds: Numeric) -> FloatArray:
    """Roofline: memory and arithmetic overlap, the slower one sets the time.

    >>> float(pass_time(2.0, 0.5))
    2.0
    """
    return np.maximum(memory_seconds, compute_seconds)


def idle_share(memory_seconds: Numeric, compute_seconds: Numeric) -> FloatArray:
    """Share of the pass during which the tensor cores have nothing to do:
    ``1 - t_compute / max(t_memory, t_compute)``; 0 when the pass is compute-bound.

    >>> float(idle_share(4.0, 1.0))
    0.75
    """
    return 1.0 - compute_seconds / pass_time(memory_seconds, compute_seconds)


def arithmetic_intensity(flops: Numeric, bytes_moved: Numeric) -> Numeric:
    """FLOPs per byte a pass does, ``FLOPs / bytes`` (the roofline's x axis).

    >>> arithmetic_intensity(10.0, 4.0)
    2.5
    """
    return flops / bytes_moved


def ridge_intensity(peak_flops: float, memory_bandwidth: float) -> float:
    """The card's ridge point ``peak / BW`` in FLOP per byte: a pass with a lower arithmetic
    intensity is memory-bound at peak rates (Williams et al. 2009, Fig. 1).

    >>> ridge_intensity(989.4e12, 3.35e12) > 295
    True
    """
    return peak_flops / memory_bandwidth


def combined_time(memory_seconds: Numeric, compute_seconds: Numeric, overlap: Numeric) -> Numeric:
    """Time of a pass whose memory traffic and arithmetic overlap imperfectly:
    ``(t_mem^p + t_flop^p)^(1/p)`` with p = ``overlap``, the L^p norm of the two times. Its
    limit p = inf is the roofline's ``max`` (Williams et al. 2009); p = 1 would be no overlap
    at all. Never below the max, so it never makes a pass faster. Elementwise.

    >>> combined_time(3.0, 4.0, 2.0), combined_time(3.0, 4.0, float("inf"))
    (5.0, 4.0)
    """
    p = np.asarray(overlap, dtype=float)
    if np.all(np.isinf(p)):
        top = np.maximum(memory_seconds, compute_seconds)
        return float(top) if np.ndim(top) == 0 else top
    finite = np.where(np.isinf(p), 1.0, p)
    m, c = np.asarray(memory_seconds, dtype=float), np.asarray(compute_seconds, dtype=float)
    top = np.maximum(m, c)
    safe = np.where(top > 0, top, 1.0)
    # (m^p + c^p)^(1/p) = top ((m/top)^p + (c/top)^p)^(1/p): no overflow for large p.
    smooth = safe * ((m / safe) ** finite + (c / safe) ** finite) ** (1.0 / finite)
    out = np.where(np.isinf(p), top, np.where(top > 0, smooth, 0.0))
    return float(out) if out.ndim == 0 else out
