"""What ``make fit`` records beside the profile for the site to read: the EAGLE-3 trade-off
(:mod:`sitebuild.engine_tradeoff`) in ``sitebuild/data/eagle3-tradeoff.json``, the refits at
other memory efficiencies (:mod:`sitebuild.memory_sensitivity`) in
``sitebuild/data/memory-sensitivity.json``, the small-batch fit and each source's own
EAGLE-3 step (:mod:`sitebuild.public_fit`) in ``sitebuild/data/subset-fits.json``, and each
public series calibrated from its small batches (:mod:`sitebuild.server_calibration`) in
``sitebuild/data/server-calibration.json``. The fits
take seconds to minutes, so the site reads the records and never fits, as it reads the
profile's held-out errors from ``engines.toml``; ``python tools/fit_engine.py --check`` and the tests check that each
record is what a fresh computation gives. Each record carries the checksum of the
measurements it was computed on, and one computed on other measurements is refused.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sitebuild.engine_tradeoff import Band, Tradeoff
from sitebuild.memory_sensitivity import Refit
from sitebuild.public_fit import SmallBatch
from sitebuild.server_calibration import SeriesResult, series_indices
from specmodel.errors import SpecModelError
from specmodel.measurements import load_measurements

DIGITS = 6  #: significant digits recorded


def _round(x: float) -> float | str:
    return "inf" if math.isinf(x) else float(f"{x:.{DIGITS}g}")


def _triples(errors: dict[str, tuple[float, float, float]]) -> dict[str, list[float | str]]:
    return {s: [_round(v) for v in e] for s, e in errors.items()}


def _read_triples(errors: dict[str, list[float]]) -> dict[str, tuple[float, float, float]]:
    return {s: (float(e[0]), float(e[1]), float(e[2])) for s, e in errors.items()}


def _checksum(measurements: Path | Sequence[Path]) -> str:
    """The SHA-256 of the measurement file, or of several files' bytes one after another."""
    files = [measurements] if isinstance(measurements, Path) else list(measurements)
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()


def _dump(data: dict[str, Any], measurements: Path | Sequence[Path]) -> str:
    """A record as JSON text with the measurements' checksum (sorted keys, no NaN:
    byte-identical for identical inputs)."""
    data = {"measurements_sha256": _checksum(measurements), **data}
    return json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n"


def _load(path: Path, measurements: Path | Sequence[Path]) -> dict[str, Any]:
    """A record's data; :class:`SpecModelError` if it is missing or was computed on other
    measurements than ``measurements`` (then ``make fit`` redoes it)."""
    redo = "run python tools/fit_engine.py (make fit) to redo it"
    if not path.is_file():
        raise SpecModelError(f"{path.name} is missing: {redo}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("measurements_sha256") != _checksum(measurements):
        names = measurements.name if isinstance(measurements, Path) else ", ".join(m.name for m in measurements)
        raise SpecModelError(f"{path.name} was computed on other measurements than {names}: {redo}")
    return data


def tradeoff_text(results: tuple[Tradeoff, ...], band: Band | None, measurements: Path) -> str:
    """The trade-off's record: each width's fitted step times and errors, and the band."""
    widths = [
        {"width": _round(r.width), "head_s": _round(r.head_s), "eagle3_s": _round(r.eagle3_s),
         "errors": _triples(r.errors)}
        for r in results
    ]  # fmt: skip
    found = None if band is None else {k: _round(getattr(band, k)) for k in ("low", "high", "middle", "margin")}
    return _dump({"widths": widths, "band": found}, measurements)


def read_tradeoff(path: Path, measurements: Path) -> tuple[tuple[Tradeoff, ...], Band | None]:
    """The recorded widths and band (:func:`_load`'s refusals)."""
    data = _load(path, measurements)
    results = tuple(
        Tradeoff(float(w["width"]), float(w["head_s"]), float(w["eagle3_s"]), _read_triples(w["errors"]))
        for w in data["widths"]
    )
    band = None if data["band"] is None else Band(**{k: float(v) for k, v in data["band"].items()})
    return results, band


def sensitivity_text(results: tuple[Refit, ...], measurements: Path) -> str:
    """The memory-efficiency record: each refit's constants, plain step, errors and largest relative SE."""
    refits = [
        {"efficiency": _round(r.efficiency), "values": {k: _round(v) for k, v in r.values.items()},
         "plain_step_s": _round(r.plain_step_s), "errors": _triples(r.errors),
         "largest_relative_se": _round(r.largest_relative_se)}
        for r in results
    ]  # fmt: skip
    return _dump({"refits": refits}, measurements)


def read_sensitivity(path: Path, measurements: Path) -> tuple[Refit, ...]:
    """The recorded refits (:func:`_load`'s refusals); constants by name."""
    return tuple(
        Refit(
            efficiency=float(r["efficiency"]),
            values={k: float(v) for k, v in r["values"].items()},
            plain_step_s=float(r["plain_step_s"]),
            errors=_read_triples(r["errors"]),
            largest_relative_se=float(r["largest_relative_se"]),
        )
        for r in _load(path, measurements)["refits"]
    )


def subset_fits_text(small: SmallBatch, steps: dict[str, tuple[float, float]], measurements: Path) -> str:
    """The record of the fits on a subset of the rows: the small-batch fit (its overlap exponent
    and the larger batches' errors, with and without the token budget) and each source's own
    EAGLE-3 step (``[t_h, t_h3]`` in seconds, by source)."""
    fitted = {"overlap": _round(small.overlap), "errors": [_round(e) for e in small.errors],
              "even_errors": [_round(e) for e in small.even_errors]}  # fmt: skip
    by_source = {s: [_round(h), _round(h3)] for s, (h, h3) in steps.items()}
    return _dump({"small_batch": fitted, "eagle3_step_by_source": by_source}, measurements)


def read_subset_fits(path: Path, measurements: Path) -> tuple[SmallBatch, dict[str, tuple[float, float]]]:
    """The recorded small-batch fit and EAGLE-3 steps by source (:func:`_load`'s refusals)."""
    data = _load(path, measurements)
    small = data["small_batch"]
    fitted = SmallBatch(float(small["overlap"]), tuple(map(float, small["errors"])),
                        tuple(map(float, small["even_errors"])))  # fmt: skip
    return fitted, {s: (float(h), float(h3)) for s, (h, h3) in data["eagle3_step_by_source"].items()}


def same_record(text: str, other: str, tolerance: float = 1e-4) -> bool:
    """Whether two records agree: the same checksum and keys, every number within a relative
    ``tolerance``, so that a last digit a fit leaves to the machine does not count as a change."""
    return same_values(json.loads(text), json.loads(other), tolerance)


def same_values(a: Any, b: Any, tolerance: float = 1e-4, absolute: float = 1e-12) -> bool:
    """Whether two parsed records (or engines.toml tables) agree: the same keys, lengths and
    strings, every number within a relative ``tolerance`` or an ``absolute`` difference.

    >>> same_values({"x": [1.0, "inf"], "band": None}, {"x": [1.00001, "inf"], "band": None})
    True
    >>> same_values({"x": 1.0, "band": None}, {"x": 1.0, "band": {"low": 1.8}})
    False
    """
    if isinstance(a, dict) and isinstance(b, dict):
        return sorted(a) == sorted(b) and all(same_values(a[k], b[k], tolerance, absolute) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_values(x, y, tolerance, absolute) for x, y in zip(a, b, strict=True))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=absolute)
    return bool(a == b)


