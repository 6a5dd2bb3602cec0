"""Progress of long work (a large sweep, a site build, a fit) on stderr, shown only when stderr
is a terminal: a pipe, a file or a test's capture stays quiet (tqdm draws the bar)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

_Item = TypeVar("_Item")


def shows_progress() -> bool:
    """Whether stderr is a terminal, where a progress bar helps and does not pollute a log."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def progress(items: Iterable[_Item], what: str, total: int | None = None, unit: str = "step") -> Iterator[_Item]:
    """``items``, with a bar on stderr named ``what`` while they are consumed (when stderr is a
    terminal; otherwise ``items`` unchanged). The bar is removed when done."""
    if not shows_progress():
        yield from items
        return
    with tqdm(items, desc=what, total=total, unit=unit, leave=False, file=sys.stderr, dynamic_ncols=True) as bar:
        yield from bar
