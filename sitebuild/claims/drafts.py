"""Claims of section 4's draft models and heads: why a small draft's cache is large, a bigger
draft, and heads against the draft model at one and at 64 sequences."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed
from sitebuild.claims.words import FITTED_ENGINE, load_facets, part, verdict
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, name, percent, plain, speedup_at, times
from specmodel.formatting import KIB
from specmodel.model import architecture as arch
from specmodel.model.drafters import drafter_coefficients
from specmodel.model.specs import get_architecture


def kv_heads(settings: SiteSettings) -> Said:
    """The draft's cache per token as a share of the target's, against its share of the weights."""
    dep = settings.deployment
    t, d = get_architecture(dep.target), get_architecture(dep.draft)
    kv_share = arch.kv_cache_bytes_per_token(d) / arch.kv_cache_bytes_per_token(t)
    weight_share = arch.weight_bytes(d) / arch.weight_bytes(t)
    values = {
        "draft": name(d.name),
        "target_kv_kib": plain(arch.kv_cache_bytes_per_token(t) / KIB, 0),
        "draft_kv_share": percent(kv_share),
        "draft_weight_share": percent(weight_share),
    }
    return claim("kv_heads", "cache_heavier" if kv_share > weight_share else "cache_lighter", values)


def big_draft(settings: SiteSettings) -> Said:
    """The big draft at the same alpha as the draft (facet ``at_same``: slower, level or
    faster), and at 0.95 against the draft at 0.75, under each acceptance profile."""
    dep = settings.deployment
    d, big = one(settings), one(settings, drafter=dep.big_draft)
    a95 = one(settings, drafter=dep.big_draft, alpha=0.95)
    values = {
        "speedup_b1": speedup_at(d.speedup),
        "speedup_big_a95": speedup_at(a95.speedup, drafter=dep.big_draft, alpha=0.95),
        "draft": name(get_architecture(dep.draft).name),
        "big_draft": name(get_architecture(dep.big_draft).name),
    }
    pair = times(big.speedup).text, times(d.speedup).text
    at_same = "level" if pair[0] == pair[1] else "slower" if float(big.speedup) < float(d.speedup) else "faster"
    high, low = values["speedup_big_a95"], values["speedup_b1"]
    outcome = "level" if high.text == low.text else "short" if high.value < low.value else "ahead"
    big_same = one(settings, drafter=dep.big_draft, alpha=0.95, acceptance="same").speedup
    small_same = one(settings, acceptance="same").speedup
    values["big_same"] = speedup_at(big_same, drafter=dep.big_draft, alpha=0.95, acceptance="same")
    values["small_same"] = speedup_at(small_same, acceptance="same")
    same = "level" if times(big_same).text == times(small_same).text else "short" if big_same < small_same else "ahead"
    facets = [("outcome", outcome), ("same", "holds" if same == outcome else same), ("at_same", at_same)]
    return composed("big_draft", facets, values)


def head_b1(settings: SiteSettings) -> Said:
    """An EAGLE head's step against a draft-model pass: bytes read, and the speedup at one sequence."""
    dep, fpp = settings.deployment, settings.constants.FLOPS_PER_PARAMETER
    eagle_read = drafter_coefficients("eagle", dep.target, fpp).weight_bytes
    draft_read = drafter_coefficients(dep.draft, dep.target, fpp).weight_bytes
    e, d = one(settings, drafter="eagle"), one(settings)
    weights = part(d.base_time_parts, "target_weights") / float(d.base_time_parts.sum()) > 0.9
    values = {
        "draft": name(get_architecture(dep.draft).name),
        "speedup_eagle_b1": speedup_at(e.speedup, drafter="eagle"),
        "speedup_b1": speedup_at(d.speedup),
    }
    size = "more" if eagle_read > draft_read else "less"
    speed = "slower" if float(e.speedup) < float(d.speedup) else "faster"
    fe, fd = one(settings, drafter="eagle", engine=FITTED_ENGINE), one(settings, engine=FITTED_ENGINE)
    values["fitted_eagle_b1"] = speedup_at(fe.speedup, drafter="eagle", engine=FITTED_ENGINE)
    values["fitted_b1"] = speedup_at(fd.speedup, engine=FITTED_ENGINE)
    profile = settings.engines[FITTED_ENGINE]
    values["draft_pass_ms"] = plain(profile.draft_model_pass * 1e3)
    values["head_pass_ms"] = plain(profile.head_pass_s * 1e3)
    fitted = "slower" if float(fe.speedup) < float(fd.speedup) else "faster"
    facets = [("size", size), ("speed", f"{'weights' if weights else 'other'}:{speed}"),
              ("fitted", "same" if fitted == speed else fitted)]  # fmt: skip
    return composed("head_b1", facets, values)


