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

RULE_FEW = {
    "faster:faster": "**Under ten sequences at once** (an interactive tool, an internal service): a good draft "
    "model pays. {draft} at γ = {best_b1} gives {speedup_b1} at one sequence, and at eight sequences its best γ, "
    "{best_b8}, still gives {speedup_b8}.",
    "faster:even": "**Under ten sequences at once** (an interactive tool, an internal service): a draft model pays "
    "at one sequence ({speedup_b1} at γ = {best_b1}) but is about even by eight ({speedup_b8} at its best γ, "
    "{best_b8}); a drafter without a cache is the safer choice.",
    "faster:slower": "**Under ten sequences at once** (an interactive tool, an internal service): a draft model "
    "pays at one sequence ({speedup_b1} at γ = {best_b1}) but loses by eight ({speedup_b8} at its best γ, "
    "{best_b8}); a drafter without a cache is the safer choice.",
    "not_faster": "**Under ten sequences at once** (an interactive tool, an internal service): here even at one "
    "sequence a draft model does not pay ({speedup_b1} at its best γ, {best_b1}); try a drafter without a cache, "
    "and measure.",
}


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
    return claim("rule_few", outcome, values, RULE_FEW)


RULE_MANY_DRAFT = {
    "pays": "**Tens to hundreds of sequences:** a separate draft model can still pay at a small γ ({draft_low} to "
    "{draft_high} at 16 to 64 sequences with γ of 1 or 2),",
    "mixed": "**Tens to hundreds of sequences:** a separate draft model pays at some of these batches but not all "
    "({draft_low} to {draft_high} at 16 to 64 sequences with γ of 1 or 2),",
    "none": "**Tens to hundreds of sequences:** a separate draft model no longer pays ({draft_low} to {draft_high} "
    "at 16 to 64 sequences even with γ of 1 or 2),",
}
RULE_MANY_FREE = {
    "free_better": "while a drafter without a cache pays more at the same α: {free_low} to {free_high} for n-gram "
    "lookup and the EAGLE heads at γ of 2 or 3, from 16 to 256 sequences.",
    "free_mixed": "and a drafter without a cache gives {free_low} to {free_high} at the same α (n-gram lookup and "
    "the EAGLE heads at γ of 2 or 3, from 16 to 256 sequences), not always more.",
}
RULE_MANY_STOP = {
    "stops": "At γ = 1 the draft model stops gaining from {stop_g1} sequences, and its cache takes room from the "
    "batch (section 6).",
    "never": "At γ = 1 the draft model gains at every rung, but its cache takes room from the batch (section 6).",
}
RULE_MANY_ADVICE = {
    "free_better": "Prefer a drafter without a cache at γ of 2 or 3, and confirm with an A/B test.",
    "free_mixed": "Which one pays more depends on the batch; measure both with an A/B test.",
}

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
        ("draft", draft_words, RULE_MANY_DRAFT),
        ("free", free_words, RULE_MANY_FREE),
        ("stop", "never" if stop is None else "stops", RULE_MANY_STOP),
        ("advice", free_words, RULE_MANY_ADVICE),
    ]
    return composed("rule_many", facets, values)  # fmt: skip


_LATENCY_LEAD = (
    "**A target per user rather than total throughput:** compare configurations at that target, not at equal "
    "concurrency (section 7)."
)
RULE_LATENCY_HIGH = {
    "spec_more": _LATENCY_LEAD + " A fast target ({high} tokens/s per user) favours speculation, which serves "
    "{ratio_high} the throughput of plain decoding there;",
    "spec_only": _LATENCY_LEAD + " At a fast target ({high} tokens/s per user) only speculation keeps up at all;",
    "level": _LATENCY_LEAD + " At a fast target ({high} tokens/s per user) speculation and plain decoding serve "
    "about the same;",
    "plain_more": _LATENCY_LEAD + " Even at a fast target ({high} tokens/s per user) plain decoding serves more;",
    "plain_only": _LATENCY_LEAD + " At a fast target ({high} tokens/s per user) only plain decoding fits and keeps up;",
    "none": _LATENCY_LEAD + " Here nothing fits and meets a fast target ({high} tokens/s per user);",
}
RULE_LATENCY_LOW = {
    "plain_more": "at a slower one ({low}) a bigger batch without the draft model serves more.",
    "level": "at a slower one ({low}) the two serve about the same.",
    "spec_more": "at a slower one ({low}) speculation still serves more.",
    "spec_only": "at a slower one ({low}) still only speculation keeps up.",
    "plain_only": "at a slower one ({low}) only plain decoding fits and keeps up.",
    "none": "nor a slower one ({low}).",
    "same": "plain decoding's rate per user at 64 sequences rounds down to the same target, so there is no slower "
    "one to compare.",
}
RULE_LATENCY_END = {"": "Know which of the two your service is paid for before you compare any numbers."}


def rule_latency(settings: SiteSettings) -> Said:
    """Which side the two latency targets of section 7 favour."""
    draft = settings.deployment.draft
    high, low = latency_target(settings, HIGH_TARGET_RUNG), latency_target(settings, LOW_TARGET_RUNG)
    th, tl = served(settings, high, (draft,)), served(settings, low, (draft,))
    ratio = times(th[draft].total / th[PLAIN].total) if th[PLAIN].total > 0 else phrase("none")
    values = {"high": plain(high, 0), "low": plain(low, 0), "ratio_high": ratio}
    slow = "same" if low >= high else _order(tl, draft)
    facets = [("fast target", _order(th, draft), RULE_LATENCY_HIGH), ("slow target", slow, RULE_LATENCY_LOW),
              ("end", "", RULE_LATENCY_END)]  # fmt: skip
    return composed("rule_latency", facets, values)


CLAIMS = (rule_few, rule_many, rule_latency)
