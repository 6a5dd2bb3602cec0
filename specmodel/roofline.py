"""Roofline cost of one forward pass (Williams, Waterman, Patterson 2009, CACM 52(4),
doi:10.1145/1498765.1498785): a pass takes the longer of its memory time and its
arithmetic time. Works elementwise on numpy arrays; SI units (bytes, FLOPs, seconds).

Notation: B sequences in the batch, Q query positions per sequence, n KV length.
"""

from __future__ import annotations

import numpy as np

from specmodel.settings import constants


def pass_bytes(weight_bytes, kv_bytes_per_token, batch, kv_length):
    """Bytes one pass moves: ``W + B n kv``.

    The weights are read once for the whole batch; each sequence reads its own cache of
    n tokens once, whatever its number of query positions (every query position is
    served from the same read).

    >>> int(pass_bytes(100, 2, batch=3, kv_length=10))
    160
    """
    return weight_bytes + batch * kv_length * kv_bytes_per_token


def pass_flops(dense_flops_per_position, attention_flops_per_token, batch, positions, kv_length):
    """FLOPs of one pass: ``B Q (f_dense + f_attn n)``.

    >>> int(pass_flops(10, 1, batch=2, positions=3, kv_length=5))
    90
    """
    return batch * positions * (dense_flops_per_position + attention_flops_per_token * kv_length)


def memory_time(bytes_moved, memory_bandwidth):
    """Seconds to move ``bytes_moved`` at the achievable bandwidth ``eta_mem x BW``."""
    return bytes_moved / (constants().MEMORY_EFFICIENCY * memory_bandwidth)


def compute_time(flops, peak_flops):
    """Seconds to do ``flops`` at the achievable rate ``eta_flop x peak``."""
    return flops / (constants().COMPUTE_EFFICIENCY * peak_flops)


def pass_time(memory_seconds, compute_seconds):
    """Roofline: memory and arithmetic overlap, the slower one sets the time.

    >>> float(pass_time(2.0, 0.5))
    2.0
    """
    return np.maximum(memory_seconds, compute_seconds)


def idle_share(memory_seconds, compute_seconds):
    """Share of the pass during which the tensor cores have nothing to do:
    ``1 - t_compute / max(t_memory, t_compute)``; 0 when the pass is compute-bound.

    >>> float(idle_share(4.0, 1.0))
    0.75
    """
    return 1.0 - compute_seconds / pass_time(memory_seconds, compute_seconds)
