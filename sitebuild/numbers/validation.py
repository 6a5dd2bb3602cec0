"""The validation page's held-out draft-model measurements: how many, and each engine's errors
on the rows at batches above 1 (each series' acceptance fitted at batch 1 under that engine)."""

from __future__ import annotations

import math

from sitebuild.config import SiteSettings
from sitebuild.figures import validation as page
from sitebuild.numbers.common import fitted_series_numbers
from sitebuild.numbers.text import Number, percent, plain
from specmodel.uncertainty import LEVELS, log_bounds, public_record


def draft_model_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The draft-model measurements: rows, series, held-out rows, and each engine's median,
    90th-percentile and worst error on the held-out rows."""
    return fitted_series_numbers("draft_measured", lambda engine: page.draft_model_fitted(settings, engine))


def interval_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The speedup intervals of the public profile, as ``make fit`` recorded them
    (:mod:`specmodel.uncertainty`; a test checks they are a fresh computation): how many held-out
    residuals they are made of, the share of held-out residuals inside each level's interval made
    of the other folds, and the 80% interval of an EAGLE-3 head at batch 33 up, as factors."""
    record = public_record()
    n: dict[str, Number] = {"interval_residuals": plain(record["residuals"], 0)}
    for level, share in zip(record["coverage"]["levels"], record["coverage"]["inside"], strict=True):
        n[f"interval_coverage_{round(level * 100)}"] = percent(share, 0)
    lo, hi = log_bounds(record["groups"]["fused_head 33+"]["residuals"], max(LEVELS))
    n["interval_fused_head_large_low"] = plain(math.exp(lo))
    n["interval_fused_head_large_high"] = plain(math.exp(hi))
    return n
