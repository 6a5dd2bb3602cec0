"""Section 1, what a decode step spends its time on: its arithmetic intensity, the verify pass's memory time
and idle share, and the arithmetic bill."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, at, percent, plain, times
from specmodel.model import acceptance as acc
from specmodel.model import architecture as arch
from specmodel.model.scenario import DEFAULTS
from specmodel.model.specs import get_architecture


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """A one-sequence decode step's arithmetic intensity, the verify pass's memory time at one
    sequence and its idle share at 64, and Theorem 3.11 against the model's own FLOP counts."""
    dep, c = settings.deployment, settings.constants
    target, draft = get_architecture(dep.target), get_architecture(dep.draft)
    d = one(settings)
    alpha, gamma = DEFAULTS["alpha"], DEFAULTS["gamma"]
    n: dict[str, Number] = {
        "plain_intensity": plain(d.plain_intensity, 1),
        "verify_mem_ms_b1": at(plain(d.verify_memory_time * 1e3), "verify_memory_ms"),
        "idle_b64": at(percent(one(settings, concurrency=64).verify_idle), "verify_idle", concurrency=64),
    }
    n["thm311_c0"] = times(acc.theorem_3_11_arithmetic_increase(alpha, gamma, 0.0))
    n["arith_ngram_same"] = times(one(settings, drafter="ngram", acceptance="same").arithmetic_ratio)
    n["c_draft"] = plain(arch.draft_cost_ratio(draft, target, c.FLOPS_PER_PARAMETER), 3)
    return n
