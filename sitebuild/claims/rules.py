"""Claims of section 9, the rules of thumb: each rule states what the model gives where the
rule applies, and its advice follows the outcome."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, composed
from sitebuild.claims.serving import (
    HIGH_TARGET_RUNG,
    LOW_TARGET_RUNG,
    PLAIN,
    _order,
    best_gamma_served,
    latency_target,
    served,
)
from sitebuild.claims.words import FITTED_ENGINE, first_rung, fitting, not_faster, rung, verdict
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import name, plain, speedup_at
from specmodel.model.scenario import GAMMAS
from specmodel.model.specs import get_architecture

G = np.array(GAMMAS)


def _best_curve(settings: SiteSettings, concurrency: int, engine: str | None = None) -> tuple[int, float]:
    """The best γ of :data:`GAMMAS` for the draft model at ``concurrency`` and its speedup."""
    extra = {} if engine is None else {"engine": engine}
    curve = np.asarray(one(settings, concurrency=concurrency, gamma=G, **extra).speedup)
    return int(G[np.argmax(curve)]), float(curve.max())


def _few(b1: float, b8: float) -> str:
    return f"faster:{verdict(b8)}" if verdict(b1) == "faster" else "not_faster"


def rule_few(settings: SiteSettings) -> Said:
    """The draft model at its best gamma at one and at eight sequences, under the ideal engine
    and the profile fitted to vLLM."""
    (b1, s1), (b8, s8) = _best_curve(settings, 1), _best_curve(settings, 8)
    (f1, fs1), (f8, fs8) = _best_curve(settings, 1, FITTED_ENGINE), _best_curve(settings, 8, FITTED_ENGINE)
    values = {
        "draft": name(get_architecture(settings.deployment.draft).name),
        "best_b1": plain(b1, 0),
        "speedup_b1": speedup_at(s1, gamma=b1),
        "best_b8": plain(b8, 0),
        "speedup_b8": speedup_at(s8, concurrency=8, gamma=b8),
        "fitted_best_b1": plain(f1, 0),
        "fitted_speedup_b1": speedup_at(fs1, gamma=f1, engine=FITTED_ENGINE),
        "fitted_best_b8": plain(f8, 0),
        "fitted_speedup_b8": speedup_at(fs8, concurrency=8, gamma=f8, engine=FITTED_ENGINE),
    }
    return composed("rule_few", [("outcome", _few(s1, s8)), ("fitted", _few(fs1, fs8))], values)


#: The rungs of "tens to hundreds of sequences" for the draft model and for cache-free drafters
#: (each kept where the deployment fits).
DRAFT_RUNGS, FREE_RUNGS = (16, 32, 64), (16, 32, 64, 128, 256)
FREE_DRAFTERS = ("ngram", "eagle", "eagle-32k")


def _many(settings: SiteSettings, engine: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The draft model's best speedup at γ 1-2 on each rung of :data:`DRAFT_RUNGS` that fits, the
    cache-free drafters' best at γ 2-3 on each rung of :data:`FREE_RUNGS` where all of them fit,
    and the largest such rung."""
    b, f = np.array(DRAFT_RUNGS), np.array(FREE_RUNGS)
    d = one(settings, concurrency=b[:, None], gamma=np.array([1, 2])[None, :], engine=engine)
    draft = np.asarray(d.speedup).max(axis=1)[fitting(np.asarray(d.fits)[:, 0])]
    e = one(settings, concurrency=f[:, None, None], drafter=np.array(FREE_DRAFTERS)[None, :, None],
            gamma=np.array([2, 3])[None, None, :], engine=engine)  # fmt: skip
    fits = fitting(np.asarray(e.fits).all(axis=(1, 2)))
    free = np.asarray(e.speedup).max(axis=2)[fits]
    return draft, free, int(f[fits][-1]) if fits.any() else int(f[0])


def _draft_words(draft: np.ndarray) -> str:
    verdicts = {verdict(s) for s in draft}
    return "pays" if verdicts == {"faster"} else "none" if "faster" not in verdicts else "mixed"


def rule_many(settings: SiteSettings) -> Said:
    """Whether the draft model at gamma 1-2 pays on 16-64 sequences and whether cache-free
    drafters at gamma 2-3 pay more on 16 sequences up to the most that fit on the ladder (the
    largest such rung, ``free_top``), and where the draft model stops gaining at gamma 1; under
    the ideal engine and the profile fitted to vLLM."""
    draft, free, top = _many(settings, "ideal")
    f_draft, f_free, _ = _many(settings, FITTED_ENGINE)
    g1 = one(settings, concurrency=LADDER, gamma=1)
    fits = fitting(g1.fits)
    stop = first_rung(LADDER[fits], not_faster(np.asarray(g1.speedup)[fits]))  # on the rungs that fit
    free_words = "free_better" if free.min() > draft.max() else "free_mixed"
    f_free_words = "free_better" if f_free.min() > f_draft.max() else "free_mixed"
    values = {"free_top": plain(top, 0), "stop_g1": rung(stop)}
    facets = [
        ("draft", _draft_words(draft)),
        ("free", free_words),
        ("fitted", f"{_draft_words(f_draft)}:{f_free_words}"),
        ("stop", "never" if stop is None else "stops"),
        ("advice", free_words if free_words == f_free_words else "engines_differ"),
    ]
    return composed("rule_many", facets, values)


def rule_latency(settings: SiteSettings) -> Said:
    """Which side the two latency targets of section 7 favour."""
    draft = settings.deployment.draft
    high, low = latency_target(settings, HIGH_TARGET_RUNG), latency_target(settings, LOW_TARGET_RUNG)
    th, tl = served(settings, high, (draft,)), served(settings, low, (draft,))
    slow = "same" if low >= high else _order(tl, draft)
    g, best = best_gamma_served(settings, low, draft)
    tuned = "same" if low >= high else _order({PLAIN: tl[PLAIN], "best": best}, "best")
    values = {"g_best_low": plain(g, 0)}
    facets = [("fast_target", _order(th, draft)), ("slow_target", slow), ("slow_tuned", tuned), ("end", "any")]
    return composed("rule_latency", facets, values)


CLAIMS = (rule_few, rule_many, rule_latency)
