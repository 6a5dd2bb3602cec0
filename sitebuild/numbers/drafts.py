"""Section 4's draft models and heads: the target's weights, and what an EAGLE head reads."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, percent, plain, speedup_at, times
from specmodel.formatting import GIB, KIB
from specmodel.model import architecture as arch
from specmodel.model import heads
from specmodel.model.drafters import drafter_coefficients
from specmodel.model.specs import get_architecture


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The target's weights, and the tokens per pass the article's α gives n-gram lookup."""
    return {
        "target_weights_gib": plain(arch.weight_bytes(get_architecture(settings.deployment.target)) / GIB),
        "ngram_workload_article_mal": plain(one(settings, drafter="ngram").mean_acceptance_length),
    }


def head_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The EAGLE heads and the MTP head: what one step reads, and their speedup at one sequence."""
    dep, fpp = settings.deployment, settings.constants.FLOPS_PER_PARAMETER
    t = get_architecture(dep.target)
    catalog = heads.head_catalog()
    eagle, small = catalog["eagle"], catalog["eagle-32k"]
    eagle_read = drafter_coefficients("eagle", t.key, fpp).weight_bytes
    return {
        "lm_head_gib": plain(heads.lm_head_bytes_per_step(eagle, t) / GIB),
        "lm_head_small_gib": plain(heads.lm_head_bytes_per_step(small, t) / GIB),
        "small_vocab": plain(small.draft_vocab_size, 0),
        "target_vocab": plain(t.vocab_size, 0),
        "eagle_read_gib": plain(eagle_read / GIB),
        "eagle_small_read_gib": plain(drafter_coefficients("eagle-32k", t.key, fpp).weight_bytes / GIB),
        "lm_head_share_eagle": percent(heads.lm_head_bytes_per_step(eagle, t) / eagle_read),
        "head_kv_kib": plain(heads.head_kv_cache_bytes_per_token(eagle, t) / KIB, 0),
        "head_layer_gib": plain(heads.head_own_parameters(eagle, t) * t.bytes_per_element / GIB),
        "speedup_eagle32k_b1": speedup_at(one(settings, drafter="eagle-32k").speedup, drafter="eagle-32k"),
        "speedup_mtp_b1": times(one(settings, drafter="mtp").speedup),
    }
