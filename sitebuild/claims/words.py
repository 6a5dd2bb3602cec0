"""What the claims share: verdicts read off a speedup as printed (with the 3% margin of
:data:`specmodel.formatting.EVEN_MARGIN`), the first rung of a ladder where one holds, the
largest part of a step's time, and small words."""

from __future__ import annotations

from typing import Any

import numpy as np

from sitebuild.numbers.text import Number, plain
from specmodel import formatting
from specmodel.model.timing import TIME_PARTS

_COUNT = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def verdict(speedup: Any) -> str:
    """``faster``, ``even`` or ``slower``, as the page prints the speedup (two decimals)."""
    return formatting.verdict(float(speedup), 2)


def first_rung(ladder: Any, mask: Any) -> int | None:
    """The first rung of ``ladder`` where ``mask`` holds; None if it never does."""
    mask = np.asarray(mask, dtype=bool)
    return int(np.asarray(ladder)[np.argmax(mask)]) if mask.any() else None


def not_faster(speedups: Any) -> np.ndarray:
    """Where a speedup is not a gain (even or slower)."""
    return np.array([verdict(s) != "faster" for s in np.ravel(speedups)])


def slower(speedups: Any) -> np.ndarray:
    """Where a speedup is a loss."""
    return np.array([verdict(s) == "slower" for s in np.ravel(speedups)])


def rung(b: int | None) -> Number:
    """A rung of the ladder as the prose prints it: ``64`` (NaN: none)."""
    return plain(b, 0) if b is not None else Number(float("nan"), "none")


def count(n: int) -> str:
    """``one``, ``two``, ... ``eight``, then digits."""
    return _COUNT.get(int(n), f"{int(n):,}")


def largest_part(parts: Any) -> str:
    """The name of the largest of :data:`TIME_PARTS` in ``parts`` (trailing axis)."""
    return TIME_PARTS[int(np.argmax(np.asarray(parts)))]


def largest_extra(spec_parts: Any, base_parts: Any) -> str:
    """The part of the speculative step that adds most time over the plain step's same part."""
    return TIME_PARTS[int(np.argmax(np.asarray(spec_parts) - np.asarray(base_parts)))]


def part(parts: Any, name: str) -> float:
    """One of :data:`TIME_PARTS` from a trailing-axis array."""
    return float(np.asarray(parts)[..., TIME_PARTS.index(name)])
