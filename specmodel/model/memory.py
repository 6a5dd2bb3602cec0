"""Whether a scenario fits on the card: bytes needed against usable HBM (SI units: bytes).

Needed: the target's and the drafter's resident weights, both KV caches for B sequences at
the context they reach by the end of generation (prompt T plus G generated tokens), and a
fixed workspace allowance ``A`` (``WORKSPACE_BYTES``). Usable: capacity times
``GPU_MEMORY_UTILIZATION``, the share vLLM's ``gpu_memory_utilization`` lets the server take
(Kwon et al. 2023, PagedAttention, arXiv:2309.06180: the cache gets whatever the weights
and activations leave).
"""

from __future__ import annotations

import numpy as np


def kv_cache_bytes(kv_bytes_per_token, batch, context, generated_tokens):
    """Cache held at the end of generation: ``B (T + G) kv``.

    >>> int(kv_cache_bytes(10, batch=2, context=3, generated_tokens=1))
    80
    """
    return np.asarray(batch) * (np.asarray(context) + generated_tokens) * np.asarray(kv_bytes_per_token)


def memory_required(resident_weight_bytes, kv_bytes_per_token, batch, context, generated_tokens, workspace_bytes):
    """``W + B (T + G) kv + A``, with W and kv summed over target and drafter by the caller.

    >>> int(memory_required(100, 10, batch=2, context=3, generated_tokens=1, workspace_bytes=5))
    185
    """
    return (
        resident_weight_bytes + kv_cache_bytes(kv_bytes_per_token, batch, context, generated_tokens) + workspace_bytes
    )


def usable_memory(capacity_bytes, utilization):
    """``capacity x u``, u = ``GPU_MEMORY_UTILIZATION`` (vLLM's ``gpu_memory_utilization``).

    >>> usable_memory(80e9, 0.9) / 1e9
    72.0
    """
    return capacity_bytes * utilization


def max_concurrency(
    usable_bytes, resident_weight_bytes, kv_bytes_per_token, context, generated_tokens, workspace_bytes
):
    """Most sequences that fit: ``floor((U - W - A) / ((T + G) kv))``, 0 when the weights and
    workspace alone do not fit.

    >>> int(max_concurrency(1000, 100, 10, context=3, generated_tokens=1, workspace_bytes=0))
    22
    """
    free = np.asarray(usable_bytes, dtype=float) - resident_weight_bytes - workspace_bytes
    per_sequence = (np.asarray(context, dtype=float) + generated_tokens) * kv_bytes_per_token
    return np.maximum(np.floor(free / per_sequence), 0.0)


def cards_needed(required_bytes, usable_bytes_per_card):
    """Cards whose usable memory adds up to what a scenario needs, ``ceil(required / usable)``
    (an upper bound's lower bound: it ignores that weights split across cards add
    communication; see the model page).

    >>> int(cards_needed(150.0, 72.0))
    3
    """
    return np.ceil(np.asarray(required_bytes, dtype=float) / np.asarray(usable_bytes_per_card, dtype=float))
