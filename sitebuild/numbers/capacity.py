"""Section 5, does it fit on the card: memory needed against memory usable."""

from __future__ import annotations

import numpy as np

from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import Number, first_where, gib, percent, plain, times
from specmodel.model.memory import cards_needed
from specmodel.model.scenario import TENSOR_PARALLEL
from specmodel.model.settings import Settings
from specmodel.model.specs import get_hardware


def numbers(settings: Settings) -> dict[str, Number]:
    """Whether the article's scenarios fit on one card of the deployment's hardware, and the
    batch a draft model displaces."""
    c = settings.constants
    d, b64, b1024 = one(settings), one(settings, concurrency=64), one(settings, concurrency=1024)
    t8192 = one(settings, context=8192)
    kv_share = float(d.draft_kv_bytes_per_token / (d.draft_kv_bytes_per_token + d.target_kv_bytes_per_token))
    return {
        "gpu_memory_utilization": percent(c.GPU_MEMORY_UTILIZATION),
        "workspace_gib": gib(c.WORKSPACE_BYTES, 0),
        "usable_gib": gib(d.usable_memory_bytes),
        "capacity_gib": gib(get_hardware(settings.deployment.hardware).memory_capacity.value),
        "hbm_b1": gib(d.memory_required_bytes),
        "hbm_b64": gib(b64.memory_required_bytes),
        "hbm_b1024": gib(b1024.memory_required_bytes, 0),
        "hbm_plain_b1024": gib(one(settings, concurrency=1024, drafter="ngram").memory_required_bytes, 0),
        "hbm_b64_t8192": gib(one(settings, concurrency=64, context=8192).memory_required_bytes),
        "cards_b1024": plain(cards_needed(b1024.memory_required_bytes, d.usable_memory_bytes), 0),
        "max_b_draft": plain(d.max_concurrency, 0),
        "max_b_plain": plain(d.max_concurrency_without_draft, 0),
        "max_b_loss": percent(1 - float(d.max_concurrency) / float(d.max_concurrency_without_draft)),
        "max_b_draft_t8192": plain(t8192.max_concurrency, 0),
        "max_b_plain_t8192": plain(t8192.max_concurrency_without_draft, 0),
        "draft_kv_of_total": percent(kv_share),
        "ladder_first_unfit_b": first_where(LADDER, ~np.asarray(one(settings, concurrency=LADDER).fits)),
        "max_b_eagle": plain(one(settings, drafter="eagle").max_concurrency, 0),
    }


def parallel_numbers(settings: Settings) -> dict[str, Number]:
    """The article's two large scenarios split over 1, 2, 4 or 8 GPUs (tensor parallelism):
    the smallest group that holds each, the memory per GPU there (or on the largest group if
    none does), and the speedup the model gives there (the article's ideal engine)."""
    tps = np.array(TENSOR_PARALLEL)
    n: dict[str, Number] = {}
    for key, scenario in (("b1024", {"concurrency": 1024}), ("b64_t8192", {"concurrency": 64, "context": 8192})):
        ev = one(settings, tensor_parallel=tps, **scenario)
        plain_ev = one(settings, tensor_parallel=tps, drafter="ngram", **scenario)
        eagle = one(settings, tensor_parallel=tps, drafter="eagle", **scenario)
        at = int(np.argmax(ev.fits)) if ev.fits.any() else len(tps) - 1
        n[f"tp_fit_{key}"] = first_where(tps, ev.fits)
        n[f"tp_fit_plain_{key}"] = first_where(tps, plain_ev.fits)
        n[f"tp_fit_eagle_{key}"] = first_where(tps, eagle.fits)
        n[f"tp_at_{key}"] = plain(tps[at], 0)
        n[f"hbm_{key}_tp"] = gib(ev.memory_required_bytes[at])
        n[f"hbm_plain_{key}_tp"] = gib(plain_ev.memory_required_bytes[at])
        n[f"speedup_{key}_tp"] = times(ev.speedup[at])
        n[f"speedup_eagle_{key}_tp"] = times(eagle.speedup[at])
        n[f"comm_{key}_tp"] = percent(ev.verify_communication_share[at])
    return n
