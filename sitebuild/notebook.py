"""Show a Plotly figure in a notebook page of the site (no plotly.js in the output: the
site's single copy draws it, exactly as for the article's figures), with the figure's data as
a table under it (its text alternative)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import plotly.graph_objects as go

if TYPE_CHECKING:
    from IPython.display import HTML


def data_table(fig: go.Figure) -> str:
    """The points of the figure's traces as an HTML table: one row per point, the trace's
    name, x and y (a notebook page has no file of its own to publish a CSV in)."""
    rows = []
    for trace in fig.data:
        xs, ys = getattr(trace, "x", None), getattr(trace, "y", None)
        if xs is None or ys is None or trace.meta == "reference":
            continue
        name = html.escape(str(trace.name or ""))
        for x, y in zip(xs, ys):
            value = f"{y:.4g}" if isinstance(y, float) else html.escape(str(y))
            rows.append(f"<tr><td>{name}</td><td>{html.escape(str(x))}</td><td>{value}</td></tr>")
    x_title = html.escape(fig.layout.xaxis.title.text or "x")
    y_title = html.escape(fig.layout.yaxis.title.text or "y")
    head = f"<thead><tr><th>series</th><th>{x_title}</th><th>{y_title}</th></tr></thead>"
    return f"<table>{head}<tbody>{''.join(rows)}</tbody></table>"


def show(fig: go.Figure, figure_id: str, caption: str = "") -> HTML:
    """IPython HTML output with the figure as the site embeds it, and its data as a table."""
    from IPython.display import HTML

    from sitebuild.build import figure_fragment

    return HTML(figure_fragment(figure_id, caption or figure_id, caption, fig, table=data_table(fig)))
