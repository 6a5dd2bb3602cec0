"""Colours and the base layout shared by every figure.

Trace colours are mid-tones that read on both the light and the dark scheme; what must
change with the scheme (text, grid, reference lines) is re-themed in the browser by
docs/javascripts/figures.js, which finds reference traces by ``meta == "reference"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import plotly.graph_objects as go

from sitebuild.config import ArticleDeployment
from specmodel.model import drafters

#: The verdict colours, against plain decoding (:func:`specmodel.formatting.verdict`): faster,
#: within 3% of even (and the dashed 1.0x line, which is even), slower. They mean nothing else
#: anywhere on the site: no drafter, part, engine or sequence colour takes them. The page's CSS
#: has them as --sm-gain, --sm-even and --sm-loss (docs/stylesheets/extra.css).
GAIN = "#0f9d8a"  # teal
EVEN = "#8a8f98"  # grey
LOSS = "#c8359d"  # magenta
VERDICT = (GAIN, EVEN, LOSS)

#: Drafter colours by role: the article's draft model, its larger draft, and the rest by name.
ROLE_COLORS = {
    "draft": "#3b6fd8",  # blue
    "big_draft": "#d9822b",  # orange
    "ngram": "#a67c00",  # gold
    "eagle": "#7c6bd6",  # purple
    "eagle-32k": "#5c8a2e",  # green
    "mtp": "#9c6b4e",  # brown
}
MEMORY = "#3b6fd8"
COMPUTE = "#e0662f"
IDLE = "#7c6bd6"
#: What has neither a role nor a verdict: the target, plain decoding drawn as a series, outlines,
#: the diagonal of a predicted-against-measured figure, a drafter without a role colour.
MUTED = "#6b7280"  # dark grey
#: Each engine's colour: the ideal roofline in the arithmetic's orange, the vLLM profile in purple.
ENGINE_COLORS = {"ideal": COMPUTE, "vllm": "#7c6bd6"}
#: The model draft under the same acceptance at every position (vs its falling profile).
SAME_ACCEPTANCE = "#7c6bd6"
#: Colours of series that are neither drafters nor verdicts (the drafters' own, in order).
SEQUENCE = ("#3b6fd8", "#d9822b", "#7c6bd6", "#5c8a2e", "#a67c00", "#9c6b4e")
REFERENCE = "reference"  # meta tag of traces the page re-colours with the scheme

HEIGHT = 400
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"

#: A minimal template (no per-trace defaults): figures stay small and theme-neutral.
TEMPLATE = go.layout.Template(
    layout=go.Layout(
        font={"family": FONT, "size": 13, "color": "#3c3f45"},
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        colorway=list(SEQUENCE),
        hovermode="closest",
        margin={"l": 64, "r": 24, "t": 36, "b": 56},
        # Above the plot, where Plotly grows the top margin to fit however many rows it takes:
        # it never covers the data or the x-axis title. Figures of the site place their own.
        legend={
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": 1.02,
            "yanchor": "bottom",
            "bgcolor": "rgba(0,0,0,0)",
        },
        xaxis={
            "gridcolor": "rgba(128,128,128,0.25)",
            "zeroline": False,
            "linecolor": "rgba(128,128,128,0.6)",
            "ticks": "outside",
            "automargin": True,
        },
        yaxis={
            "gridcolor": "rgba(128,128,128,0.25)",
            "zeroline": False,
            "linecolor": "rgba(128,128,128,0.6)",
            "ticks": "outside",
            "automargin": True,
        },
    )
)


def base_figure(**layout: Any) -> go.Figure:
    """An empty figure with the site's template, responsive width and fixed height."""
    fig = go.Figure()
    fig.update_layout(**{"template": TEMPLATE, "height": HEIGHT, "autosize": True, **layout})
    return fig


def reference_line(
    fig: go.Figure,
    y: float,
    x0: float,
    x1: float,
    label: str = "plain decoding",
    row: int | None = None,
    col: int | None = None,
    at: str = "left",
    color: str = EVEN,
) -> None:
    """A dashed horizontal reference (the 1.0x line by default), tagged for re-theming, with
    a small label on single-panel figures: under the line at its left end (``at="left"``,
    where a speedup curve is usually well above 1x) or over it at its right end
    (``at="right"``). Its colour is the verdict "even" unless ``color`` says otherwise (a line
    that is not the 1.0x one)."""
    trace = go.Scatter(
        x=[x0, x1],
        y=[y, y],
        mode="lines",
        line={"dash": "dash", "width": 1.5, "color": color},
        name=label,
        meta=REFERENCE,
        hoverinfo="skip",
        showlegend=False,
    )
    if row is None:
        fig.add_trace(trace)
        if label:
            left = at == "left"
            fig.add_annotation(
                xref="paper",
                x=0 if left else 1,
                y=y,
                text=label,
                showarrow=False,
                xanchor="left" if left else "right",
                yanchor="top" if left else "bottom",
                font={"size": 11},
            )
    else:
        fig.add_trace(trace, row=row, col=col)


def log2_axis(values: Iterable[float]) -> dict:
    """A log axis with ticks at the given powers of two."""
    values = list(values)
    return {"type": "log", "tickvals": values, "ticktext": [f"{v:g}" for v in values]}


def drafter_role(name: str, deployment: ArticleDeployment) -> str:
    """``draft`` or ``big_draft`` for the deployment's two draft models, else the name."""
    return {deployment.draft: "draft", deployment.big_draft: "big_draft"}.get(name, name)


def drafter_color(name: str, deployment: ArticleDeployment) -> str:
    """The colour of a drafter's traces (MUTED for one without a role colour)."""
    return ROLE_COLORS.get(drafter_role(name, deployment), MUTED)


def drafter_label(name: str) -> str:
    """The legend label of a drafter: ``Qwen3-0.6B draft``, ``n-gram lookup``, ``EAGLE head``."""
    label = drafters.drafter_label(name)
    return label + " draft" if drafters.drafter_kind(name) == "model" else label


def drafter_short_label(name: str) -> str:
    """A drafter's name for a button: ``Qwen3-0.6B``, ``n-gram``, ``EAGLE-32K``."""
    kind = drafters.drafter_kind(name)
    if kind == "model":
        return drafters.drafter_label(name)
    return "n-gram" if kind == "ngram" else name.upper()
