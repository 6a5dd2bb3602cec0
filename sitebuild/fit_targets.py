"""The targets for the ``vllm`` profile's errors and identifiability, and whether a
recorded error summary meets them (read by the fit's records, the trade-off, the memory
refits, the validation page's claims and the benchmark)."""

from __future__ import annotations

from collections.abc import Sequence

#: The targets for each split: the median (and 90th percentile) of |predicted / measured - 1|.
TARGETS: dict[str, dict[str, float]] = {
    "leave_one_source_out": {"median": 0.07},
    "leave_one_workload_out": {"median": 0.07},
    "small_to_large": {"median": 0.08},
    "in_sample": {"median": 0.06, "p90": 0.15},
}


#: The limits on identifiability: no fitted constant's relative standard error above
#: ``relative_se``, no two constants correlated beyond ``correlation``.
IDENTIFIABLE = {"relative_se": 0.5, "correlation": 0.9}


def slack(split: str, recorded: Sequence[float]) -> float:
    """The smallest ``target - error`` over a split's :data:`TARGETS`, from its recorded
    ``(median, p90, worst)`` (negative: a target missed by that much).

    >>> round(slack("in_sample", (0.05, 0.16, 0.3)), 3)
    -0.01
    """
    stats = dict(zip(("median", "p90", "max"), recorded, strict=False))
    return min(v - stats[k] for k, v in TARGETS[split].items())


def met(split: str, recorded: Sequence[float]) -> bool:
    """Whether a split's recorded ``(median, p90, worst)`` meets its :data:`TARGETS`.

    >>> met("in_sample", (0.05, 0.16, 0.3)), met("small_to_large", (0.07, 0.2, 0.3))
    (False, True)
    """
    return slack(split, recorded) >= 0
