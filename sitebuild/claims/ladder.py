"""Claims of section 2, up the ladder: what the time of a step goes to at one sequence, at
tens of sequences and near a thousand, and how the prompt's length moves it."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed
from sitebuild.claims.words import (
    FITTED_ENGINE,
    first_rung,
    fitting,
    largest_extra,
    largest_part,
    load_facets,
    not_faster,
    part,
    rung,
    verdict,
)
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import at, plain, speedup_at, times


def rung_b1(settings: SiteSettings) -> Said:
    """At one sequence: the largest part of the plain step, and the verdict."""
    d = one(settings)
    base = d.base_time_parts
    share = part(base, "target_weights") / float(np.sum(base))
    values = {
        "spec_tps_b1": at(plain(d.spec_tokens_per_s, 0), "spec_tokens_per_s"),
        "base_tps_b1": at(plain(d.base_tokens_per_s, 0), "base_tokens_per_s"),
        "speedup_b1": speedup_at(d.speedup),
    }
    largest = largest_part(base)  # another part may lead (all-reduces over many GPUs, the engine's fixed costs)
    outcome = f"{'target_weights' if largest == 'target_weights' else 'other'}:{verdict(d.speedup)}"
    weights = "nearly_all" if share > 0.9 else "mostly" if share > 0.5 else "partly"
    load, more = load_facets(settings, "b1", concurrency=1)
    values.update(more)
    facets = [("outcome", outcome), ("weights_words", weights), ("largest_words", largest), *load]
    return composed("rung_b1", facets, values)


def rung_b64(settings: SiteSettings) -> Said:
    """At 64 sequences: the verdict and the part of the speculative step that grew most over
    the plain step (the draft's cache reads, or the verify pass's arithmetic)."""
    d = one(settings, concurrency=64)
    largest = largest_extra(d.spec_time_parts, d.base_time_parts)
    values = {"speedup_b64": speedup_at(d.speedup, concurrency=64)}
    reason = largest if largest in ("draft_kv", "target_arithmetic") else "other"
    state = "memory_bound" if float(d.verify_idle) > 0.01 else "compute_bound"
    load, more = load_facets(settings, "b64", concurrency=64)
    values.update(more)
    facets = [("verdict", verdict(d.speedup)), ("reason", reason), ("verify_state", state), ("largest_words", largest),
              *load]  # fmt: skip
    return composed("rung_b64", facets, values)


def ngram_ladder(settings: SiteSettings) -> Said:
    """Whether n-gram lookup gains on every rung that fits at the default prompt length, under
    the ideal engine and under the profile fitted to vLLM."""
    ev = one(settings, concurrency=LADDER, drafter="ngram")
    fits = fitting(ev.fits)
    s = np.asarray(ev.speedup)[fits]
    fitted = one(settings, concurrency=LADDER, drafter="ngram", engine=FITTED_ENGINE)
    f = np.asarray(fitted.speedup)[fits]
    rungs = LADDER[fits]
    top = int(np.flatnonzero(fits)[-1])
    reason = largest_extra(fitted.spec_time_parts[top], fitted.base_time_parts[top])
    stop, fitted_stop = first_rung(rungs, not_faster(s)), first_rung(rungs, not_faster(f))
    values = {
        "ngram_min": times(np.min(s)),
        "ngram_max": times(np.max(s)),
        "ngram_stop": rung(stop),
        "fitted_top": speedup_at(f[-1], concurrency=int(rungs[-1]), drafter="ngram", engine=FITTED_ENGINE),
        "fitted_stop": rung(fitted_stop),
    }
    facets = [
        ("outcome", "every" if stop is None else "stops"),
        ("fitted", "every" if fitted_stop is None else "stops"),
        ("fitted_reason", reason if reason == "target_arithmetic" else "other"),
    ]
    return composed("ngram_ladder", facets, values)


def rung_b1024(settings: SiteSettings) -> Said:
    """At 1,024 sequences: how much idle arithmetic the verify pass has left, and what that
    does to the draft model and to n-gram lookup."""
    d = one(settings, concurrency=1024)
    ngram = one(settings, concurrency=1024, drafter="ngram").speedup
    idle = float(d.verify_idle)
    level = "gone" if idle <= 0.01 else "scarce" if idle < 0.15 else "left"
    values = {
        "speedup_b1024": speedup_at(d.speedup, concurrency=1024),
        "ngram_b1024": speedup_at(ngram, concurrency=1024, drafter="ngram"),
    }
    load, more = load_facets(settings, "b1024", concurrency=1024)
    values.update(more)
    facets = [("verdict", verdict(d.speedup)), ("idle", level), ("n_gram", verdict(ngram)), *load]
    return composed("rung_b1024", facets, values)


def short_context(settings: SiteSettings) -> Said:
    """With 256-token prompts: where the verify pass turns compute-bound, and n-gram lookup there."""
    ev = one(settings, concurrency=LADDER, context=256, drafter="ngram")
    bound = first_rung(LADDER, np.asarray(ev.verify_idle) <= 0.01)
    stop = first_rung(LADDER, not_faster(ev.speedup))
    values = {"bound_from": rung(bound), "ngram_stop": rung(stop)}
    gains = "none" if stop == LADDER[0] else verdict(ev.speedup[-1])  # no rung gains: nothing stops
    outcome = f"{'never' if bound is None else 'bound'}:{gains}"
    return claim("short_context", outcome, values)


def long_context(settings: SiteSettings) -> Said:
    """At 8,192-token prompts: the draft's share, the verdict at 64 sequences, and where the
    draft model stops gaining against the default prompt length."""
    d = one(settings, concurrency=64, context=8192)
    stop_long = first_rung(LADDER, not_faster(one(settings, concurrency=LADDER, context=8192).speedup))
    stop_default = first_rung(LADDER, not_faster(one(settings, concurrency=LADDER).speedup))
    if stop_long is None:
        order = "never_both" if stop_default is None else "never_long"
    elif stop_long == 1 and stop_default == 1:
        order = "none_both"
    else:
        far = 10**9
        a, b = stop_long, stop_default or far
        order = "earlier" if a < b else "same" if a == b else "later"
    values = {"stop_long": rung(stop_long), "stop_default": rung(stop_default)}
    facets = [("verdict", verdict(d.speedup)), ("stop", order)]
    return composed("long_context", facets, values)


CLAIMS = (rung_b1, rung_b64, ngram_ladder, rung_b1024, short_context, long_context)
