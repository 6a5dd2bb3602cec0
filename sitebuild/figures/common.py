"""What the figures share: hover text, loss colours, slider steps, the unfit marker."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd

from sitebuild.figures.placement import GAP, SLIDER_TOP, X_BAND
from sitebuild.theme import LOSS, NEUTRAL
from specmodel.formatting import plural, verdict

SPEEDUP_HOVER = "%{y:.2f}x over plain decoding"

#: Marker of a scenario that does not fit on the card: open, where fitting ones are filled.
UNFIT_SYMBOL = "circle-open"
#: Marker of the ideal roofline where a figure sets it against the vLLM profile (circles): a
#: filled triangle, since open markers mean "does not fit" everywhere on the site.
IDEAL_SYMBOL = "triangle-up"


def sequences(counts: Any) -> list[str]:
    """Hover text for concurrencies (``%{hovertext}``): ``1 sequence``, ``64 sequences``."""
    return [plural(int(batch), "sequence") for batch in counts]


def named_groups(data: pd.DataFrame, column: str) -> Iterator[tuple[str, pd.DataFrame]]:
    """``data.groupby(column, sort=False)`` over a column of names: each name (a ``str``, which
    pandas' types cannot tell) with its rows, in the order the names first appear."""
    for name, part in data.groupby(column, sort=False):
        yield str(name), part


def point_colors(speedup: Any, color: str) -> list[str]:
    """Each point's colour: magenta for a loss, grey within 3% of even (the verdict of
    :func:`specmodel.formatting.verdict`), else the trace's colour."""
    return [{"slower": LOSS, "even": NEUTRAL}.get(verdict(float(s)), color) for s in speedup]


def visibility_steps(
    labels: Sequence[str], groups: Sequence[Sequence[int]], always: Sequence[int], prefix: str
) -> list[dict]:
    """Slider steps: step k shows the traces in ``groups[k]`` plus ``always``."""
    total = sum(len(g) for g in groups) + len(always)
    steps = []
    for label, group in zip(labels, groups):
        visible = [False] * total
        for i in list(group) + list(always):
            visible[i] = True
        steps.append({"method": "restyle", "args": [{"visible": visible}], "label": label})
    return steps


def slider(steps: list[dict], active: int, prefix: str) -> dict:
    """A slider under the x-axis title (its current value would otherwise cover the title)."""
    pad = {"t": X_BAND + GAP - SLIDER_TOP}
    return {"active": active, "steps": steps, "currentvalue": {"prefix": prefix}, "pad": pad, "x": 0, "len": 1}
