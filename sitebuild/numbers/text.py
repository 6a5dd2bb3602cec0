"""A number the prose quotes: its value and the text printed for it (formatted by
:mod:`specmodel.formatting`, the one formatter of the project)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from specmodel import formatting


@dataclass(frozen=True)
class Number:
    """A value and the text the prose prints for it (``value`` is NaN for a name), and the
    simulator setting it is read at (a URL query such as ``concurrency=64``), if it has one:
    the article links the number to the simulator at that setting. ``readout`` names the
    simulator readout that shows the same text there (a browser test follows the link and
    compares); ``quoted`` is the source of a number quoted from a paper, not computed."""

    value: float
    text: str
    link: str | None = None
    readout: str | None = None
    quoted: str | None = None


def at(number: Number, readout: str | None = None, **setting: Any) -> Number:
    """``number`` linked to the simulator at ``setting`` (the article's defaults otherwise),
    where the simulator's readout ``readout`` (if given) prints the same text."""
    return Number(number.value, number.text, urlencode(setting), readout)


def speedup_at(value: Any, **setting: Any) -> Number:
    """A speedup as ``0.89x``, linked to the simulator at ``setting``, where the headline
    shows the same speedup and verdict."""
    return at(times(value), "speedup", **setting)


def name(text: str) -> Number:
    """A name the prose prints (hardware, model), so that a config file can change it."""
    return Number(float("nan"), text)


def times(value: Any, decimals: int = 2) -> Number:
    return Number(float(value), formatting.times(float(value), decimals))


def percent(share: Any, decimals: int = 0, signed: bool = False) -> Number:
    return Number(float(share), formatting.percent(float(share), decimals, signed))


def plain(value: Any, decimals: int = 2) -> Number:
    return Number(float(value), formatting.plain(float(value), decimals))


def gib(byte_count: Any, decimals: int = 1) -> Number:
    return Number(float(byte_count), formatting.gib(float(byte_count), decimals))
