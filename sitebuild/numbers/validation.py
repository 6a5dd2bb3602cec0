"""The validation page's held-out draft-model measurements: how many, and each engine's errors
on the rows at batches above 1 (each series' acceptance fitted at batch 1 under that engine)."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.figures import validation as page
from sitebuild.numbers.common import fitted_series_numbers
from sitebuild.numbers.text import Number


def draft_model_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The draft-model measurements: rows, series, held-out rows, and each engine's median,
    90th-percentile and worst error on the held-out rows."""
    return fitted_series_numbers("draft_measured", lambda engine: page.draft_model_fitted(settings, engine))
