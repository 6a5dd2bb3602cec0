"""Section 4, a better draft can be a worse deal: the bigger draft, the drafts' weights and
caches, long prompts, and the draft heads."""

from __future__ import annotations

from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, at, percent, plain, times
from specmodel.formatting import GIB, KIB
from specmodel.model import architecture as arch
from specmodel.model import heads
from specmodel.model.drafters import drafter_coefficients
from specmodel.model.settings import Settings
from specmodel.model.specs import get_architecture


def numbers(settings: Settings) -> dict[str, Number]:
    """The big draft against the draft, the three models' weights and caches, and the
    long-prompt and short-prompt extremes."""
    dep = settings.deployment
    target, draft, big = (get_architecture(k) for k in (dep.target, dep.draft, dep.big_draft))
    big_same = one(settings, drafter=dep.big_draft)
    long64 = one(settings, concurrency=64, context=8192)
    short = one(settings, concurrency=1024, context=256, drafter="ngram")
    return {
        "speedup_big_draft": at(times(big_same.speedup), drafter=dep.big_draft),
        "draft_share_big_draft": percent(big_same.draft_share),
        "speedup_big_draft_a95": at(
            times(one(settings, drafter=dep.big_draft, alpha=0.95).speedup), drafter=dep.big_draft, alpha=0.95
        ),
        "target_weights_gib": plain(arch.weight_bytes(target) / GIB),
        "draft_weight_share": percent(arch.weight_bytes(draft) / arch.weight_bytes(target)),
        "big_draft_weight_share": percent(arch.weight_bytes(big) / arch.weight_bytes(target)),
        "target_kv_kib": plain(arch.kv_cache_bytes_per_token(target) / KIB, 0),
        "draft_kv_kib": plain(arch.kv_cache_bytes_per_token(draft) / KIB, 0),
        "draft_kv_share": percent(arch.kv_cache_bytes_per_token(draft) / arch.kv_cache_bytes_per_token(target)),
        "draft_share_b64_t8192": percent(long64.draft_share),
        "speedup_b64_t8192": at(times(long64.speedup), concurrency=64, context=8192),
        "ngram_b1024_t256": at(times(short.speedup), concurrency=1024, context=256, drafter="ngram"),
        "verify_idle_ngram_b1024_t256": percent(short.verify_idle),
    }


def head_numbers(settings: Settings) -> dict[str, Number]:
    """The EAGLE heads and the MTP head against the deployment's draft model."""
    dep, fpp = settings.deployment, settings.constants.FLOPS_PER_PARAMETER
    t = get_architecture(dep.target)
    catalog = heads.head_catalog()
    eagle, small = catalog["eagle"], catalog["eagle-32k"]
    eagle_read = drafter_coefficients("eagle", t.key, fpp).weight_bytes
    n: dict[str, Number] = {
        "lm_head_gib": plain(heads.lm_head_bytes_per_step(eagle, t) / GIB),
        "lm_head_small_gib": plain(heads.lm_head_bytes_per_step(small, t) / GIB),
        "small_vocab": plain(small.draft_vocab_size, 0),
        "target_vocab": plain(t.vocab_size, 0),
        "eagle_read_gib": plain(eagle_read / GIB),
        "eagle_small_read_gib": plain(drafter_coefficients("eagle-32k", t.key, fpp).weight_bytes / GIB),
        "draft_read_gib": plain(drafter_coefficients(dep.draft, t.key, fpp).weight_bytes / GIB),
        "lm_head_share_eagle": percent(heads.lm_head_bytes_per_step(eagle, t) / eagle_read),
        "head_kv_kib": plain(heads.head_kv_cache_bytes_per_token(eagle, t) / KIB, 0),
        "head_layer_gib": plain(heads.head_own_parameters(eagle, t) * t.bytes_per_element / GIB),
    }
    for key, label in (("eagle", "eagle"), ("eagle-32k", "eagle32k"), ("mtp", "mtp")):
        n[f"speedup_{label}_b1"] = times(one(settings, drafter=key).speedup)
        if key != "mtp":
            n[f"speedup_{label}_b1"] = at(n[f"speedup_{label}_b1"], drafter=key)
    for key, label in (("eagle", "eagle"), ("eagle-32k", "eagle32k")):
        n[f"speedup_{label}_b64"] = at(
            times(one(settings, drafter=key, concurrency=64).speedup), drafter=key, concurrency=64
        )
    b64, e64 = one(settings, concurrency=64), one(settings, drafter="eagle", concurrency=64)
    n["draft_step_gib_b64"] = plain(b64.draft_step_bytes / GIB)
    n["eagle_step_gib_b64"] = plain(e64.draft_step_bytes / GIB)
    n["draft_share_eagle_b64"] = percent(e64.draft_share)
    n["draft_share_b64"] = percent(b64.draft_share)
    return n
