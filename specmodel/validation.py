"""Checks on scenario inputs. Each failure raises SpecModelError with one line that
names the offending value and says what is allowed."""

from __future__ import annotations

import numpy as np

from specmodel.errors import SpecModelError

#: Largest number of draft tokens per iteration the model accepts.
MAX_GAMMA = 32


def _first_bad(values: np.ndarray, bad: np.ndarray):
    return values[bad].flat[0]


def _as_numbers(name: str, value) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise SpecModelError(f"{name} {value!r} is not a number") from None
    if not np.all(np.isfinite(array)):
        raise SpecModelError(f"{name} {_first_bad(array, ~np.isfinite(array))!r} is not a finite number")
    return array


def check_integer(name: str, value, low: int, high: int | None = None) -> np.ndarray:
    """``value`` as an int array, every element an integer in ``low..high``."""
    array = _as_numbers(name, value)
    allowed = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
    bad = (array != np.round(array)) | (array < low)
    if high is not None:
        bad |= array > high
    if bad.any():
        raise SpecModelError(f"{name} {_fmt(_first_bad(array, bad))} is not allowed; {name} must be {allowed}")
    return array.astype(np.int64)


def check_open_unit(name: str, value) -> np.ndarray:
    """``value`` as a float array, every element strictly between 0 and 1."""
    array = _as_numbers(name, value)
    bad = (array <= 0) | (array >= 1)
    if bad.any():
        raise SpecModelError(f"{name} {_fmt(_first_bad(array, bad))} is not allowed; {name} must be strictly between 0 and 1")
    return array


def check_choice(name: str, value, allowed) -> np.ndarray:
    """``value`` as a str array, every element one of ``allowed``."""
    array = np.asarray(value, dtype=object)
    for item in array.flat:
        if not isinstance(item, str) or item not in allowed:
            raise SpecModelError(f"unknown {name} {item!r}; allowed: {', '.join(allowed)}")
    return array.astype(str)


def _fmt(x) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))
