"""Section 6, does it fit on the card: the memory a server may use (the comparisons are
claims, :mod:`sitebuild.claims.capacity`)."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, gib, percent


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The share of each GPU's memory a vLLM server may use, and what that leaves."""
    return {
        "gpu_memory_utilization": percent(settings.constants.GPU_MEMORY_UTILIZATION),
        "usable_gib": gib(one(settings).usable_memory_bytes),
    }
