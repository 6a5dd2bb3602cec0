"""What a step time of EAGLE-3's own would buy the ``vllm`` profile, and what it would cost.

The profile gives every draft head one fixed step time ``t_h``. Both sources, fitted alone, ask
for EAGLE-3's step to take longer (:func:`sitebuild.public_fit.eagle3_step_by_source`), by
amounts that differ severalfold. This module asks the question in between: a fifth constant
``t_h3`` (``fused_head_pass_s``) held near ``t_h`` by a prior of width ``w`` in log units,
that is the residual ``log(t_h3 / t_h) / w`` appended to the fit's (a ridge on the log ratio;
``w = 0`` is the profile, one step time for every head; ``w = inf`` leaves ``t_h3`` free).
Each width is judged as the profile is: in sample, leaving one source out, and fitting on
batch <= 16 to predict 64 and 128 (:data:`sitebuild.public_fit.TARGETS`). If some width met
every target, the profile should take it; the validation page says which widths meet which,
and :func:`band` looks between the two table widths where the in-sample targets start to hold
for widths that meet every target, and how close they come.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from operator import attrgetter

import numpy as np

from sitebuild import public_fit
from specmodel.measurements import Measurement, error_summary

#: The prior widths tried, in log units (0: no term of its own; inf: no prior).
WIDTHS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf)
#: The least margin (a share: 0.05 percentage points, what rounds to a tenth of a percent) by
#: which a band's middle must meet every target to count: a band met by less stands or falls
#: with the last digits a machine leaves in the fit.
BAND_MARGIN = 5e-4
#: The split each target belongs to, as :func:`sitebuild.public_fit.met` reads it.
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
        return public_fit.met(split, self.errors[split])


def _summary(errors: np.ndarray) -> tuple[float, float, float]:
    s = error_summary(errors)
    return (s["median"], s["p90"], s["max"])


def _setup(width: float) -> tuple[Sequence[str], public_fit.Shrink | None]:
    """The constants fitted and the prior at ``width``."""
    if width == 0.0:
        return public_fit.FITTED, None
    names = (*public_fit.FITTED, "fused_head_pass_s")
    return names, None if math.isinf(width) else ("fused_head_pass_s", "head_pass_s", width)


def split_errors(rows: list[Measurement], width: float, split: str) -> np.ndarray:
    """``predicted / measured - 1`` of ``split`` (one of :data:`SPLITS`) at ``width``."""
    names, shrink = _setup(width)
    if split == "in_sample":
        return public_fit.fit(rows, names, shrink=shrink).errors
    if split == "leave_one_source_out":
        return public_fit.group_out(rows, attrgetter("source_name"), names, shrink)
    return public_fit.small_to_large_fit(rows, names, shrink=shrink)[1]


def tradeoff(rows: list[Measurement], width: float) -> Tradeoff:
    """The fit with EAGLE-3's step time held near the head's by a prior of ``width``, and its
    errors in sample, leaving one source out and from small batches to large."""
    names, shrink = _setup(width)
    values = public_fit.fit(rows, names, shrink=shrink).values  # the in-sample split's own fit
    errors = {split: _summary(split_errors(rows, width, split)) for split in SPLITS}
    head = values["head_pass_s"]
    return Tradeoff(width, head, values.get("fused_head_pass_s", head), errors)


@cache
def tradeoffs(rows: tuple[Measurement, ...], widths: tuple[float, ...] = WIDTHS) -> tuple[Tradeoff, ...]:
    """:func:`tradeoff` at each width (cached: the page's table and its claim read the same)."""
    return tuple(tradeoff(list(rows), w) for w in widths)


def boundary(rows: list[Measurement], split: str, met_at: float, missed_at: float, tolerance: float = 0.005) -> float:
    """The width nearest ``missed_at`` at which ``split``'s targets are still met, by bisection
    between a width where they are met and one where they are not, to ``tolerance`` (one
    crossing between the two assumed)."""
    while abs(met_at - missed_at) > tolerance:
        middle = 0.5 * (met_at + missed_at)
        if public_fit.met(split, _summary(split_errors(rows, middle, split))):
            met_at = middle
        else:
            missed_at = middle
    return met_at


@dataclass(frozen=True)
class Band:
    """Widths from about ``low`` to ``high`` at which every target is met, checked at their
    ``middle``, where the closest target is met with ``margin`` to spare (a share, like the
    errors)."""

    low: float
    high: float
    middle: float
    margin: float


@cache
def band(rows: tuple[Measurement, ...], widths: tuple[float, ...] = WIDTHS) -> Band | None:
    """Between the last width of :func:`tradeoffs` that misses the in-sample targets and the
    next, which meets them, the widths where the held-out targets are met too, found by
    bisection (:func:`boundary`) and checked at their middle; None if there are none, or if the
    middle meets some target by less than :data:`BAND_MARGIN`."""
    results = tradeoffs(rows, widths)
    first = next((i for i, r in enumerate(results) if r.met("in_sample")), 0)
    if first == 0 or not all(results[first - 1].met(s) for s in SPLITS if s != "in_sample"):
        return None
    below, above = results[first - 1].width, results[first].width
    low = boundary(list(rows), "in_sample", above, below)
    high = min(
        (above if results[first].met(s) else boundary(list(rows), s, below, above)) for s in SPLITS if s != "in_sample"
    )
    if high <= low:
        return None
    middle = tradeoff(list(rows), 0.5 * (low + high))
    if margin(middle) < BAND_MARGIN:
        return None
    return Band(low, high, middle.width, margin(middle))


def margin(result: Tradeoff) -> float:
    """The smallest ``target - error`` over every target of :data:`SPLITS` (negative: missed)."""
    return min(public_fit.slack(s, result.errors[s]) for s in SPLITS)


def width_label(width: float) -> str:
    """A width as the page prints it.

    >>> [width_label(w) for w in (0.0, 0.5, math.inf)]
    ['0 (one step time for every head)', '0.5', '∞ (fitted freely)']
    """
    if width == 0.0:
        return "0 (one step time for every head)"
    return "∞ (fitted freely)" if math.isinf(width) else f"{width:g}"
