"""The model against the figures the article quotes.

A calibration table has one row per quoted figure: the scenario (concurrency, context,
gamma, drafter, acceptance, alpha), the ``metric`` (a readout key of
:mod:`specmodel.readouts` or ``per_position_<j>``), the article's ``value`` and a
``tolerance`` that is ``relative`` or ``absolute`` (``kind``). The article's own table ships
with the package (``specmodel/data/calibration.csv``, the figures the sources quote); every row is
validated (:class:`CalibrationRow`) before anything is computed.
"""

from __future__ import annotations

import csv
import io
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from specmodel.errors import SpecModelError
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import AXES
from specmodel.model.settings import Settings
from specmodel.readouts import BY_KEY, readout_arrays
from specmodel.safe_input import excerpt, read_limited_text, validated_records

#: The scenario of each row (the article's engine, ``ideal``, on one card, is implied).
SCENARIO_COLUMNS = [axis for axis in AXES if axis not in ("engine", "tensor_parallel")]
COLUMNS = (*SCENARIO_COLUMNS, "metric", "value", "tolerance", "kind", "note")
PACKAGED = "calibration.csv"


class CalibrationRow(BaseModel):
    """One quoted figure and the scenario it belongs to (scenario values are checked by the
    model when the table is compared)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    concurrency: int
    context: int
    gamma: int
    drafter: str
    acceptance: str
    alpha: float
    metric: str
    value: float = Field(allow_inf_nan=False)
    tolerance: float = Field(ge=0, allow_inf_nan=False)
    kind: Literal["relative", "absolute"]
    note: str = ""

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, metric: str) -> str:
        position = metric.removeprefix("per_position_")
        if metric in BY_KEY or (position != metric and position.isdigit() and int(position) >= 1):
            return metric
        raise ValueError(f"unknown metric; allowed: {', '.join(BY_KEY)}, per_position_<j>")


def _rows(text: str, where: str) -> list[CalibrationRow]:
    reader = csv.DictReader(io.StringIO(text))
    header = tuple(reader.fieldnames or ())
    if header != COLUMNS:
        raise SpecModelError(f"{where}: columns must be {', '.join(COLUMNS)}; got {excerpt(', '.join(header), 120)}")
    records = list(reader)
    for number, record in enumerate(records, start=2):
        if None in record or any(v is None for v in record.values()):
            raise SpecModelError(f"{where} line {number}: expected {len(COLUMNS)} fields")
    rows = validated_records(records, CalibrationRow, where)
    if not rows:
        raise SpecModelError(f"{where} has a header but no rows")
    return rows


def load_table(path: str | Path | None = None) -> list[CalibrationRow]:
    """A calibration table: ``path``, or the article's table shipped with the package.
    Every row is validated; a bad file is one :class:`~specmodel.errors.SpecModelError`."""
    if path is None:
        text = resources.files("specmodel.data").joinpath(PACKAGED).read_text(encoding="utf-8")
        where = f"specmodel/data/{PACKAGED}"
    else:
        where = f"calibration table {excerpt(str(path), 200)}"
        text = read_limited_text(Path(path), where)
    return _rows(text, where)


class ComparedRow(CalibrationRow):
    """A row with the model's value: the relative error, the error in the row's own tolerance
    kind, the share of the tolerance used and whether the row is within it."""

    model: float
    relative_error: float
    error: float
    within: bool
    tolerance_used: float


def model_values(table: list[CalibrationRow], settings: Settings | None = None) -> np.ndarray:
    """The model's value of each row's metric, in the metric's display units."""
    ev = evaluate(**{c: np.array([getattr(r, c) for r in table]) for c in SCENARIO_COLUMNS}, settings=settings)
    readouts = readout_arrays(ev)
    out = np.empty(len(table))
    for i, row in enumerate(table):
        if row.metric.startswith("per_position_"):
            j = int(row.metric.removeprefix("per_position_"))
            if j > row.gamma:
                raise SpecModelError(f"row {i + 1}: metric {row.metric} is past the row's gamma {row.gamma}")
            out[i] = ev.per_position[i, j - 1]
        else:
            out[i] = readouts[row.metric][i]
    return out


def compare(table: list[CalibrationRow], settings: Settings | None = None) -> list[ComparedRow]:
    """Each row with the model's value and its error (:class:`ComparedRow`). A zero tolerance
    means exact agreement at the article's printed precision."""
    out = []
    for row, model in zip(table, model_values(table, settings), strict=True):
        relative, absolute = abs(model - row.value) / abs(row.value), abs(model - row.value)
        error = relative if row.kind == "relative" else absolute
        within = error <= row.tolerance if row.tolerance > 0 else error < 1e-9
        used = error / row.tolerance if row.tolerance > 0 else 0.0
        signed = (model - row.value) / abs(row.value)
        out.append(ComparedRow(**row.model_dump(), model=float(model), error=float(error), within=bool(within),
                               relative_error=float(signed), tolerance_used=float(used)))  # fmt: skip
    return out


def _scenario_label(row: CalibrationRow) -> str:
    return f"B={row.concurrency}, T={row.context}, γ={row.gamma}, {row.drafter}, {row.acceptance}, α={row.alpha}"


def markdown_table(compared: list[ComparedRow]) -> str:
    """The comparison as a Markdown table: scenario, metric, article, model, relative error,
    tolerance, within."""
    lines = [
        "| scenario | metric | article | model | relative error | tolerance | within |",
        "| --- | --- | ---: | ---: | ---: | ---: | :---: |",
    ]
    for row in compared:
        tol = f"±{row.tolerance:g}" + (" (rel.)" if row.kind == "relative" else " (abs.)")
        lines.append(
            f"| {_scenario_label(row)} | `{row.metric}` | {row.value:g} | {row.model:.4g} | "
            f"{100 * row.relative_error:+.2f}% | {tol} | {'yes' if row.within else '**no**'} |"
        )
    return "\n".join(lines)


def text_table(compared: list[ComparedRow]) -> str:
    """The comparison as aligned plain text, one row per quoted figure: the scenario, the
    metric, the article's value, the model's, the relative error and whether it is within
    the row's tolerance."""
    header = ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha", "metric", "value", "model",
              "relative_error", "within")  # fmt: skip
    rows = [
        (str(r.concurrency), str(r.context), str(r.gamma), r.drafter, r.acceptance, f"{r.alpha:g}", r.metric,
         f"{r.value:g}", f"{r.model:.6g}", f"{r.relative_error:+.4f}", "yes" if r.within else "no")
        for r in compared
    ]  # fmt: skip
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    return "\n".join(" ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)) for line in (header, *rows))
