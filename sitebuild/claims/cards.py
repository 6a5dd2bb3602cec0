"""Claims of the page "Other cards": the deployment's model pair on the cards it compares."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed, phrase
from sitebuild.claims.words import first_rung, not_faster, rung
from sitebuild.config import SiteSettings
from sitebuild.figures.cards import COMPARED_HARDWARE
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import Number, percent, plain, times


def _listed(numbers: list[Number]) -> Number:
    """``a, b and c`` (one text for several values)."""
    texts = [n.text for n in numbers]
    return phrase(", ".join(texts[:-1]) + " and " + texts[-1])


def _spread(values: np.ndarray) -> float:
    return float(np.max(values) / np.min(values) - 1)


def cards_ratio(settings: SiteSettings) -> Said:
    """Whether the speedup at 1 and 64 sequences is the same on the compared cards."""
    s = np.array(
        [[float(one(settings, concurrency=b, hardware=h).speedup) for h in COMPARED_HARDWARE] for b in (1, 64)]
    )
    same = len({times(x).text for x in s[0]}) == 1 and len({times(x).text for x in s[1]}) == 1
    outcome = "same" if same else "close" if max(_spread(s[0]), _spread(s[1])) < 0.03 else "differ"
    values = {
        "s1": times(s[0, 0]) if same else _listed([times(x) for x in s[0]]),
        "s64": times(s[1, 0]) if same else _listed([times(x) for x in s[1]]),
    }
    return claim("cards_ratio", outcome, values)


def cards_ridge(settings: SiteSettings) -> Said:
    """Where the draft model stops gaining on each card, and how far the cards differ at 1,024 sequences."""
    stops = [first_rung(LADDER, not_faster(one(settings, concurrency=LADDER, hardware=h).speedup))
             for h in COMPARED_HARDWARE]  # fmt: skip
    draft = np.array([float(one(settings, concurrency=1024, hardware=h).speedup) for h in COMPARED_HARDWARE])
    ngram = np.array([float(one(settings, concurrency=1024, hardware=h, drafter="ngram").speedup)
                      for h in COMPARED_HARDWARE])  # fmt: skip
    values = {
        "stop": rung(stops[0]),
        "stops": _listed([rung(b) for b in stops]),
        "draft_1024": _listed([times(x) for x in draft]),
        "ngram_1024": _listed([times(x) for x in ngram]),
    }
    ridge = "differ" if max(_spread(draft), _spread(ngram)) >= 0.03 else "same"
    facets = [("stop_rungs", "same" if len(set(stops)) == 1 else "differ"), ("ridge", ridge)]
    return composed("cards_ridge", facets, values)


def _capacity_outcome(plain_b: np.ndarray, shares: np.ndarray) -> str:
    """``none_fit`` if no card holds one plain sequence, ``some_unfit`` if one of them does not,
    else whether the draft's share of the batch is about the same on every card."""
    if not plain_b.any():
        return "none_fit"
    if not plain_b.all():
        return "some_unfit"
    return "same_share" if float(np.ptp(shares)) < 0.03 else "differ_share"


def cards_capacity(settings: SiteSettings) -> Said:
    """The first rung that does not fit and the batch the draft model displaces, per card."""
    evs = [one(settings, hardware=h) for h in COMPARED_HARDWARE]
    first = [first_rung(LADDER, ~np.asarray(one(settings, concurrency=LADDER, hardware=h).fits))
             for h in COMPARED_HARDWARE]  # fmt: skip
    plain_b = np.array([float(e.max_concurrency_without_draft) for e in evs])
    draft_b = np.array([float(e.max_concurrency) for e in evs])
    shares = np.where(plain_b > 0, 1 - draft_b / np.where(plain_b > 0, plain_b, 1), 0.0)
    values = {
        "first_unfit": _listed([rung(b) for b in first]),
        "plain": _listed([plain(b, 0) for b in plain_b]),
        "draft": _listed([plain(b, 0) for b in draft_b]),
        "shares": _listed([percent(x) for x in shares]),
    }
    return claim("cards_capacity", _capacity_outcome(plain_b, shares), values)


CLAIMS = (cards_ratio, cards_ridge, cards_capacity)
