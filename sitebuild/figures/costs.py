"""Drawing what a pass costs: the roofline, the arithmetic bill, memory, context and heads."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment
from sitebuild.figures.common import SPEEDUP_HOVER, UNFIT_SYMBOL, named_groups, point_colors, sequences
from sitebuild.figures.placement import (
    TITLE_LINE,
    X_BAND,
    legend_above,
    legend_below,
    narrow_below,
    set_narrow,
    sparse_ticks,
    stacked_domains,
)


def roofline(data: pd.DataFrame) -> go.Figure:
    """The verify pass's memory and arithmetic time (top) and idle share (bottom) vs concurrency."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4])
    fig.update_layout(template=th.TEMPLATE, height=520, autosize=True)
    batch = data["concurrency"]
    # (column, scale, name, colour, hover text, row, extra style)
    series: tuple[tuple[str, float, str, str, str, int, dict[str, str]], ...] = (
        ("memory_time", 1e3, "memory time", th.MEMORY, "%{y:.2f} ms moving bytes", 1, {}),
        ("compute_time", 1e3, "arithmetic time", th.COMPUTE, "%{y:.2f} ms of arithmetic", 1, {}),
        ("idle", 100, "tensor cores idle", th.IDLE, "idle %{y:.0f}% of the pass", 2, {"fill": "tozeroy"}),
    )
    for column, scale, name, color, hover, row, extra in series:
        trace = go.Scatter(
            x=batch, y=data[column] * scale, name=name, mode="lines", line={"color": color, "width": 2.5},
            hovertext=sequences(batch), hovertemplate="%{hovertext}: " + hover + "<extra></extra>", **extra,
        )  # fmt: skip
        fig.add_trace(trace, row=row, col=1)
    ticks = th.log2_axis([2**i for i in range(11)])
    fig.update_xaxes(**ticks)
    fig.update_xaxes(title_text="concurrent sequences (gamma 4, context 2048)", row=2, col=1)
    fig.update_yaxes(type="log", title_text="verify pass, ms", row=1, col=1)
    fig.update_yaxes(range=[0, 100], ticksuffix="%", title_text="idle", row=2, col=1)
    legend_above(fig)
    narrow = {"xaxis2.title.text": "concurrent sequences<br>(gamma 4, context 2048)"}
    set_narrow(
        fig,
        narrow_below(fig, 580, band=X_BAND + TITLE_LINE, extra={**narrow, **sparse_ticks(ticks["tickvals"], axes=2)}),
    )
    return fig


def arithmetic_bill(data: pd.DataFrame, deployment: ArticleDeployment) -> go.Figure:
    """Arithmetic per output token vs gamma: simulated points and Theorem 3.11 lines."""
    fig = th.base_figure()
    styles = {
        "simulated": {"mode": "markers", "marker": {"size": 10}},
        "theorem": {"mode": "lines", "line": {"width": 2, "dash": "dot"}},
    }
    for series, part in named_groups(data, "series"):
        kind, drafter, profile = part[["kind", "drafter", "profile"]].iloc[0]
        # A theorem line takes the colour of the dots it explains: the same drafter under the
        # theorem's own assumption, the same acceptance at every position.
        same_draft = profile == "same" and drafter == deployment.draft
        color = th.SAME_ACCEPTANCE if same_draft else th.drafter_color(drafter, deployment)
        style = {k: (dict(v, color=color) if isinstance(v, dict) else v) for k, v in styles[kind].items()}
        fig.add_trace(
            go.Scatter(
                x=part["gamma"],
                y=part["ratio"],
                name=series,
                **style,
                hovertemplate="gamma %{x}: %{y:.2f}x the FLOPs per output token<extra>" + series + "</extra>",
            )
        )
    fig.update_layout(
        xaxis={"title": "draft tokens per iteration (gamma)", "dtick": 1},
        yaxis={
            "title": "FLOPs per output token vs plain",
            "ticksuffix": "x",
            "range": [1, float(data["ratio"].max()) * 1.05],
        },
    )
    legend_below(fig)
    set_narrow(fig, narrow_below(fig, 460))
    return fig


