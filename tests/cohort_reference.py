"""The survival of the cohort model in dense form, ``S_i = P(N >= i)`` for every i = 1..G, for
tests that compare it with a Monte Carlo run or an iteration-by-iteration reference (the
model keeps it in compact form, :class:`specmodel.model.cohort.Survival`)."""

from __future__ import annotations

import numpy as np

from specmodel.model.cohort import Survival, survival_window


def dense(survival: Survival) -> np.ndarray:
    """``S[r, i - 1]`` for i = 1..G (rows, G): 1 before the window, the window, then 0."""
    g, width = survival.generated_tokens, survival.window.shape[1]
    j = np.arange(g) - survival.start[:, None]
    inside = (j >= 0) & (j < width)
    picked = np.take_along_axis(survival.window, np.clip(j, 0, max(width - 1, 0)), axis=1) if width else 0.0
    return np.where(j < 0, 1.0, np.where(inside, picked, 0.0))


def iteration_survival(pmf, generated_tokens: int) -> np.ndarray:
    """``S_i`` for i = 1..G of tokens-per-iteration distribution ``pmf``; shape
    ``pmf.shape[:-1] + (G,)``.

    >>> iteration_survival(np.array([1.0]), generated_tokens=3).tolist()  # plain decoding
    [1.0, 1.0, 1.0]
    >>> iteration_survival(np.array([0.0, 1.0]), generated_tokens=3).tolist()  # always 2
    [1.0, 1.0, 0.0]
    """
    pmf = np.asarray(pmf, dtype=float)
    return dense(survival_window(pmf, generated_tokens)).reshape(pmf.shape[:-1] + (int(generated_tokens),))
