"""Sweeps: the model over a grid of scenarios, one DataFrame row per scenario."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from specmodel.model.drafters import drafter_names
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import AXES, GRID_AXIS_VALUES
from specmodel.model.settings import Settings, current
from specmodel.readouts import readout_arrays

#: The default grid: 11 x 8 x 10 x (drafters) x 2 x 10 scenarios; the drafter axis (None
#: here) is every drafter that can serve the target (7 for Qwen3-8B: 123,200 scenarios).
DEFAULT_GRID: dict[str, tuple[Any, ...] | None] = {**GRID_AXIS_VALUES, "drafter": None}


def grid_arrays(target: str | None = None, settings: Settings | None = None, **axes: Any) -> dict[str, np.ndarray]:
    """The Cartesian product of the axes (defaults from DEFAULT_GRID; drafters: every one
    that can serve ``target``), flattened."""
    settings = settings or current()
    default = {**GRID_AXIS_VALUES, "drafter": drafter_names(target or settings.deployment.target)}
    values = [np.asarray(axes.get(name, default[name])) for name in AXES]
    mesh = np.meshgrid(*values, indexing="ij")
    return {name: m.ravel() for name, m in zip(AXES, mesh, strict=True)}


def sweep(
    hardware: str | None = None, target: str | None = None, settings: Settings | None = None, **axes: Any
) -> pd.DataFrame:
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
    settings = settings or current()
    columns = grid_arrays(target, settings, **axes)
    evaluation = evaluate(**columns, hardware=hardware, target=target, settings=settings)
    frame = pd.DataFrame(columns)
    for key, values in readout_arrays(evaluation).items():
        frame[key] = values
    frame["fits"] = evaluation.fits
    for j in range(evaluation.per_position.shape[-1]):
        frame[f"per_position_{j + 1}"] = evaluation.per_position[..., j]
    return frame
