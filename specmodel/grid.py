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

#: The default grid: 11 x 8 x 10 x (drafters) x 2 x 10 x 2 x 4 scenarios; the drafter axis
#: (None here) is every drafter that can serve the target (8 for Qwen3-8B: 1,126,400 scenarios).
DEFAULT_GRID: dict[str, tuple[Any, ...] | None] = {**GRID_AXIS_VALUES, "drafter": None}


def grid_mesh(
    target: str | None = None, settings: Settings | None = None, skip: tuple[str, ...] = (), **axes: Any
) -> dict[str, np.ndarray]:
    """The Cartesian product of the axes but those in ``skip`` (defaults from DEFAULT_GRID;
    drafters: every one that can serve ``target``): one axis of an N-d array per scenario
    axis, each field a broadcast view of its axis values, so that :func:`evaluate` does the
    work of each quantity once per distinct value of the axes it depends on."""
    settings = settings or current()
    default = {**GRID_AXIS_VALUES, "drafter": drafter_names(target or settings.deployment.target)}
    names = [a for a in AXES if a not in skip]
    values = [np.asarray(axes.get(name, default[name])) for name in names]
    mesh = np.broadcast_arrays(*np.meshgrid(*values, indexing="ij", sparse=True))
    return dict(zip(names, mesh, strict=True))


def grid_arrays(
    target: str | None = None, settings: Settings | None = None, skip: tuple[str, ...] = (), **axes: Any
) -> dict[str, np.ndarray]:
    """:func:`grid_mesh`, flattened: one element per scenario."""
    return {name: m.ravel() for name, m in grid_mesh(target, settings, skip, **axes).items()}


def sweep(
    hardware: str | None = None,
    target: str | None = None,
    settings: Settings | None = None,
    per_position: Any = None,
    mean_acceptance_length: float | None = None,
    batching: str | None = None,
    generated_tokens: int | None = None,
    **axes: Any,
) -> pd.DataFrame:
    """Evaluate every scenario of a grid; one row per scenario.

    Columns: the axes, every readout of :data:`specmodel.readouts.READOUTS` in display
    units, ``fits``, and ``per_position_1 .. per_position_<max gamma>``. A measured
    ``per_position`` or ``mean_acceptance_length`` applies to every scenario and replaces the
    acceptance and alpha axes; an ``engine`` given as a name, not a list, fixes that axis.

    >>> df = sweep(concurrency=[1, 64], gamma=[4], context=[2048], drafter=["qwen3-0.6b"],
    ...            acceptance=["falling"], alpha=[0.75], engine=["ideal"], tensor_parallel=[1])
    >>> df["speedup"].round(2).tolist()
    [1.93, 0.89]
    """
    unknown = set(axes) - set(AXES)
    if unknown:
        raise TypeError(f"unknown axes {sorted(unknown)}; axes are {', '.join(AXES)}")
    settings = settings or current()
    if isinstance(axes.get("engine"), str):
        axes["engine"] = [axes["engine"]]
    measured = {k: v for k, v in (("per_position", per_position), ("mean_acceptance_length", mean_acceptance_length))
                if v is not None}  # fmt: skip
    skip: tuple[str, ...] = ("acceptance", "alpha") if measured else ()
    skip += ("gamma",) if per_position is not None else ()
    mesh = grid_mesh(target, settings, skip, **axes)
    evaluation = evaluate(
        **mesh,
        **measured,
        hardware=hardware,
        target=target,
        batching=batching,
        generated_tokens=generated_tokens,
        settings=settings,
    )
    frame = pd.DataFrame({name: m.ravel() for name, m in mesh.items()})
    for key, values in readout_arrays(evaluation).items():
        frame[key] = np.ravel(values)
    frame["fits"] = np.ravel(evaluation.fits)
    for j in range(evaluation.per_position.shape[-1]):
        frame[f"per_position_{j + 1}"] = np.ravel(evaluation.per_position[..., j])
    return frame
