"""What every section's numbers share: the model at the build's settings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.numbers.text import Number, percent, plain
from specmodel.acceptance_fit import FittedSeries, held_out_errors
from specmodel.measurements import error_summary
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import CONCURRENCY_LADDER, ENGINES

LADDER = np.array(CONCURRENCY_LADDER)


def one(settings: SiteSettings, **scenario: Any) -> Evaluation:
    """The evaluation of a scenario (defaults: the article's) at the build's settings."""
    return evaluate(settings=settings, **scenario)


def fitted_series_numbers(prefix: str, fitted: Callable[[str], list[FittedSeries]]) -> dict[str, Number]:
    """Measurements whose acceptance is fitted at batch 1 per series (``fitted``: engine -> its
    series): how many rows, series and held-out rows, and each engine's median, 90th-percentile
    and worst error on the held-out rows, as ``<engine>_<prefix>_<stat>_error`` and
    ``<prefix>_rows``, ``<prefix>_series``, ``<prefix>_held_out``."""
    n: dict[str, Number] = {}
    for engine in ENGINES:
        fits = fitted(engine)
        errors = held_out_errors(fits)
        for key, value in error_summary(errors).items():
            n[f"{engine}_{prefix}_{key}_error"] = percent(value, 1)
        n[f"{prefix}_rows"] = plain(sum(len(f.rows) for f in fits), 0)
        n[f"{prefix}_series"] = plain(len(fits), 0)
        n[f"{prefix}_held_out"] = plain(len(errors), 0)
    return n
