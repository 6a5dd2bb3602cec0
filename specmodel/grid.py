"""Sweeps: the model over a grid of scenarios, one DataFrame row per scenario."""

from __future__ import annotations

import numpy as np
import pandas as pd

from specmodel.drafters import drafter_names
from specmodel.model import PROFILES, evaluate
from specmodel.readouts import readout_arrays
from specmodel.settings import deployment

#: Scenario axes in the order of the DataFrame's columns.
AXES = ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha")

#: The default grid: 11 x 8 x 10 x (drafters) x 2 x 10 scenarios; the drafter axis is every
#: drafter that can serve the target (7 for Qwen3-8B: 123,200 scenarios).
DEFAULT_GRID: dict[str, tuple | None] = {
    "concurrency": tuple(2**i for i in range(11)),
    "context": tuple(2**i for i in range(8, 16)),
    "gamma": tuple(range(1, 11)),
    "drafter": None,
    "acceptance": PROFILES,
    "alpha": tuple(round(0.50 + 0.05 * i, 2) for i in range(10)),
}


def grid_arrays(target: str | None = None, **axes) -> dict[str, np.ndarray]:
    """The Cartesian product of the axes (defaults from DEFAULT_GRID; drafters: every one
    that can serve ``target``), flattened."""
    default = {**DEFAULT_GRID, "drafter": drafter_names(target or deployment().target)}
    values = [np.asarray(axes.get(name, default[name])) for name in AXES]
    mesh = np.meshgrid(*values, indexing="ij")
    return {name: m.ravel() for name, m in zip(AXES, mesh)}


def sweep(hardware: str | None = None, target: str | None = None, **axes) -> pd.DataFrame:
    """Evaluate every scenario of a grid; one row per scenario.

    Columns: the six axes, every readout of :data:`specmodel.readouts.READOUTS` in display
    units, ``fits``, and ``per_position_1 .. per_position_<max gamma>``.

    >>> df = sweep(concurrency=[1, 64], gamma=[4], context=[2048], drafter=["qwen3-0.6b"],
    ...            acceptance=["falling"], alpha=[0.75])
    >>> df["speedup"].round(2).tolist()
    [1.93, 0.89]
    """
    unknown = set(axes) - set(AXES)
    if unknown:
        raise TypeError(f"unknown axes {sorted(unknown)}; axes are {', '.join(AXES)}")
    columns = grid_arrays(target, **axes)
    evaluation = evaluate(**columns, hardware=hardware, target=target)
    frame = pd.DataFrame(columns)
    for key, values in readout_arrays(evaluation).items():
        frame[key] = values
    frame["fits"] = evaluation.fits
    for j in range(evaluation.per_position.shape[-1]):
        frame[f"per_position_{j + 1}"] = evaluation.per_position[..., j]
    return frame
