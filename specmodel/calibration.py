"""The model against the figures the article quotes.

A calibration table has one row per quoted figure: the scenario (concurrency, context,
gamma, drafter, acceptance, alpha), the ``metric`` (a readout key of
:mod:`specmodel.readouts` or ``per_position_<j>``), the article's ``value`` and a
``tolerance`` that is ``relative`` or ``absolute`` (``kind``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from specmodel.model import evaluate
from specmodel.readouts import BY_KEY, readout_arrays

SCENARIO_COLUMNS = ["concurrency", "context", "gamma", "drafter", "acceptance", "alpha"]


def load_table(path: str | Path) -> pd.DataFrame:
    """Read a calibration CSV (empty notes stay empty strings)."""
    return pd.read_csv(path, keep_default_na=False, dtype={"note": str})


def model_values(table: pd.DataFrame) -> np.ndarray:
    """The model's value of each row's metric, in the metric's display units."""
    ev = evaluate(*(table[c].to_numpy() for c in SCENARIO_COLUMNS))
    readouts = readout_arrays(ev)
    out = np.empty(len(table))
    for i, metric in enumerate(table["metric"]):
        if metric.startswith("per_position_"):
            out[i] = ev.per_position[i, int(metric.removeprefix("per_position_")) - 1]
        elif metric in BY_KEY:
            out[i] = readouts[metric][i]
        else:
            raise KeyError(f"unknown metric {metric!r} in calibration table")
    return out


def compare(table: pd.DataFrame) -> pd.DataFrame:
    """The table with the model's value, the relative error, the error in the row's own
    tolerance kind, the share of the tolerance used and whether the row is within it."""
    out = table.copy()
    model = model_values(table)
    article = table["value"].to_numpy(dtype=float)
    relative = np.abs(model - article) / np.abs(article)
    absolute = np.abs(model - article)
    error = np.where(table["kind"] == "relative", relative, absolute)
    tolerance = table["tolerance"].to_numpy(dtype=float)
    out["model"] = model
    out["relative_error"] = (model - article) / np.abs(article)
    out["error"] = error
    # A zero tolerance means exact agreement at the article's printed precision.
    out["within"] = np.where(tolerance > 0, error <= tolerance, error < 1e-9)
    out["tolerance_used"] = np.where(tolerance > 0, error / np.where(tolerance > 0, tolerance, 1.0), 0.0)
    return out


def _scenario_label(row) -> str:
    return f"B={row.concurrency}, T={row.context}, γ={row.gamma}, {row.drafter}, {row.acceptance}, α={row.alpha}"


def markdown_table(compared: pd.DataFrame) -> str:
    """The comparison as a Markdown table: scenario, metric, article, model, relative error,
    tolerance, within."""
    lines = [
        "| scenario | metric | article | model | relative error | tolerance | within |",
        "| --- | --- | ---: | ---: | ---: | ---: | :---: |",
    ]
    for row in compared.itertuples():
        tol = f"±{row.tolerance:g}" + (" (rel.)" if row.kind == "relative" else " (abs.)")
        lines.append(
            f"| {_scenario_label(row)} | `{row.metric}` | {row.value:g} | {row.model:.4g} | "
            f"{100 * row.relative_error:+.2f}% | {tol} | {'yes' if row.within else '**no**'} |"
        )
    return "\n".join(lines)
