"""Section 3 and the appendix, how many tokens an iteration yields: the closed form and its
ceiling, and how rarely the falling profile's last guess reaches the output."""

from __future__ import annotations

import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.numbers.common import one
from sitebuild.numbers.text import Number, plain
from specmodel.model import acceptance as acc
from specmodel.model.scenario import DEFAULTS


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The i.i.d. closed form at the default alpha, and the falling profile's per-position
    acceptance (the gamma curves are claims, :mod:`sitebuild.claims.gamma`)."""
    alpha = DEFAULTS["alpha"]
    n: dict[str, Number] = {"ceiling_a75": plain(acc.tokens_per_iteration_ceiling(alpha), 0)}
    for g in (4, 10):
        n[f"tokens_g{g}"] = plain(float(acc.closed_form_tokens_per_iteration(alpha, g)))
    n["survive_17_every"] = plain(1 / float(acc.per_position_acceptance(alpha, 17, 1.0)[-1]), 0)
    d = one(settings)
    n["fourth_used_every"] = plain(1 / float(np.ravel(d.per_position)[3]), 1)
    n["falling_ratio"] = plain(settings.constants.FALLING_RATIO)
    return n
