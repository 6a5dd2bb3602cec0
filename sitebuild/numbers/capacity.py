"""Section 6, does it fit on the card: the memory a server may use (the comparisons are
claims, :mod:`sitebuild.claims.capacity`)."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, gib, percent
from specmodel.model.specs import get_hardware


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The memory a vLLM server may use on each of the deployment's GPUs, and the workspace."""
    c = settings.constants
    d = one(settings)
    return {
        "gpu_memory_utilization": percent(c.GPU_MEMORY_UTILIZATION),
        "workspace_gib": gib(c.WORKSPACE_BYTES, 0),
        "usable_gib": gib(d.usable_memory_bytes),
        "capacity_gib": gib(get_hardware(settings.deployment.hardware).memory_capacity.value),
    }
