"""Checks on scenario inputs. Each failure raises SpecModelError with one line that
names the offending value and says what is allowed."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.formatting import shown
from specmodel.model.types import BoolArray, FloatArray
from specmodel.safe_input import excerpt

#: Largest number of draft tokens per iteration the model accepts.
MAX_GAMMA = 32

#: Most concurrent sequences a scenario may have. vLLM's scheduler caps a step at
#: ``max_num_seqs`` (256 to 1,024 by default); 65,536 leaves room for any real server and
#: refuses typing slips that would only be reported as "does not fit".
MAX_CONCURRENCY = 65536
#: Most tokens a sequence may generate (as many as the longest context the catalogue's models take).
MAX_GENERATED_TOKENS = 65536
#: Largest tensor-parallel degree a scenario may ask for (a card's own limit is lower).
MAX_TENSOR_PARALLEL = 64


def compact(value: Any) -> np.ndarray:
    """The smallest array that broadcasts back to ``value``: along every axis on which a
    broadcast view repeats its data (stride 0), one element. Checking or looking up the
    compact array costs what the grid's distinct values cost, not its size.

    >>> grid = np.broadcast_to(np.arange(3)[:, None], (3, 1000))
    >>> compact(grid).shape
    (3, 1)
    """
    array = np.asarray(value)
    if array.ndim == 0 or array.size == 0:
        return array
    return array[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in array.strides)]


def factorize(value: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(levels, codes)``: the distinct values of ``value`` and, for every element, the
    index of its value in ``levels`` (an int array of ``value``'s shape, a broadcast view
    where ``value`` is one), found on :func:`compact` (``value``).

    >>> levels, codes = factorize(np.array(["b", "a", "b"]))
    >>> levels.tolist(), codes.tolist()
    (['a', 'b'], [1, 0, 1])
    """
    small = compact(value)
    levels, inverse = np.unique(small.ravel(), return_inverse=True)
    return levels, np.broadcast_to(inverse.reshape(small.shape), np.shape(value))


def _first_bad(values: FloatArray, bad: BoolArray) -> float:
    return values[bad].flat[0]


def _as_numbers(name: str, value: object) -> FloatArray:
    try:
        array = np.asarray(compact(value), dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise SpecModelError(f"{name} {excerpt(value)} is not a number") from None
    if not np.all(np.isfinite(array)):
        raise SpecModelError(f"{name} {shown(_first_bad(array, ~np.isfinite(array)))} is not a finite number")
    return array


def check_integer(name: str, value: object, low: int, high: int | None = None) -> np.ndarray:
    """``value`` as an int array, every element an integer in ``low..high``."""
    array = _as_numbers(name, value)
    allowed = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
    bad = (array != np.round(array)) | (array < low)
    if high is not None:
        bad |= array > high
    if bad.any():
        raise SpecModelError(f"{name} {shown(_first_bad(array, bad))} is not allowed; {name} must be {allowed}")
    return array.astype(np.int64)


def check_open_unit(name: str, value: object) -> np.ndarray:
    """``value`` as a float array, every element strictly between 0 and 1."""
    array = _as_numbers(name, value)
    bad = (array <= 0) | (array >= 1)
    if bad.any():
        raise SpecModelError(
            f"{name} {shown(_first_bad(array, bad))} is not allowed; {name} must be strictly between 0 and 1"
        )
    return array


def check_choice(name: str, value: object, allowed: Collection[str]) -> np.ndarray:
    """``value`` as a str array, every element one of ``allowed``."""
    array = np.asarray(compact(value), dtype=object)
    for item in set(array.flat):
        if not isinstance(item, str) or item not in allowed:
            raise SpecModelError(f"unknown {name} {excerpt(item)}; allowed: {', '.join(allowed)}")
    return array.astype(str)


def check_per_position(per_position: object) -> np.ndarray:
    """Unconditional per-position acceptance u_1..u_gamma (positions on the last axis) as a
    float array: 1 to MAX_GAMMA positions, each in [0, 1], not rising with position (guess j
    reaches the output only if guesses 1..j-1 did).

    >>> check_per_position([0.5, 0.25]).tolist()
    [0.5, 0.25]
    """
    try:
        u = np.asarray(per_position, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise SpecModelError(f"per-position acceptance {excerpt(per_position)} is not a list of numbers") from None
    if u.ndim == 0 or u.shape[-1] < 1 or u.shape[-1] > MAX_GAMMA:
        raise SpecModelError(f"per_position needs 1 to {MAX_GAMMA} positions on its last axis; got shape {u.shape}")
    if not np.all(np.isfinite(u)) or np.any((u < 0) | (u > 1)):
        raise SpecModelError("per-position acceptance must lie between 0 and 1")
    if np.any(np.diff(u, axis=-1) > 1e-12):
        raise SpecModelError("per-position acceptance must not rise with position (guess j needs guesses 1..j-1)")
    return u


def map_names(names: np.ndarray, value_of: Callable[[str], Any], dtype: Any = float) -> np.ndarray:
    """``value_of(name)`` for every element of an array of names, each distinct name looked up
    once (a grid repeats a handful of names hundreds of thousands of times).

    >>> map_names(np.array(["a", "b", "a"]), {"a": 1.0, "b": 2.0}.get).tolist()
    [1.0, 2.0, 1.0]
    """
    small = compact(names)
    distinct, index = np.unique(small.ravel(), return_inverse=True)
    values = np.array([value_of(str(n)) for n in distinct], dtype=dtype)
    return np.broadcast_to(values[index].reshape(small.shape), np.shape(names))