def head_b64(settings: SiteSettings) -> Said:
    """At 64 sequences: a draft-model pass against an EAGLE head's step."""
    dep = settings.deployment
    d, e = one(settings, concurrency=64), one(settings, concurrency=64, drafter="eagle")
    kv, weights = part(d.spec_time_parts, "draft_kv"), part(d.spec_time_parts, "draft_weights")
    cache_share = kv / (kv + weights)  # memory times, so shares of the bytes the draft's passes move
    values = {
        "draft": name(get_architecture(dep.draft).name),
        "draft_cache_share": percent(cache_share),
        "speedup_draft": speedup_at(d.speedup, concurrency=64),
        "speedup_eagle": speedup_at(e.speedup, concurrency=64, drafter="eagle"),
    }
    load, more = load_facets(settings, "d64", concurrency=64)
    values.update(more)
    fitted = one(settings, concurrency=64, drafter="eagle", engine=FITTED_ENGINE)
    facets = [("draft_model", verdict(d.speedup)), ("head", verdict(e.speedup)), *load,
              ("head_fitted", verdict(fitted.speedup))]  # fmt: skip
    return composed("head_b64", facets, values)


#: The measured n-gram workloads the article contrasts, by the dataset the measurement file
#: names: a conversation (chat-like: few continuations to copy) and code edits (copy-heavy:
#: the answer repeats most of its input).
NGRAM_WORKLOADS = {"chat": "ShareGPT", "copy": "InstructCoder"}


def _ngram_acceptance(dataset: str) -> tuple[tuple[float, ...], float]:
    """The per-position acceptance and mean acceptance length vLLM measured for n-gram lookup on
    ``dataset`` (the measurement file's rows at batch 1)."""
    from sitebuild.paths import MEASUREMENTS
    from specmodel.measurements import load_measurements

    row = next(r for r in load_measurements(MEASUREMENTS)
               if r.method == "ngram" and r.dataset == dataset and r.per_position_acceptance)  # fmt: skip
    return tuple(row.per_position_acceptance or ()), float(row.mean_acceptance_length or 0.0)


def ngram_workloads(settings: SiteSettings) -> Said:
    """N-gram lookup with the acceptance measured on a chat-like and on a copy-heavy workload
    (:data:`NGRAM_WORKLOADS`), at one and at 64 sequences, under the ideal engine and the
    profile fitted to vLLM; against the article's α, which assumes every prompt alike."""
    values: dict[str, Number] = {}
    facets = []
    for kind, dataset in NGRAM_WORKLOADS.items():
        u, length = _ngram_acceptance(dataset)
        values[f"{kind}_dataset"] = name(dataset)
        values[f"{kind}_mal"] = plain(length)
        for engine, tag in (("ideal", "ideal"), (FITTED_ENGINE, "fitted")):
            ev = one(settings, drafter="ngram", per_position=np.array(u), concurrency=np.array([1, 64]), engine=engine)
            if tag == "ideal":
                values[f"{kind}_ideal_b1"] = times(ev.speedup[0])
            facets.append((f"{kind}_{tag}", verdict(ev.speedup[1])))
    return composed("ngram_workloads", facets, values)


CLAIMS = (kv_heads, big_draft, head_b1, head_b64, ngram_workloads)
