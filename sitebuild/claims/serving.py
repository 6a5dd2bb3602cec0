"""Claims of sections 7 and 8: serving at a per-user latency target, what vLLM's counters say
at 64 sequences, and the fitted vLLM profile against the ideal model."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sitebuild.claims.core import Said, composed
from sitebuild.claims.words import first_rung, fitting, load_facets, not_faster, rung, settings_gamma, verdict
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import Number, name, plain, speedup_at, times
from specmodel.model.drafters import drafter_label
from specmodel.model.scenario import GAMMAS
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


#: Every concurrency from one sequence to the top of the ladder: the best batch at a rate per
#: user is searched on all of them, not only on the ladder's powers of two.
EVERY_CONCURRENCY = np.arange(1, int(LADDER[-1]) + 1)


def served(
    settings: SiteSettings, target: float, drafters: tuple[str, ...], gamma: int | None = None
) -> dict[str, Served]:
    """Plain decoding and each drafter at the per-user ``target`` (tokens/s), searched over
    :data:`EVERY_CONCURRENCY` (at ``gamma``: the article's when None)."""
    b = EVERY_CONCURRENCY
    extra = {} if gamma is None else {"gamma": gamma}
    out: dict[str, Served] = {}
    for drafter in drafters:
        ev = one(settings, concurrency=b, drafter=drafter, **extra)
        if not out:
            plain_fits = one(settings, concurrency=b, drafter="ngram").fits  # no draft memory
            i = best_at_rate(ev.base_tokens_per_s_per_sequence, ev.base_tokens_per_s, plain_fits, target)
            out[PLAIN] = Served("plain decoding", int(b[i]) if i >= 0 else 0,
                                float(ev.base_tokens_per_s[i]) if i >= 0 else 0.0)  # fmt: skip
        i = best_at_rate(ev.spec_tokens_per_s_per_sequence, ev.spec_tokens_per_s, ev.fits, target)
        out[drafter] = Served(drafter_label(drafter), int(b[i]) if i >= 0 else 0,
                              float(ev.spec_tokens_per_s[i]) if i >= 0 else 0.0)  # fmt: skip
    return out


def best_gamma_served(settings: SiteSettings, target: float, drafter: str) -> tuple[int, Served]:
    """The γ of :data:`GAMMAS` at which ``drafter`` serves the most tokens/s at the per-user
    ``target``, and what it serves."""
    options = [(g, served(settings, target, (drafter,), gamma=g)[drafter]) for g in GAMMAS]
    return max(options, key=lambda o: (o[1].total, -o[0]))


def _values(settings: SiteSettings, target: float) -> tuple[dict[str, Number], dict[str, Served]]:
    draft = settings.deployment.draft
    table = served(settings, target, (draft,))
    p, d = table[PLAIN].total, table[draft].total
    values: dict[str, Number] = {
        "target": plain(target, 0),
        "draft": name(get_architecture(draft).name),
        "t_plain": plain(p, 0),
        "t_draft": plain(d, 0),
        "ratio": times(d / p) if p > 0 else Number(float("nan"), "any multiple of"),
    }
    g, best = best_gamma_served(settings, target, draft)
    values.update(g_best=plain(g, 0), b_best=plain(best.sequences, 0))
    table["best"] = best
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


def _tuned(table: dict[str, Served]) -> str:
    """How the draft model at its best γ for the target compares with plain decoding there."""
    return _order({PLAIN: table[PLAIN], "best": table["best"]}, "best")


def latency_high(settings: SiteSettings) -> Said:
    """Who serves most at a fast per-user target (plain decoding's rate at 8 sequences), at the
    article's γ and at the draft model's best γ for that target."""
    values, table = _values(settings, latency_target(settings, HIGH_TARGET_RUNG))
    values["gamma"] = plain(settings_gamma(settings), 0)
    return composed("latency_high", [("outcome", _order(table, settings.deployment.draft)), ("tuned", _tuned(table))],
                    values)  # fmt: skip


def latency_low(settings: SiteSettings) -> Said:
    """Who serves most at a slower per-user target (plain decoding's rate at 64 sequences);
    ``same`` where that rate rounds down to the fast target, so there is no second target."""
    low = latency_target(settings, LOW_TARGET_RUNG)
    if low >= latency_target(settings, HIGH_TARGET_RUNG):
        return composed("latency_low", [("outcome", "same"), ("tuned", "same")], {"target": plain(low, 0)})
    values, table = _values(settings, low)
    values["gamma"] = plain(settings_gamma(settings), 0)
    return composed("latency_low", [("outcome", _order(table, settings.deployment.draft)), ("tuned", _tuned(table))],
                    values)  # fmt: skip


def counters_b64(settings: SiteSettings) -> Said:
    """vLLM's counters at 64 sequences against the speedup there."""
    d = one(settings, concurrency=64)
    values = {"speedup_b64": speedup_at(d.speedup, concurrency=64)}
    load, more = load_facets(settings, "c64", concurrency=64)
    values.update(more)
    return composed("counters_b64", [("outcome", verdict(d.speedup)), load[0]], values)


def engines(settings: SiteSettings) -> Said:
    """The vLLM profile against the ideal model on the rungs of the default ladder that fit."""
    v = one(settings, concurrency=LADDER, engine="vllm").speedup
    i = one(settings, concurrency=LADDER, engine="ideal").speedup
    fits = fitting(one(settings, concurrency=LADDER).fits)  # the rungs that fit
    sv, si = first_rung(LADDER[fits], not_faster(v[fits])), first_rung(LADDER[fits], not_faster(i[fits]))
    if sv is None or si is None:
        order = "never" if sv is None and si is None else "vllm_never" if sv is None else "ideal_never"
    else:
        order = "earlier" if sv < si else "same" if sv == si else "later"
    values = {
        "v1": speedup_at(v[0], engine="vllm"),
        "i1": speedup_at(i[0], engine="ideal"),
        "stop_vllm": rung(sv),
        "stop_ideal": rung(si),
    }
    level = "less" if v[0] < i[0] else "more"
    gains = verdict(v[0]) == verdict(i[0]) == "faster" and (sv is None) == (si is None)
    story = f"same_story:{level}" if gains else "different"
    curves = np.asarray(
        one(settings, concurrency=LADDER[:, None], gamma=np.array(GAMMAS)[None, :], engine="vllm").speedup
    )
    tuned = first_rung(LADDER[fits], not_faster(curves.max(axis=1)[fits]))
    values["tuned_stop"] = rung(tuned)
    facets = [("level", level), ("stop", order), ("tuned", "always" if tuned is None else "stops"), ("story", story)]
    return composed("engines", facets, values)


CLAIMS = (latency_high, latency_low, counters_b64, engines)
