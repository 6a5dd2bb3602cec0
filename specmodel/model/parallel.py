"""Tensor parallelism: a model split over N_g GPUs, and the collectives that splitting costs.

Megatron-style tensor parallelism (Shoeybi et al. 2019, arXiv:1909.08053, Section 3 and
Figure 3) splits every weight matrix of a decoder layer over N_g GPUs, so each GPU reads 1/N_g of
the weights and does 1/N_g of the arithmetic; the layer's two partial results (after the
attention output projection and after the MLP's down projection) are summed across the GPUs
with one all-reduce each: 2 L all-reduces per forward pass, on the critical path.

A ring all-reduce of S bytes over N_g GPUs sends ``2 (N_g - 1) / N_g x S`` bytes from each GPU in
each direction (NVIDIA nccl-tests, doc/PERFORMANCE.md: ``busbw = algbw x 2 (n - 1) / n``)
and takes 2 (N_g - 1) steps, each with a latency (NCCL's latency model, src/graph/tuning.cc).
The KV cache is split by KV heads; with more GPUs than KV heads, vLLM replicates heads so
that every GPU holds at least one.

All functions take numpy arrays that broadcast; N_g = 1 costs nothing.
"""

from __future__ import annotations

import numpy as np

from specmodel.model.specs import Interconnect
from specmodel.model.types import FloatArray, Numeric


def group_bandwidth(link_bandwidth: Numeric, topology: str, gpus: Numeric) -> FloatArray:
    """Bytes/s each GPU sends in each direction within a group of N_g GPUs: the per-GPU figure
    through a ``switch`` (NVSwitch, a PCIe switch), ``(N_g - 1)`` links' worth in a ``mesh`` of
    point-to-point links (MI300X's Infinity Fabric); infinite for N_g = 1 (nothing to send).

    >>> float(group_bandwidth(64e9, "mesh", 4)) / 1e9, float(group_bandwidth(450e9, "switch", 4)) / 1e9
    (192.0, 450.0)
    """
    n = np.asarray(gpus, dtype=float)
    links = (n - 1) if topology == "mesh" else np.ones_like(n)
    with np.errstate(divide="ignore"):
        return np.where(n > 1, np.asarray(link_bandwidth, dtype=float) * np.maximum(links, 1), np.inf)


def allreduce_latency(gpus: Numeric, base_latency: Numeric, hop_latency: Numeric) -> FloatArray:
    """Fixed seconds of one ring all-reduce over N_g GPUs: ``base + 2 (N_g - 1) hop``, 0 for N_g = 1
    (NCCL's latency model: nsteps = 2 (nRanks - 1) for AllReduce).

    >>> round(float(allreduce_latency(4, 6.6e-6, 0.6e-6)) * 1e6, 2)
    10.2
    """
    n = np.asarray(gpus, dtype=float)
    return np.where(n > 1, base_latency + 2.0 * (n - 1.0) * hop_latency, 0.0)


def allreduce_traffic_factor(gpus: Numeric) -> FloatArray:
    """Bytes each GPU sends per byte all-reduced in a ring: ``2 (N_g - 1) / N_g`` (0 for N_g = 1).

    >>> float(allreduce_traffic_factor(4))
    1.5
    """
    n = np.asarray(gpus, dtype=float)
    return 2.0 * (n - 1.0) / n


def allreduce_time(message_bytes: Numeric, gpus: Numeric, bandwidth: Numeric, latency: Numeric) -> FloatArray:
    """Seconds of one ring all-reduce of S = ``message_bytes`` over N_g GPUs:
    ``latency + 2 (N_g - 1) / N_g x S / bandwidth``, 0 for N_g = 1.

    >>> round(float(allreduce_time(1e6, 4, 450e9, 10.2e-6)) * 1e6, 2)
    13.53
    """
    n = np.asarray(gpus, dtype=float)
    with np.errstate(invalid="ignore"):  # one GPU: nothing moves over an infinite bandwidth
        moved = allreduce_traffic_factor(n) * np.asarray(message_bytes, dtype=float) / bandwidth
    return np.where(n > 1, latency + moved, 0.0)


def pass_allreduce_time(
    layers: Numeric, message_bytes: Numeric, gpus: Numeric, bandwidth: Numeric, latency: Numeric
) -> FloatArray:
    """Seconds of one forward pass's all-reduces: its :func:`allreduces_per_pass` ``2 L``, each
    of S = ``message_bytes`` (:func:`allreduce_time`); 0 on one GPU. This and
    :func:`allreduce_time` are the one place the cost of tensor parallelism's communication is
    written; every pass is priced through them (:class:`specmodel.model.passes.PassPrice`).

    >>> round(float(pass_allreduce_time(80, 1e6, 4, 450e9, 10.2e-6)) * 1e3, 3)
    2.165
    """
    return allreduces_per_pass(layers, gpus) * allreduce_time(message_bytes, gpus, bandwidth, latency)


def group_link(link: Interconnect, gpus: Numeric) -> tuple[FloatArray, FloatArray]:
    """``(bandwidth, latency)`` of an all-reduce in a tensor-parallel group of ``gpus`` GPUs over
    ``link``: :func:`group_bandwidth` and :func:`allreduce_latency`."""
    return (
        group_bandwidth(link.bandwidth.value, link.topology, gpus),
        allreduce_latency(gpus, link.allreduce_latency.value, link.hop_latency.value),
    )


def allreduces_per_pass(layers: Numeric, gpus: Numeric) -> FloatArray:
    """All-reduces in one forward pass of a model of L layers split over N_g GPUs: ``2 L``
    (after attention and after the MLP, Megatron-LM), 0 for N_g = 1.

    >>> float(allreduces_per_pass(80, 4)), float(allreduces_per_pass(80, 1))
    (160.0, 0.0)
    """
    return np.where(np.asarray(gpus) > 1, 2.0 * np.asarray(layers, dtype=float), 0.0)


def kv_share_per_gpu(kv_heads: Numeric, gpus: Numeric) -> FloatArray:
    """Share of a model's KV cache each GPU holds: ``ceil(K / N_g) / K``. The cache is split by
    KV heads; with more GPUs than heads each GPU holds one head (vLLM replicates them), so
    the share stops falling at 1/K.

    >>> float(kv_share_per_gpu(8, 4)), float(kv_share_per_gpu(4, 8))
    (0.25, 0.25)
    """
    k = np.asarray(kv_heads, dtype=float)
    return np.ceil(k / np.asarray(gpus, dtype=float)) / k
