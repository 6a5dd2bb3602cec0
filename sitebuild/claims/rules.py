"""Claims of section 9, the rules of thumb: each rule states what the model gives where the
rule applies, and its advice follows the outcome."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed, phrase
from sitebuild.claims.serving import HIGH_TARGET_RUNG, LOW_TARGET_RUNG, PLAIN, _order, latency_target, served
from sitebuild.claims.words import first_rung, not_faster, rung, verdict
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import name, plain, speedup_at, times
from specmodel.model.scenario import GAMMAS
from specmodel.model.specs import get_architecture

G = np.array(GAMMAS)


def rule_few(settings: SiteSettings) -> Said:
    """The draft model at its best gamma at one and at eight sequences."""
    c1 = one(settings, gamma=G).speedup
    c8 = one(settings, concurrency=8, gamma=G).speedup
    b1, b8 = int(G[np.argmax(c1)]), int(G[np.argmax(c8)])
    values = {
        "draft": name(get_architecture(settings.deployment.draft).name),
        "best_b1": plain(b1, 0),
        "speedup_b1": speedup_at(c1.max(), gamma=b1),
        "best_b8": plain(b8, 0),
        "speedup_b8": speedup_at(c8.max(), concurrency=8, gamma=b8),
    }
    outcome = f"faster:{verdict(c8.max())}" if verdict(c1.max()) == "faster" else "not_faster"
    return claim("rule_few", outcome, values)


#: The rungs of "tens to hundreds of sequences" for the draft model and for cache-free drafters.
DRAFT_RUNGS, FREE_RUNGS = (16, 32, 64), (16, 32, 64, 128, 256)
FREE_DRAFTERS = ("ngram", "eagle", "eagle-32k")


def rule_many(settings: SiteSettings) -> Said:
    """The draft model at gamma 1-2 on 16-64 sequences, cache-free drafters at gamma 2-3 on
    16-256, and where the draft model stops gaining at gamma 1."""
    b = np.array(DRAFT_RUNGS)
    draft = one(settings, concurrency=b[:, None], gamma=np.array([1, 2])[None, :]).speedup.max(axis=1)
    f = np.array(FREE_RUNGS)
    free = one(settings, concurrency=f[:, None, None], drafter=np.array(FREE_DRAFTERS)[None, :, None],
               gamma=np.array([2, 3])[None, None, :]).speedup.max(axis=2)  # fmt: skip
    stop = first_rung(LADDER, not_faster(one(settings, concurrency=LADDER, gamma=1).speedup))
    verdicts = {verdict(s) for s in draft}
    draft_words = "pays" if verdicts == {"faster"} else "none" if "faster" not in verdicts else "mixed"
    free_words = "free_better" if free.min() > draft.max() else "free_mixed"
    values = {
        "draft_low": times(draft.min()),
        "draft_high": times(draft.max()),
        "free_low": times(free.min()),
        "free_high": times(free.max()),
        "stop_g1": rung(stop),
    }
    facets = [
        ("draft", draft_words),
        ("free", free_words),
        ("stop", "never" if stop is None else "stops"),
        ("advice", free_words),
    ]
    return composed("rule_many", facets, values)  # fmt: skip


_LATENCY_LEAD = (
    "**A target per user rather than total throughput:** compare configurations at that target, not at equal "
    "concurrency (section 7)."
)


def rule_latency(settings: SiteSettings) -> Said:
    """Which side the two latency targets of section 7 favour."""
    draft = settings.deployment.draft
    high, low = latency_target(settings, HIGH_TARGET_RUNG), latency_target(settings, LOW_TARGET_RUNG)
    th, tl = served(settings, high, (draft,)), served(settings, low, (draft,))
    ratio = times(th[draft].total / th[PLAIN].total) if th[PLAIN].total > 0 else phrase("none")
    values = {"high": plain(high, 0), "low": plain(low, 0), "ratio_high": ratio}
    slow = "same" if low >= high else _order(tl, draft)
    facets = [("fast_target", _order(th, draft)), ("slow_target", slow),
              ("end", "any")]  # fmt: skip
    return composed("rule_latency", facets, values)


CLAIMS = (rule_few, rule_many, rule_latency)
