"""What a step time of EAGLE-3's own would buy the ``vllm`` profile, and what it would cost.

The profile gives every draft head one fixed step time ``t_h``. Both sources, fitted alone, ask
for EAGLE-3's step to take longer (:func:`sitebuild.engine_fit.eagle3_step_by_source`), by
amounts that differ severalfold. This module asks the question in between: a fifth constant
``t_h3`` (``fused_head_pass_s``) held near ``t_h`` by a prior of width ``w`` in log units,
that is the residual ``log(t_h3 / t_h) / w`` appended to the fit's (a ridge on the log ratio;
``w = 0`` is the profile, one step time for every head; ``w = inf`` leaves ``t_h3`` free).
Each width is judged as the profile is: in sample, leaving one source out, and fitting on
batch <= 16 to predict 64 and 128 (:data:`sitebuild.engine_fit.TARGETS`). If some width met
every target, the profile should take it; the validation page says which widths meet which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from sitebuild import engine_fit
from specmodel.measurements import Measurement, error_summary

#: The prior widths tried, in log units (0: no term of its own; inf: no prior).
WIDTHS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf)
#: The split each target belongs to, as :func:`sitebuild.engine_fit.met` reads it.
SPLITS = ("in_sample", "leave_one_source_out", "small_to_large")


@dataclass(frozen=True)
class Tradeoff:
    """One prior width: the fitted step times (seconds) and each split's
    ``(median, p90, worst)`` of ``|predicted / measured - 1|``."""

    width: float
    head_s: float
    eagle3_s: float
    errors: dict[str, tuple[float, float, float]]

    def met(self, split: str) -> bool:
        """Whether this width meets ``split``'s targets."""
        return engine_fit.met(split, self.errors[split])


def _summary(errors: np.ndarray) -> tuple[float, float, float]:
    s = error_summary(errors)
    return (s["median"], s["p90"], s["max"])


def tradeoff(rows: list[Measurement], width: float) -> Tradeoff:
    """The fit with EAGLE-3's step time held near the head's by a prior of ``width``, and its
    errors in sample, leaving one source out and from small batches to large."""
    if width == 0.0:
        names: Sequence[str] = engine_fit.FITTED
        shrink = None
    else:
        names = (*engine_fit.FITTED, "fused_head_pass_s")
        shrink = None if math.isinf(width) else ("fused_head_pass_s", "head_pass_s", width)
    full = engine_fit.fit(rows, names, shrink=shrink)
    errors = {
        "in_sample": _summary(full.errors),
        "leave_one_source_out": _summary(engine_fit.group_out(rows, engine_fit.source_of, names, shrink)),
        "small_to_large": _summary(engine_fit.small_to_large_fit(rows, names, shrink=shrink)[1]),
    }
    head = full.values["head_pass_s"]
    return Tradeoff(width, head, full.values.get("fused_head_pass_s", head), errors)


@cache
def tradeoffs(rows: tuple[Measurement, ...], widths: tuple[float, ...] = WIDTHS) -> tuple[Tradeoff, ...]:
    """:func:`tradeoff` at each width (cached: the page's table and its claim read the same)."""
    return tuple(tradeoff(list(rows), w) for w in widths)


def width_label(width: float) -> str:
    """A width as the page prints it.

    >>> [width_label(w) for w in (0.0, 0.5, math.inf)]
    ['0 (one step time for every head)', '0.5', '∞ (fitted freely)']
    """
    if width == 0.0:
        return "0 (one step time for every head)"
    return "∞ (fitted freely)" if math.isinf(width) else f"{width:g}"
