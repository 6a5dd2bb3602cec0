"""Measurements whose acceptance was not published: fit it at batch 1, predict the rest.

A series is one deployment and workload measured at several batch sizes (same source,
target, hardware, tensor parallelism, method, gamma and lengths). Its acceptance is a
property of the drafter and the text, not of the batch, so one number fitted where the
batch leaves the most to speculation, batch 1, must predict the others: the mean
acceptance length M at which the model's speedup under the engine equals the measured
one (M in (1, gamma + 1); the ``same`` profile that gives M, as
:class:`specmodel.Scenario` takes ``mean_acceptance_length``). The larger batches are
then a test of the cost model alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from specmodel.measurements import Measurement
from specmodel.model.breakeven import first_crossing
from specmodel.model.evaluate import evaluate
from specmodel.model.settings import Settings
from specmodel.model.types import FloatArray

#: Mean acceptance lengths searched, as fractions of the way from 1 to gamma + 1 (200 points:
#: the fitted lengths agree with 2,000 points to four decimals).
_STEPS = np.linspace(0.0005, 0.9995, 200)


@dataclass(frozen=True)
class FittedSeries:
    """One series: its rows (batch 1 first), the fitted mean acceptance length, and the
    model's speedup for every row with it (NaN where no acceptance reproduces batch 1)."""

    rows: tuple[Measurement, ...]
    mean_acceptance_length: float
    predicted: FloatArray


def group_series(rows: Iterable[Measurement]) -> list[tuple[Measurement, ...]]:
    """Rows grouped into series, in first-seen order, each sorted by batch."""
    groups: dict[tuple[object, ...], list[Measurement]] = {}
    for row in rows:
        groups.setdefault(row.series, []).append(row)
    return [tuple(sorted(members, key=lambda r: r.batch)) for members in groups.values()]


def fit_mean_acceptance_length(row: Measurement, engine: str, settings: Settings) -> float:
    """The mean acceptance length M at which the model's speedup for ``row`` under ``engine``
    equals the measured one: the first crossing of the speedup, sampled at 200 values of
    M between 1 and gamma + 1 and linearly interpolated
    (:func:`specmodel.model.breakeven.first_crossing`); NaN if none reaches it."""
    gamma = row.num_speculative_tokens
    lengths = 1.0 + gamma * _STEPS
    fields = row.scenario(mean_acceptance_length=1.5)
    fields["mean_acceptance_length"] = lengths
    speedup = evaluate(**fields, engine=engine, settings=settings).speedup
    return first_crossing(lengths, speedup, row.measured_speedup)


def fit_series(rows: Iterable[Measurement], engine: str, settings: Settings | None = None) -> list[FittedSeries]:
    """Every series of ``rows`` with its acceptance fitted at its smallest batch and the
    model's speedup for each of its rows under ``engine``."""
    settings = settings or Settings()
    out = []
    for members in group_series(rows):
        length = fit_mean_acceptance_length(members[0], engine, settings)
        predicted = np.full(len(members), np.nan)
        if not np.isnan(length):
            for i, row in enumerate(members):
                predicted[i] = float(evaluate(**row.scenario(length), engine=engine, settings=settings).speedup)
        out.append(FittedSeries(members, length, predicted))
    return out


def held_out_errors(fitted: list[FittedSeries]) -> FloatArray:
    """``predicted / measured - 1`` for every row but the one each series was fitted on."""
    errors = [
        series.predicted[i] / row.measured_speedup - 1.0
        for series in fitted
        for i, row in enumerate(series.rows)
        if i > 0
    ]
    return np.asarray(errors, dtype=float)
