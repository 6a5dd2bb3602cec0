"""How well a server's own small-batch runs calibrate the model for its large batches: every
series of the public measurements (one source, drafter, deployment and workload) measured at
batch 1, 16, 64 and 128 is fitted from its batch 1 and 16 rows as ``specmodel fit-engine``
fits (:func:`specmodel.engine_fit.fit_runs`, starting from the settings' public
profile), and its batch 64 and 128 rows are predicted by the calibrated and by the public
profile. Used by the site (the worked example and the validation page's summary) and by
``benchmarks/bench_calibrate_server.py``, so that both print the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from specmodel.acceptance_fit import fit_mean_acceptance_length
from specmodel.engine_fit import fit_runs, held_out_errors
from specmodel.measurements import (
    MEASUREMENTS_FILE,
    MULTIGPU_MEASUREMENTS_FILE,
    Measurement,
    load_measurements,
)
from specmodel.model.settings import Settings

#: The batches the fit sees and those it predicts.
SMALL, LARGE = (1, 16), (64, 128)
#: The measurement files whose series are calibrated: one GPU, four GPUs.
CALIBRATED_FILES = (MEASUREMENTS_FILE, MULTIGPU_MEASUREMENTS_FILE)


@dataclass(frozen=True)
class SeriesResult:
    """One series: its rows, the large rows' errors under the calibrated and the public
    profile (``predicted / measured - 1``), and the constants the fit set."""

    members: list[Measurement]
    fitted_errors: np.ndarray
    public_errors: np.ndarray
    fitted: dict[str, float]

    @property
    def name(self) -> str:
        """Source, drafter, deployment and workload, for a printed line."""
        r = self.members[0]
        return (f"{r.citation} | {r.method} k={r.num_speculative_tokens} | {r.target} "
                f"tp{r.tensor_parallel} | {r.prompt_tokens}/{r.output_tokens}")  # fmt: skip


def series_indices(rows: list[Measurement]) -> list[list[int]]:
    """The rows by source, drafter, deployment and workload (indices, in file order), keeping the
    series measured at every batch of :data:`SMALL` and :data:`LARGE`."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(r.series, []).append(i)
    wanted = set(SMALL + LARGE)
    return [g for g in groups.values() if wanted <= {rows[i].batch for i in g}]


def series(rows: list[Measurement], engine: str, settings: Settings) -> list[list[Measurement]]:
    """The rows of each of :func:`series_indices`; where no acceptance was published (the
    four-GPU source), the mean acceptance length fitted at batch 1 under the public profile
    (:func:`specmodel.acceptance_fit.fit_mean_acceptance_length`), so that batch 1 says nothing
    of the engine there and the fit rests on batch 16."""
    return [_with_acceptance([rows[i] for i in g], engine, settings) for g in series_indices(rows)]


def _with_acceptance(rows: list[Measurement], engine: str, settings: Settings) -> list[Measurement]:
    """``rows``, each given the acceptance fitted at the series' smallest batch if none has one."""
    if all(r.mean_acceptance_length or r.per_position_acceptance for r in rows):
        return rows
    length = fit_mean_acceptance_length(min(rows, key=lambda r: r.batch), engine, settings)
    return [r.model_copy(update={"mean_acceptance_length": length}) for r in rows]


def small_to_large(members: list[Measurement], engine: str, settings: Settings) -> SeriesResult:
    """Fit ``engine``'s profile to the :data:`SMALL` rows, predict the :data:`LARGE` ones
    (:func:`specmodel.engine_fit.held_out_errors`), and the public profile's errors on them."""
    groups = [None if r.batch in SMALL else "large" if r.batch in LARGE else "neither" for r in members]
    fitted: dict[str, float] = {}

    def calibrated(rows: list[Measurement]) -> Settings:
        fit = fit_runs(settings.engine(engine), [r for r in rows if r.batch in SMALL], [])
        fitted.update(fit.fitted)
        return settings.with_engine(replace(fit.profile, key=engine))

    large = [g == "large" for g in groups if g is not None]
    fitted_errors = held_out_errors(members, groups, calibrated, engine)[large]
    public_errors = held_out_errors(members, groups, lambda rows: settings, engine)[large]
    return SeriesResult(members, fitted_errors, public_errors, fitted)


def all_series(files: list[Path], engine: str, settings: Settings) -> list[SeriesResult]:
    """:func:`small_to_large` of every series in ``files``."""
    rows = [r for f in files if f.exists() for r in load_measurements(f)]
    return [small_to_large(members, engine, settings) for members in series(rows, engine, settings)]


def median_errors(results: list[SeriesResult]) -> tuple[float, float]:
    """Median |error| over every predicted row: calibrated, public."""
    fitted = np.concatenate([np.abs(r.fitted_errors) for r in results])
    public = np.concatenate([np.abs(r.public_errors) for r in results])
    return float(np.median(fitted)), float(np.median(public))
