"""Memoising a function of a value that cannot be hashed, by what determines it."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Keyed(Generic[T]):
    """``value`` compared and hashed by ``key`` alone (what determines it), so that
    :func:`functools.cache` can memoise a function of it.

    >>> Keyed("k", [1]) == Keyed("k", [2]), hash(Keyed("k", [1])) == hash(Keyed("k", [2]))
    (True, True)
    """

    key: Hashable
    value: T = field(compare=False)
