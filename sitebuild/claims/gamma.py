"""Claims of section 5, choosing gamma: the speedup against gamma at one and at 32 sequences,
and how the best gamma moves with the batch."""

from __future__ import annotations

import numpy as np

from sitebuild.claims.core import Said, claim, composed
from sitebuild.claims.words import first_rung, fitting, not_faster, rung, verdict
from sitebuild.config import SiteSettings
from sitebuild.numbers.common import LADDER, one
from sitebuild.numbers.text import name, plain
from specmodel.model.scenario import GAMMAS
from specmodel.model.specs import get_architecture

G = np.array(GAMMAS)


def _shape(curve: np.ndarray) -> tuple[str, int]:
    best = int(G[np.argmax(curve)])
    return ("rises" if best == G[-1] else "falls" if best == G[0] else "peak"), best


def gamma_b1(settings: SiteSettings) -> Said:
    """Where the speedup against gamma at one sequence peaks."""
    curve = one(settings, gamma=G).speedup
    shape, best = _shape(curve)
    values = {"draft": name(get_architecture(settings.deployment.draft).name), "best": plain(best, 0)}
    return claim("gamma_b1", shape, values)


def gamma_b32(settings: SiteSettings) -> Said:
    """The gamma curve at 32 sequences against the one at one sequence."""
    c1 = one(settings, gamma=G).speedup
    c32 = one(settings, concurrency=32, gamma=G).speedup
    best1, best32 = int(G[np.argmax(c1)]), int(G[np.argmax(c32)])
    where = "lower" if np.all(c32 < c1) else "not_lower"
    order = "earlier" if best32 < best1 else "same" if best32 == best1 else "later"
    values = {"best": plain(best32, 0)}
    facets = [("level", where), ("peak", order),
              ("end", verdict(c32[-1]))]  # fmt: skip
    return composed("gamma_b32", facets, values)


def gamma_by_concurrency(settings: SiteSettings) -> Said:
    """The best gamma at 1, 32 and 64 sequences, and the first rung where no gamma gains."""
    curves = one(settings, concurrency=LADDER[:, None], gamma=G[None, :]).speedup
    best = G[np.argmax(curves, axis=1)]
    top = curves.max(axis=1)
    i32, i64 = int(np.flatnonzero(LADDER == 32)[0]), int(np.flatnonzero(LADDER == 64)[0])
    fits = fitting(one(settings, concurrency=LADDER).fits)
    no_gain = first_rung(LADDER[fits], not_faster(top[fits]))  # on the rungs where the deployment fits
    b1, b32, b64 = int(best[0]), int(best[i32]), int(best[i64])
    shape = "flat" if b1 == b32 == b64 else "shrinks" if b1 >= b32 >= b64 else "other"
    end = "never" if no_gain is None else "none" if no_gain == 1 else "ends"
    values = {"best_b1": plain(b1, 0), "best_b64": plain(b64, 0), "no_gain": rung(no_gain)}
    facets = [("shape", shape), ("end", end)]
    return composed("gamma_by_concurrency", facets, values)


CLAIMS = (gamma_b1, gamma_b32, gamma_by_concurrency)
