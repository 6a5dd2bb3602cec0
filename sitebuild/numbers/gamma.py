"""Section 2, how many tokens an iteration yields: the closed form and its ceiling, and the
falling profile's per-position acceptance."""

from __future__ import annotations

import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, percent, plain
from specmodel.model import acceptance as acc
from specmodel.model.scenario import DEFAULTS


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The i.i.d. closed form at the default alpha, and the falling profile's per-position
    acceptance (the gamma curves are claims, :mod:`sitebuild.claims.gamma`)."""
    alpha = DEFAULTS["alpha"]
    n: dict[str, Number] = {"ceiling_a75": plain(acc.tokens_per_iteration_ceiling(alpha), 0)}
    e4, e10, e17 = (float(acc.closed_form_tokens_per_iteration(alpha, g)) for g in (4, 10, 17))
    n["tokens_g4"] = plain(e4)
    n["tokens_g10"] = plain(e10)
    n["tokens_g17"] = plain(e17)
    n["tokens_g10_gain"] = percent(e10 / e4 - 1)
    n["survive_17_every"] = plain(1 / float(acc.per_position_acceptance(alpha, 17, 1.0)[-1]), 0)
    d = one(settings)
    for j, u in enumerate(np.ravel(d.per_position), start=1):
        n[f"per_pos_{j}"] = plain(u, 3)
    n["fourth_used_every"] = plain(1 / float(np.ravel(d.per_position)[3]), 1)
    n["falling_ratio"] = plain(settings.constants.FALLING_RATIO)
    return n
