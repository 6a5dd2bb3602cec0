"""Sweeps: the model over a grid of scenarios, one DataFrame row per scenario."""

from __future__ import annotations

import numpy as np
import pandas as pd

from specmodel.model import DEFAULTS, DRAFTERS, PROFILES, evaluate
from specmodel.readouts import readout_arrays

#: Scenario axes in the order of the DataFrame's columns.
AXES = ("concurrency", "context", "gamma", "drafter", "acceptance", "alpha")

#: The default grid: 11 x 8 x 10 x 3 x 2 x 10 = 52,800 scenarios.
DEFAULT_GRID: dict[str, tuple] = {
    "concurrency": tuple(2**i for i in range(11)),
    "context": tuple(2**i for i in range(8, 16)),
    "gamma": tuple(range(1, 11)),
    "drafter": tuple(DRAFTERS),
    "acceptance": PROFILES,
    "alpha": tuple(round(0.50 + 0.05 * i, 2) for i in range(10)),
}


def grid_arrays(**axes) -> dict[str, np.ndarray]:
    """The Cartesian product of the axes (defaults from DEFAULT_GRID), flattened."""
    values = [np.asarray(axes.get(name, DEFAULT_GRID[name])) for name in AXES]
    mesh = np.meshgrid(*values, indexing="ij")
    return {name: m.ravel() for name, m in zip(AXES, mesh)}


def sweep(hardware: str = DEFAULTS["hardware"], target: str = DEFAULTS["target"], **axes) -> pd.DataFrame:
    """Evaluate every scenario of a grid; one row per scenario.

    Columns: the six axes, every readout of :data:`specmodel.readouts.READOUTS` in display
    units, ``fits_in_hbm``, and ``per_position_1 .. per_position_<max gamma>``.

    >>> df = sweep(concurrency=[1, 64], gamma=[4], context=[2048], drafter=["qwen3-0.6b"],
    ...            acceptance=["falling"], alpha=[0.75])
    >>> df["speedup"].round(2).tolist()
    [1.93, 0.89]
    """
    unknown = set(axes) - set(AXES)
    if unknown:
        raise TypeError(f"unknown axes {sorted(unknown)}; axes are {', '.join(AXES)}")
    columns = grid_arrays(**axes)
    evaluation = evaluate(**columns, hardware=hardware, target=target)
    frame = pd.DataFrame(columns)
    for key, values in readout_arrays(evaluation).items():
        frame[key] = values
    frame["fits_in_hbm"] = evaluation.fits_in_memory
    for j in range(evaluation.per_position.shape[-1]):
        frame[f"per_position_{j + 1}"] = evaluation.per_position[..., j]
    return frame
