"""The validation page's held-out draft-model measurements: how many, and each engine's errors
on the rows at batches above 1 (each series' acceptance fitted at batch 1 under that engine)."""

from __future__ import annotations

from sitebuild.config import SiteSettings
from sitebuild.figures import validation as page
from sitebuild.numbers.text import Number, percent, plain
from specmodel.acceptance_fit import held_out_errors
from specmodel.measurements import error_summary
from specmodel.model.scenario import ENGINES


def draft_model_numbers(settings: SiteSettings) -> dict[str, Number]:
    """The draft-model measurements: rows, series, held-out rows, and each engine's median,
    90th-percentile and worst error on the held-out rows."""
    n: dict[str, Number] = {}
    for engine in ENGINES:
        fits = page.draft_model_fitted(settings, engine)
        errors = held_out_errors(fits)
        for key, value in error_summary(errors).items():
            n[f"{engine}_draft_measured_{key}_error"] = percent(value, 1)
        n["draft_measured_rows"] = plain(sum(len(f.rows) for f in fits), 0)
        n["draft_measured_series"] = plain(len(fits), 0)
        n["draft_measured_held_out"] = plain(len(errors), 0)
    return n
