"""The display layer: readouts with their labels, display units and formats.

The model works in SI units (:class:`specmodel.model.evaluation.Evaluation`); this module converts
them into the units the article, the CLI and the simulator show (GiB, KiB, ms, TFLOP,
shares as 0..1) and formats them. It computes nothing about speculative decoding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from specmodel.formatting import GIB, KIB, Style, number
from specmodel.model.evaluation import Evaluation


@dataclass(frozen=True)
class Readout:
    """One displayed quantity: ``value = getattr(evaluation, field) * scale``."""

    key: str
    label: str
    field: str
    scale: float = 1.0
    unit: str = ""
    decimals: int = 2
    style: Style = "number"

    def value(self, evaluation: Evaluation) -> np.ndarray:
        """The readout in display units (shares stay 0..1)."""
        return np.asarray(getattr(evaluation, self.field), dtype=float) * self.scale

    def format(self, value: float) -> str:
        """Text as the article and the simulator print it, e.g. ``1.94x``, ``26%``."""
        return number(value, self.style, self.decimals, self.unit)


#: Every scalar readout, in the order the CLI prints them; keys are the JSON keys. ``speedup``
#: is ``throughput_speedup`` under its old name (kept for every caller and figure); the CLI's
#: table shows the two named definitions in its place
#: (:class:`specmodel.model.evaluation.Evaluation` defines both).
READOUTS: tuple[Readout, ...] = (
    Readout("speedup", "Speedup over plain decoding", "speedup", style="times"),
    Readout("decode_speedup", "Speedup over plain decoding: decode (TPOT)", "decode_speedup", style="times"),
    Readout("throughput_speedup", "Speedup over plain decoding: throughput", "throughput_speedup", style="times"),
    Readout("spec_tokens_per_s", "Speculative throughput", "spec_tokens_per_s", unit="tokens/s", decimals=0),
    Readout("base_tokens_per_s", "Plain decoding throughput", "base_tokens_per_s", unit="tokens/s", decimals=0),
    Readout("mean_acceptance_length", "Mean acceptance length", "mean_acceptance_length", unit="tokens/pass"),
    Readout("draft_share", "Wall clock in the drafter", "draft_share", decimals=0, style="percent"),
    Readout("arithmetic_ratio", "Arithmetic per output token vs plain", "arithmetic_ratio", style="times"),
    Readout("verify_idle", "Tensor cores idle in the verify pass", "verify_idle", decimals=0, style="percent"),
    Readout("verify_gib", "Verify pass: bytes moved", "verify_bytes", 1 / GIB, "GiB"),
    Readout("verify_tflop", "Verify pass: arithmetic", "verify_flops", 1e-12, "TFLOP", decimals=3),
    Readout("verify_memory_ms", "Verify pass: memory time", "verify_memory_time", 1e3, "ms"),
    Readout("verify_compute_ms", "Verify pass: arithmetic time", "verify_compute_time", 1e3, "ms"),
    Readout("verify_weights_gib", "Verify pass: weights read", "verify_weights_read_bytes", 1 / GIB, "GiB"),
    Readout("plain_weights_gib", "Plain step: weights read", "plain_weights_read_bytes", 1 / GIB, "GiB"),
    Readout("verify_allreduce_ms", "Verify pass: all-reduce time", "verify_allreduce_time", 1e3, "ms", decimals=3),
    Readout(
        "verify_communication_share",
        "Verify pass: share in all-reduces",
        "verify_communication_share",
        decimals=0,
        style="percent",
    ),
    Readout("draft_step_gib", "Draft pass: bytes moved", "draft_step_bytes", 1 / GIB, "GiB"),
    Readout("target_weights_gib", "Target weights", "target_weight_bytes", 1 / GIB, "GiB"),
    Readout("target_weights_per_gpu_gib", "Target weights per GPU", "target_weight_bytes_per_gpu", 1 / GIB, "GiB"),
    Readout("gpus", "GPUs the target is split over", "tensor_parallel", decimals=0),
    Readout(
        "draft_weight_fraction",
        "Draft weights read per pass / target weights",
        "draft_weight_fraction",
        decimals=1,
        style="percent",
    ),
    Readout("target_kv_kib", "Target KV cache per token", "target_kv_bytes_per_token", 1 / KIB, "KiB", decimals=0),
    Readout("draft_kv_kib", "Draft KV cache per token", "draft_kv_bytes_per_token", 1 / KIB, "KiB", decimals=0),
    Readout(
        "draft_kv_fraction", "Draft KV cache per token / target's", "draft_kv_fraction", decimals=0, style="percent"
    ),
    Readout("accepted_throughput", "Accepted draft tokens", "accepted_throughput", unit="tokens/s", decimals=1),
    Readout("drafted_throughput", "Drafted tokens", "drafted_throughput", unit="tokens/s", decimals=1),
    Readout("expected_iterations", "Iterations per sequence", "expected_iterations", unit="passes"),
    Readout("hbm_required_gib", "Memory needed: weights, caches, workspace", "memory_required_bytes", 1 / GIB, "GiB"),
    Readout("hbm_capacity_gib", "Memory the card reports", "memory_capacity_bytes", 1 / GIB, "GiB"),
    Readout("hbm_usable_gib", "Memory usable on the card", "usable_memory_bytes", 1 / GIB, "GiB"),
    Readout("max_concurrency", "Most sequences that fit", "max_concurrency", unit="sequences", decimals=0),
    Readout(
        "max_concurrency_without_draft",
        "Most sequences that fit without the drafter",
        "max_concurrency_without_draft",
        unit="sequences",
        decimals=0,
    ),
)

BY_KEY = {r.key: r for r in READOUTS}


def readout_arrays(evaluation: Evaluation) -> dict[str, np.ndarray]:
    """Every scalar readout of an evaluation, in display units, by key."""
    return {r.key: r.value(evaluation) for r in READOUTS}


def point_readouts(evaluation: Evaluation) -> dict[str, object]:
    """The readouts of a single scenario as plain Python values (the CLI's JSON object)."""
    if np.size(evaluation.speedup) != 1:
        raise ValueError("point_readouts needs a single scenario")
    numbers = {key: float(np.squeeze(v)) for key, v in readout_arrays(evaluation).items()}
    out: dict[str, object] = dict(numbers)
    for key in ("max_concurrency", "max_concurrency_without_draft"):
        out[key] = int(numbers[key])
    per_position = np.reshape(evaluation.per_position, -1)
    out["per_position"] = [float(x) for x in per_position if x > 0]
    out["fits"] = bool(np.squeeze(evaluation.fits))
    alpha = float(np.squeeze(evaluation.alpha))
    out["alpha"] = None if np.isnan(alpha) else alpha
    out["ngram_match_rate"] = float(np.squeeze(evaluation.ngram_match_rate))
    return out
