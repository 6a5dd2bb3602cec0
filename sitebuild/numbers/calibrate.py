"""The worked example of "Calibrate it to your server" (docs/cli.md) and the validation page's
summary of it: every public series measured at batch 1, 16, 64 and 128, fitted from its
batch 1 and 16 rows and predicting 64 and 128 (:mod:`sitebuild.server_calibration`, as
``make fit`` records it).

The example series is chosen by a rule, not by its result: the first in the one-GPU
measurements file that was measured at all four batches. Every series so measured, on one
GPU and on four, is summarised too, so that the example is read against the whole.
"""

from __future__ import annotations

import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.fit_records import read_calibration
from sitebuild.numbers.text import Number, name, percent, plain, times
from sitebuild.paths import MEASUREMENTS, SERVER_CALIBRATION
from sitebuild.server_calibration import CALIBRATED_FILES, LARGE, SMALL, SeriesResult, median_errors
from specmodel.measurements import MULTIGPU_MEASUREMENTS_FILE


def example_numbers(result: SeriesResult) -> dict[str, Number]:
    """The example series: what it is, its measured speedups, both predictions and errors."""
    members, fitted, public = result.members, result.fitted_errors, result.public_errors
    first = members[0]
    n: dict[str, Number] = {
        "calib_method": name(first.method),
        "calib_gamma": plain(first.num_speculative_tokens, 0),
        "calib_target": name(first.target),
        "calib_hardware": name(first.hardware),
        "calib_dataset": name(first.dataset),
        "calib_source": name(first.citation),
        "calib_fitted_names": name(", ".join(result.fitted) or "none"),
        "calib_example_fitted_error": percent(float(np.median(np.abs(fitted))), 1),
        "calib_example_public_error": percent(float(np.median(np.abs(public))), 1),
    }
    large = [r for r in members if r.batch in LARGE]
    for row, f, p in zip(large, fitted, public, strict=True):
        n[f"calib_measured_{row.batch}"] = times(row.measured_speedup)
        n[f"calib_fitted_{row.batch}"] = times(row.measured_speedup * (1 + f))
        n[f"calib_public_{row.batch}"] = times(row.measured_speedup * (1 + p))
    for batch in SMALL:
        n[f"calib_measured_{batch}"] = times(next(r.measured_speedup for r in members if r.batch == batch))
    return n


def numbers(settings: SiteSettings) -> dict[str, Number]:
    """The worked example, and the median errors over every series measured at the four
    batches: on one GPU, on four, and all together (as ``make fit`` records them for the
    public profile: the site never fits)."""
    recorded = read_calibration(SERVER_CALIBRATION, CALIBRATED_FILES)
    one, four = recorded[MEASUREMENTS.name], recorded[MULTIGPU_MEASUREMENTS_FILE.name]
    if not one:
        return {}
    n = example_numbers(one[0])
    for label, results in (("one_gpu", one), ("four_gpus", four), ("overall", one + four)):
        if results:
            fitted, public = median_errors(results)
            n[f"calib_{label}_series"] = plain(len(results), 0)
            n[f"calib_{label}_fitted_error"] = percent(fitted, 1)
            n[f"calib_{label}_public_error"] = percent(public, 1)
    return n
