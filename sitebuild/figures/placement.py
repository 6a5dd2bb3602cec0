"""Where a figure's legend and titles go, at desktop width and in the narrow variant that
docs/javascripts/figures.js switches to when a figure is under 600 px wide. (A figure's sliders
and menus take no room in it: Plotly does not draw them, figures.js puts a native control for
each above the figure.)

Plotly places a legend under the plot in a fraction of the plot's height, while what sits
between them (the x-axis tick labels and title) takes a fixed number of pixels.
So the fractions are computed here from the figure's height and margins, and the margins
are set large enough that Plotly has nothing left to push: the plot's height is then known.
Widths are estimated from the number of characters at a width per character of the widest
font the site meets (DejaVu Sans); a narrower font only leaves more room. A legend under the
plot hangs from its top edge: should it take a row more than estimated (a wide figure
narrower than the article's column), Plotly grows the bottom margin, and the legend moves up
by a fraction of that row, which the gaps absorb.

The narrow variant lives in the figure: ``layout.meta.narrow`` holds ``layout``, flat
attribute paths and values as Plotly.relayout takes them (``"legend.y"``,
``"annotations[1].x"``, ``"yaxis2.domain"``), and optionally ``traces``, a list of
``{"indices": [...], "style": {...}}`` setting styles of traces. The browser writes them into
the figure when it is drawn under 600 px wide, and draws the figure as built above that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

X_BAND = 62  # px from the plot's bottom edge to the bottom of a one-line x-axis title
TITLE_LINE = 19  # px a second line of an axis title takes
GAP = 8  # px between two things stacked under the plot
PANEL_TITLE = 24  # px a subplot title takes above its panel
LEGEND_ROW = 20  # px a row of legend entries takes
LEGEND_PAD = 10  # px a legend adds around its rows
GROUP_GAP = 10  # px Plotly puts between rows of a legend whose traces have legend groups
ENTRY = 40  # px a legend entry takes besides its text: the symbol and gaps
CHAR = 7.3  # px per character of 13 px text in the widest font the site meets
NARROW_PLOT = 250  # px: the narrowest plot the narrow layout is made for (a 360 px phone)
WIDE_PLOT = 590  # px: the plot of a wide figure in the article's column (a little less: more rows)
NARROW_TOP = 16  # px of top margin of a narrow figure with nothing above its plot


def text_px(text: str) -> float:
    return CHAR * len(text)


def legend_entries(fig: go.Figure) -> tuple[list[str], bool]:
    """The names the legend shows when the figure is first drawn, and whether its traces
    are grouped (Plotly then puts a gap between rows)."""
    shown = [
        t
        for t in fig.data
        if t.type != "heatmap" and t.visible is not False and t.showlegend is not False and t.name is not None
    ]
    return [t.name for t in shown], any(t.legendgroup for t in shown)


def natural_legend_height(labels: Sequence[str], plot_px: float, grouped: bool) -> int:
    """The height of a horizontal legend laid out the way Plotly does (one row if all fit,
    else columns as wide as the widest entry, or rows of groups) in ``plot_px``."""
    widths = [text_px(label) + ENTRY for label in labels]
    if grouped:
        rows, x = 1, 0.0
        for w in widths:
            if x > 0 and x + w + 5 > plot_px:
                rows, x = rows + 1, 0.0
            x += w + 5
    elif sum(widths) + 5 * (len(widths) - 1) < plot_px:
        rows = 1
    else:
        per_row = max(1, math.floor((plot_px - max(widths)) / (max(widths) + 5)) + 1)
        rows = math.ceil(len(widths) / per_row)
    return rows * LEGEND_ROW + (rows - 1) * GROUP_GAP * grouped + LEGEND_PAD


def narrow_legend(labels: Sequence[str], grouped: bool, plot_px: float = NARROW_PLOT) -> tuple[dict, int]:
    """Legend attributes for a narrow figure, in columns of equal width (a fraction of the
    plot's width, so that the number of rows does not depend on the font) or in one column,
    and the legend's height in px."""
    longest = max(text_px(label) for label in labels) + ENTRY
    # k columns of 1/k - 0.03 of the plot's width: k entries fit in a row, grouped or not
    # (Plotly adds 5 px after each group), and the (k + 1)-th does not.
    columns = next((k for k in range(min(len(labels), 4), 1, -1) if (1 / k - 0.03) * plot_px >= longest), 1)
    rows = math.ceil(len(labels) / columns)
    height = rows * LEGEND_ROW + (rows - 1) * GROUP_GAP * grouped + LEGEND_PAD
    if columns == 1:
        return {"legend.orientation": "v"}, height
    entry = {"legend.entrywidthmode": "fraction", "legend.entrywidth": 1 / columns - 0.03}
    return {"legend.orientation": "h", **entry}, height


def bottom_px(legend_px: int = 0, band: int = X_BAND) -> int:
    """The bottom margin that holds the x-axis band and the legend (see ``below``)."""
    return band + GAP + (legend_px + GAP if legend_px else 0)


def below(height: int, top: int, legend_px: int = 0, band: int = X_BAND) -> dict:
    """Margins, and the place of the legend, stacked under the plot in this order: the x-axis
    band (tick labels and title, ``band`` px), the legend."""
    y = band + GAP
    out: dict = {}
    bottom = bottom_px(legend_px, band)
    if legend_px:
        out.update({"legend.x": 0, "legend.xanchor": "left", "legend.y": round(-y / (height - top - bottom), 4)})
        out["legend.yanchor"] = "top"
    out.update({"margin.t": top, "margin.b": bottom})
    return out


def apply(fig: go.Figure, paths: dict) -> None:
    """Set flat attribute paths (``"legend.y"``, ``"annotations[1].x"``) on the figure's layout."""
    for path, value in paths.items():
        fig.layout[path] = value


def legend_below(fig: go.Figure, band: int = X_BAND) -> None:
    """The wide layout's legend under the plot, clear of the x-axis title (no room for one that
    has no entries)."""
    labels, grouped = legend_entries(fig)
    legend = natural_legend_height(labels, WIDE_PLOT, grouped) if labels else 0
    apply(fig, {"legend.orientation": "h", **below(fig.layout.height, fig.layout.margin.t or 36, legend, band)})


def legend_above(fig: go.Figure) -> None:
    """The wide layout's legend over the plot, where Plotly grows the top margin to fit it."""
    fig.update_layout(
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"}, margin={"t": 20}
    )


def narrow_below(
    fig: go.Figure,
    height: int | None = None,
    top: int = NARROW_TOP,
    band: int = X_BAND,
    plot: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict:
    """The narrow variant's layout paths for a figure with its legend under the plot: ``height``
    px in all, or a plot ``plot`` px tall; ``top`` px over the plot; ``extra`` paths are added."""
    labels, grouped = legend_entries(fig)
    legend, legend_px = narrow_legend(labels, grouped) if labels else ({}, 0)
    if not height:
        assert plot is not None, "a narrow layout needs the figure's height or its plot's"
        height = top + plot + bottom_px(legend_px, band)
    return {"height": height, **legend, **below(height, top, legend_px, band), **(extra or {})}


def set_narrow(fig: go.Figure, layout: dict, traces: Iterable[tuple[Sequence[int], dict]] = ()) -> None:
    """Store the narrow variant in ``layout.meta.narrow``: layout paths, and styles of traces
    given by index. Every path is tried on a copy first, so a misspelt one fails the build."""
    trial = go.Figure(fig)
    apply(trial, layout)
    narrow: dict = {"layout": {k: _plain(v) for k, v in layout.items()}}
    styles: list[dict[str, Any]] = [{"indices": list(indices), "style": style} for indices, style in traces]
    for entry in styles:
        for i in entry["indices"]:
            for path, value in entry["style"].items():
                trial.data[i][path] = value
    if styles:
        narrow["traces"] = styles
    fig.update_layout(meta={"narrow": narrow})


def _plain(value):
    return round(value, 4) if isinstance(value, float) else value


def sparse_ticks(values: Sequence[float], axes: int = 1) -> dict:
    """Every other tick (with its label) on the x axes of a narrow figure, so that the labels
    stay level; ``axes`` x axes (``xaxis``, ``xaxis2``, ...)."""
    kept = [getattr(v, "item", lambda v=v: v)() for v in list(values)[::2]]  # numpy numbers as plain ones
    names = ["xaxis"] + [f"xaxis{i}" for i in range(2, axes + 1)]
    return {f"{n}.{k}": v for n in names for k, v in (("tickvals", kept), ("ticktext", [f"{v:g}" for v in kept]))}


def stacked_domains(count: int, plot_px: float, gap_px: float) -> list[list[float]]:
    """Vertical domains, top first, of ``count`` panels of equal height ``gap_px`` apart in
    a plot area ``plot_px`` tall."""
    panel = (plot_px - gap_px * (count - 1)) / count
    domains = []
    for i in range(count):
        top = plot_px - i * (panel + gap_px)
        domains.append([round((top - panel) / plot_px, 4), round(top / plot_px, 4)])
    return domains


def side_by_side(fig: go.Figure, panels: int, panel_px: int = 150, gap_px: int = 60) -> None:
    """Subplots in one row, titled (their titles are the first ``panels`` annotations). Wide:
    the legend over the panels' titles. Narrow: the
    panels one over the other, each with its title, the x axis titled on the last, the y axis
    on the middle one (its title is the first panel's), the legend under the plot."""
    labels, grouped = legend_entries(fig)
    legend_px = natural_legend_height(labels, WIDE_PLOT, grouped)
    height, top = fig.layout.height, legend_px + GAP + PANEL_TITLE
    apply(fig, below(height, top))
    plot = height - top - fig.layout.margin.b
    legend = {"orientation": "h", "x": 0, "xanchor": "left", "yanchor": "bottom"}
    fig.update_layout(legend={**legend, "y": round(1 + (PANEL_TITLE + GAP) / plot, 4)})

    total = panels * panel_px + (panels - 1) * gap_px
    narrow = narrow_below(fig, top=NARROW_TOP + PANEL_TITLE, plot=total)
    middle, y_title = panels // 2, fig.layout.yaxis.title.text
    for i, domain in enumerate(stacked_domains(panels, total, gap_px)):
        x, y = f"xaxis{i + 1 if i else ''}", f"yaxis{i + 1 if i else ''}"
        narrow.update({f"{x}.domain": [0, 1], f"{y}.domain": domain, f"{y}.showticklabels": True})
        narrow.update({f"annotations[{i}].x": 0.5, f"annotations[{i}].y": domain[1]})
        if i < panels - 1:
            narrow[f"{x}.title.text"] = ""
        if i != middle:
            narrow[f"{y}.title.text"] = ""
    narrow[f"yaxis{middle + 1 if middle else ''}.title.text"] = y_title
    set_narrow(fig, narrow)
