"""The EAGLE-3 trade-off (:mod:`sitebuild.engine_tradeoff`) as ``make fit`` records it, in
``sitebuild/data/eagle3-tradeoff.json``: each width's fitted step times and errors, and the
band where every target is met. The fits take about forty seconds, so the site reads the
record instead of refitting at every build, as it reads the profile's held-out errors from
``engines.toml``; ``python tools/fit_engine.py --check`` and tests/test_engine_tradeoff.py
check that the record is what a fresh computation gives.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from sitebuild.engine_tradeoff import Band, Tradeoff
from specmodel.errors import SpecModelError

DIGITS = 6  #: significant digits recorded


def _round(x: float) -> float | str:
    return "inf" if math.isinf(x) else float(f"{x:.{DIGITS}g}")


def record_text(results: tuple[Tradeoff, ...], band: Band | None, measurements: Path) -> str:
    """The record as JSON text (sorted keys, no NaN: byte-identical for identical inputs)."""
    data: dict[str, Any] = {
        "measurements_sha256": hashlib.sha256(measurements.read_bytes()).hexdigest(),
        "widths": [
            {
                "width": _round(r.width),
                "head_s": _round(r.head_s),
                "eagle3_s": _round(r.eagle3_s),
                "errors": {s: [_round(v) for v in e] for s, e in r.errors.items()},
            }
            for r in results
        ],  # fmt: skip
        "band": None if band is None else {k: _round(getattr(band, k)) for k in ("low", "high", "middle", "margin")},
    }
    return json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n"


def read_record(path: Path, measurements: Path) -> tuple[tuple[Tradeoff, ...], Band | None]:
    """The recorded widths and band; :class:`SpecModelError` if they were computed on other
    measurements than ``measurements`` (then ``make fit`` redoes them)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data["measurements_sha256"] != hashlib.sha256(measurements.read_bytes()).hexdigest():
        raise SpecModelError(
            f"{path.name} was computed on other measurements than {measurements.name}: "
            "run python tools/fit_engine.py (make fit) to redo it"
        )
    results = tuple(
        Tradeoff(float(w["width"]), float(w["head_s"]), float(w["eagle3_s"]),
                 {s: (float(e[0]), float(e[1]), float(e[2])) for s, e in w["errors"].items()})
        for w in data["widths"]
    )  # fmt: skip
    band = None if data["band"] is None else Band(**{k: float(v) for k, v in data["band"].items()})
    return results, band


def _numbers(value: Any) -> list[float]:
    """Every number in a parsed record, in order (``"inf"`` as infinity, a missing band as none)."""
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _numbers(value[k])]
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    if value is None or isinstance(value, str) and value != "inf":  # the checksum, a missing band
        return []
    return [float(value)]


def same_record(text: str, other: str, tolerance: float = 1e-4) -> bool:
    """Whether two records agree: the same checksum and shape, every number within a relative
    ``tolerance``, so that a last digit a fit leaves to the machine does not count as a change."""
    a, b = json.loads(text), json.loads(other)
    if a["measurements_sha256"] != b["measurements_sha256"] or (a["band"] is None) != (b["band"] is None):
        return False
    x, y = _numbers(a), _numbers(b)
    return len(x) == len(y) and all(math.isclose(p, q, rel_tol=tolerance, abs_tol=1e-12) for p, q in zip(x, y))
