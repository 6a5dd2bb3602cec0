"""Break-even points: where a speedup curve crosses 1 (speculation starts to pay)."""

from __future__ import annotations

import numpy as np

from specmodel.model.types import FloatArray


def first_crossing(x: FloatArray, y: FloatArray, level: float = 1.0) -> float:
    """The x at which ``y`` first reaches ``level`` along a sampled curve, linearly
    interpolated between the two samples around it: ``x_{i-1} + (level - y_{i-1})
    (x_i - x_{i-1}) / (y_i - y_{i-1})`` at the first i with ``y_i >= level``. NaN if the
    curve never reaches it or starts above it.

    >>> round(first_crossing(np.array([0.1, 0.2, 0.3]), np.array([0.8, 0.9, 1.1])), 6)
    0.25
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    above = np.flatnonzero(y >= level)
    if not len(above) or above[0] == 0:
        return float("nan")
    i = above[0]
    return float(x[i - 1] + (level - y[i - 1]) * (x[i] - x[i - 1]) / (y[i] - y[i - 1]))
