"""Claims of sections 7 and 8: serving at a per-user latency target, what vLLM's counters say
at 64 sequences, and the fitted vLLM profile against the ideal model."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sitebuild.claims.core import Said, claim, composed
from sitebuild.claims.words import first_rung, not_faster, rung, verdict
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import Number, name, percent, plain, speedup_at, times
from specmodel.model.drafters import drafter_label
from specmodel.model.serving import best_at_rate
from specmodel.model.specs import get_architecture

#: The rungs whose plain per-user rate, rounded down to ten tokens/s, sets the two latency
#: targets the article reads off: a fast interactive service and a busy one.
HIGH_TARGET_RUNG, LOW_TARGET_RUNG = 8, 64
PLAIN = "plain"


@dataclass(frozen=True)
class Served:
    """The most tokens/s a configuration serves while every user gets at least a target rate."""

    label: str
    sequences: int  #: the concurrency that does it (0: none meets the target)
    total: float  #: tokens/s in all


def latency_target(settings: SiteSettings, rung_b: int) -> float:
    """Plain decoding's per-user rate at ``rung_b`` sequences, rounded down to ten tokens/s."""
    rate = float(one(settings, concurrency=rung_b).base_tokens_per_s_per_sequence)
    return max(10.0, math.floor(rate / 10.0) * 10.0)


def served(settings: SiteSettings, target: float, drafters: tuple[str, ...]) -> dict[str, Served]:
    """Plain decoding and each drafter at the per-user ``target`` (tokens/s), on the ladder."""
    out: dict[str, Served] = {}
    for drafter in drafters:
        ev = one(settings, concurrency=LADDER, drafter=drafter)
        if not out:
            plain_fits = one(settings, concurrency=LADDER, drafter="ngram").fits  # no draft memory
            i = best_at_rate(ev.base_tokens_per_s_per_sequence, ev.base_tokens_per_s, plain_fits, target)
            out[PLAIN] = Served("plain decoding", int(LADDER[i]) if i >= 0 else 0,
                                float(ev.base_tokens_per_s[i]) if i >= 0 else 0.0)  # fmt: skip
        i = best_at_rate(ev.spec_tokens_per_s_per_sequence, ev.spec_tokens_per_s, ev.fits, target)
        out[drafter] = Served(drafter_label(drafter), int(LADDER[i]) if i >= 0 else 0,
                              float(ev.spec_tokens_per_s[i]) if i >= 0 else 0.0)  # fmt: skip
    return out


def _values(settings: SiteSettings, target: float) -> tuple[dict[str, Number], dict[str, Served]]:
    draft = settings.deployment.draft
    table = served(settings, target, (draft, "ngram"))
    values: dict[str, Number] = {"target": plain(target, 0), "draft": name(get_architecture(draft).name)}
    for key, label in ((PLAIN, "plain"), (draft, "draft"), ("ngram", "ngram")):
        s = table[key]
        values[f"b_{label}"] = plain(s.sequences, 0)
        values[f"t_{label}"] = plain(s.total, 0)
    p, d = table[PLAIN].total, table[draft].total
    values["ratio"] = times(d / p) if p > 0 else Number(float("nan"), "any multiple of")
    return values, table


def _order(table: dict[str, Served], draft: str) -> str:
    p, d = table[PLAIN], table[draft]
    if d.sequences == 0 and p.sequences == 0:
        return "none"
    if d.sequences == 0:
        return "plain_only"
    if p.sequences == 0:
        return "spec_only"
    return "spec_more" if d.total > 1.03 * p.total else "plain_more" if p.total > 1.03 * d.total else "level"


def latency_high(settings: SiteSettings) -> Said:
    """Who serves most at a fast per-user target (plain decoding's rate at 8 sequences)."""
    values, table = _values(settings, latency_target(settings, HIGH_TARGET_RUNG))
    return claim("latency_high", _order(table, settings.deployment.draft), values)


def latency_low(settings: SiteSettings) -> Said:
    """Who serves most at a slower per-user target (plain decoding's rate at 64 sequences);
    ``same`` where that rate rounds down to the fast target, so there is no second target."""
    low = latency_target(settings, LOW_TARGET_RUNG)
    if low >= latency_target(settings, HIGH_TARGET_RUNG):
        return claim("latency_low", "same", {"target": plain(low, 0)})
    values, table = _values(settings, low)
    return claim("latency_low", _order(table, settings.deployment.draft), values)


def counters_b64(settings: SiteSettings) -> Said:
    """vLLM's counters at 64 sequences against the speedup there."""
    d = one(settings, concurrency=64)
    values = {
        "mal_b64": plain(d.mean_acceptance_length),
        "slower_b64": percent(1 - float(d.speedup)),
        "speedup_b64": speedup_at(d.speedup, concurrency=64),
    }
    return claim("counters_b64", verdict(d.speedup), values)


def engines(settings: SiteSettings) -> Said:
    """The vLLM profile against the ideal model on the default ladder."""
    v = one(settings, concurrency=LADDER, engine="vllm").speedup
    i = one(settings, concurrency=LADDER, engine="ideal").speedup
    sv, si = first_rung(LADDER, not_faster(v)), first_rung(LADDER, not_faster(i))
    if sv is None or si is None:
        order = "never" if sv is None and si is None else "vllm_never" if sv is None else "ideal_never"
    else:
        order = "earlier" if sv < si else "same" if sv == si else "later"
    values = {
        "v1": speedup_at(v[0], engine="vllm"),
        "i1": speedup_at(i[0], engine="ideal"),
        "v64": speedup_at(v[6], engine="vllm", concurrency=64),
        "i64": speedup_at(i[6], engine="ideal", concurrency=64),
        "stop_vllm": rung(sv),
        "stop_ideal": rung(si),
    }
    level = "less" if v[0] < i[0] else "more"
    gains = verdict(v[0]) == verdict(i[0]) == "faster" and (sv is None) == (si is None)
    story = f"same_story:{level}" if gains else "different"
    facets = [("level", level), ("stop", order), ("story", story)]
    return composed("engines", facets, values)


CLAIMS = (latency_high, latency_low, counters_b64, engines)