def memory_footprint(data: pd.DataFrame) -> go.Figure:
    """Weights vs KV cache per token for the three models (two panels)."""
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("weights (GiB, bf16)", "KV cache per token (KiB)"), horizontal_spacing=0.14
    )
    fig.update_layout(template=th.TEMPLATE, height=380, autosize=True, showlegend=False)
    colors = [th.NEUTRAL, th.ROLE_COLORS["draft"], th.ROLE_COLORS["big_draft"]]
    panels = (
        ("weights_gib", "{:.2f}", ".2f", "GiB of weights"),
        ("kv_kib_per_token", "{:.0f}", ".0f", "KiB of cache per token"),
    )
    for col, (column, label, hover, unit) in enumerate(panels, start=1):
        fig.add_trace(
            go.Bar(
                x=data["model"],
                y=data[column],
                marker_color=colors,
                text=data[column].map(label.format),
                textposition="outside",
                cliponaxis=False,
                hovertemplate=f"%{{x}}: %{{y:{hover}}} {unit}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_yaxes(range=[0, float(data[column].max()) * 1.2], row=1, col=col)
    fig.update_xaxes(tickangle=0, tickfont_size=12)  # the models' names stay level in a 600 px figure
    # Narrow: the panels one over the other, each with its title over it.
    height, top, bottom = 560, 36, 56
    upper, lower = stacked_domains(2, height - top - bottom, 62)
    narrow = {"height": height, "margin.t": top, "margin.b": bottom, "xaxis.domain": [0, 1], "xaxis2.domain": [0, 1]}
    narrow.update({"yaxis.domain": upper, "yaxis2.domain": lower})
    for i, domain in enumerate((upper, lower)):
        narrow.update({f"annotations[{i}].x": 0.5, f"annotations[{i}].y": domain[1]})
    set_narrow(fig, narrow)
    return fig


#: Hover text added to a point that does not fit in memory.
FITS_NOTE = {True: "", False: "<br>does not fit in memory"}


def context_sweep(data: pd.DataFrame, concurrency: int, deployment: ArticleDeployment) -> go.Figure:
    """Speedup (top) and the drafter's share of wall clock (bottom) vs context."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    fig.update_layout(template=th.TEMPLATE, height=520, autosize=True)
    for drafter, part in named_groups(data, "drafter"):
        color, label = th.drafter_color(drafter, deployment), th.drafter_label(drafter)
        # Open markers: the scenario does not fit in memory (as on the ladder).
        symbols = ["circle" if f else UNFIT_SYMBOL for f in part["fits"]]
        marker = {"size": 8, "color": point_colors(part["speedup"], color), "symbol": symbols, "line": {"width": 2}}
        fig.add_trace(
            go.Scatter(
                x=part["context"],
                y=part["speedup"],
                mode="lines+markers",
                name=label,
                line={"color": color, "width": 2.5},
                marker=marker,
                legendgroup=drafter,
                text=[FITS_NOTE[bool(f)] for f in part["fits"]],
                hovertemplate="context %{x:,}: " + SPEEDUP_HOVER + "%{text}<extra>" + label + "</extra>",
            ),
            row=1,
            col=1,
        )
        if drafter != "ngram":
            fig.add_trace(
                go.Scatter(
                    x=part["context"],
                    y=part["draft_share"] * 100,
                    mode="lines+markers",
                    name=label,
                    line={"color": color, "width": 2.5},
                    marker={"symbol": symbols, "line": {"width": 2}, "color": color},
                    showlegend=False,
                    legendgroup=drafter,
                    hovertemplate="context %{x:,}: %{y:.0f}% of wall clock drafting<extra>" + label + "</extra>",
                ),
                row=2,
                col=1,
            )
    x = data["context"]
    th.reference_line(fig, 1.0, x.min(), x.max(), row=1, col=1)
    fig.update_xaxes(**th.log2_axis(sorted(x.unique())))
    fig.update_xaxes(title_text=f"context, prompt tokens per sequence ({concurrency} sequences)", row=2, col=1)
    fig.update_yaxes(title_text="speedup", ticksuffix="x", range=[0, float(data["speedup"].max()) * 1.1], row=1, col=1)
    fig.update_yaxes(title_text="draft share", ticksuffix="%", range=[0, 100], row=2, col=1)
    legend_above(fig)
    title = f"prompt tokens ({concurrency} sequences)"
    set_narrow(
        fig, narrow_below(fig, 650, extra={"xaxis2.title.text": title, **sparse_ticks(sorted(x.unique()), axes=2)})
    )
    return fig


def head_costs(data: pd.DataFrame) -> go.Figure:
    """Bytes one draft step reads per drafter at one sequence: the LM head against the rest."""
    fig = th.base_figure(height=360)
    labels = [th.drafter_label(d) for d in data["drafter"]]
    rest = data["weights_read_gib"] - data["lm_head_gib"]
    fig.add_trace(
        go.Bar(
            y=labels,
            x=data["lm_head_gib"],
            orientation="h",
            name="output (LM) head",
            marker_color=th.COMPUTE,
            customdata=data["vocabulary"],
            hovertemplate="%{y}: %{x:.2f} GiB of LM head over %{customdata:,} tokens<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            y=labels,
            x=rest,
            orientation="h",
            name="everything else",
            marker_color=th.MEMORY,
            hovertemplate="%{y}: %{x:.2f} GiB of other weights<extra></extra>",
        )
    )
    fig.update_layout(
        barmode="stack",
        xaxis={"title": "weights read per draft step, GiB", "range": [0, float(data["weights_read_gib"].max()) * 1.1]},
        yaxis={"autorange": "reversed"},
    )
    legend_below(fig)
    short = [th.drafter_short_label(d) for d in data["drafter"]]
    narrow = {"xaxis.title.text": "GiB read per draft step", "yaxis.tickvals": labels, "yaxis.ticktext": short}
    set_narrow(fig, narrow_below(fig, 380, extra=narrow))
    return fig