def calibration_text(results: dict[str, list[SeriesResult]], files: Sequence[Path]) -> str:
    """The record of every public series calibrated from its small batches, by measurement file
    (``files``' names; the results in the order of
    :func:`sitebuild.server_calibration.series_indices`): its rows (indices in the file), the
    constants the fit set (name and value, in the fit's order) and the large batches' errors
    under the calibrated and the public profile."""
    by_file = {}
    for path in files:
        groups = series_indices(load_measurements(path))
        by_file[path.name] = [
            {
                "rows": g,
                "fitted": [[k, _round(v)] for k, v in r.fitted.items()],
                "fitted_errors": [_round(e) for e in r.fitted_errors],
                "public_errors": [_round(e) for e in r.public_errors],
            }
            for g, r in zip(groups, results[path.name], strict=True)
        ]
    return _dump({"series": by_file}, files)


def read_calibration(path: Path, files: Sequence[Path]) -> dict[str, list[SeriesResult]]:
    """The recorded calibrations by measurement file name (:func:`_load`'s refusals), each
    series with its rows as the file holds them."""
    data = _load(path, files)["series"]
    out = {}
    for f in files:
        rows = load_measurements(f)
        out[f.name] = [
            SeriesResult(
                [rows[i] for i in s["rows"]],
                np.array(s["fitted_errors"], dtype=float),
                np.array(s["public_errors"], dtype=float),
                {k: float(v) for k, v in s["fitted"]},
            )
            for s in data[f.name]
        ]
    return out


#: How each held-out split reads in the README's table.
SPLIT_LABELS = {
    "leave_one_source_out": "held out: leave one source out (fit on one, predict the other)",
    "leave_one_workload_out": "held out: leave one source and workload out",
    "small_to_large": "held out: fit on batch 1 and 16, predict 64 and 128",
    "in_sample": "in sample: fitted on every row",
}


def readme_block(held: dict[str, tuple[float, float, float]], relative_se: Sequence[float], corr: float) -> str:
    """The README's table of the recorded held-out and in-sample errors (median / p90 / worst
    of |predicted / measured - 1|) and the constants' identifiability."""
    out = ["| `vllm` profile | median | 90th percentile | worst |", "| --- | ---: | ---: | ---: |"]
    for split, label in SPLIT_LABELS.items():
        if split in held:
            out.append(f"| {label} | " + " | ".join(f"{v:.1%}" for v in held[split]) + " |")
    out.append("")
    out.append(
        f"Largest relative standard error of a fitted constant {max(relative_se, default=0.0):.0%}; "
        f"largest correlation between two {abs(corr):.2f}."
    )
    return "\n".join(out)
