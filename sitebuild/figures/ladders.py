"""Drawing the ladders (speedup against concurrency, on one card or several) and the break-even map."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment
from sitebuild.figures import placement as pl
from sitebuild.figures.common import SPEEDUP_HOVER, UNFIT_SYMBOL, point_colors, sequences, slider, visibility_steps
from specmodel.formatting import EVEN_MARGIN, verdict


def _ladder_trace(
    part: pd.DataFrame,
    drafter: str,
    context: int,
    visible: bool,
    deployment: ArticleDeployment,
    showlegend: bool = True,
    where: str = "",
) -> go.Scatter:
    """One drafter's speedup vs concurrency at one context; filled markers fit on the card,
    open ones do not."""
    color = th.drafter_color(drafter, deployment)
    fits = part["fits"].to_numpy(dtype=bool)
    return go.Scatter(
        x=part["concurrency"],
        y=part["speedup"],
        mode="lines+markers",
        name=th.drafter_label(drafter),
        line={"color": color, "width": 2.5},
        marker={
            "size": 9,
            "color": point_colors(part["speedup"], color),
            "line": {"width": 2},
            "symbol": ["circle" if f else UNFIT_SYMBOL for f in fits],
        },
        customdata=np.stack(
            [part["spec_tokens_per_s"], part["base_tokens_per_s"], part["memory_gib"], part["usable_gib"]], axis=-1
        ),
        text=["fits on the card" if f else "does not fit in memory" for f in fits],
        hovertext=sequences(part["concurrency"]),
        hovertemplate="%{hovertext}<br>"
        + SPEEDUP_HOVER
        + "<br>%{customdata[0]:,.0f} vs %{customdata[1]:,.0f} tokens/s"
        + "<br>%{text}: needs %{customdata[2]:,.1f} of %{customdata[3]:,.1f} GiB<extra>"
        + th.drafter_label(drafter)
        + f", context {context}{where}</extra>",
        visible=visible,
        legendgroup=drafter,
        showlegend=showlegend,
    )


def ladder(data: pd.DataFrame, deployment: ArticleDeployment, default_context: int = 2048) -> go.Figure:
    """Speedup vs concurrency for each drafter, with a slider over context; open markers do
    not fit in memory."""
    fig = th.base_figure(height=480)
    contexts = sorted(data["context"].unique())
    groups = []
    for context in contexts:
        group = []
        for drafter, part in data[data["context"] == context].groupby("drafter", sort=False):
            group.append(len(fig.data))
            fig.add_trace(_ladder_trace(part, drafter, context, bool(context == default_context), deployment))
        groups.append(group)
    x = data["concurrency"]
    always = [len(fig.data)]
    th.reference_line(fig, 1.0, x.min(), x.max())
    fig.add_annotation(
        xref="paper",
        yref="paper",
        x=1,
        y=0.02,
        xanchor="right",
        yanchor="bottom",
        showarrow=False,
        text="open markers: does not fit in memory",
        font={"size": 11},
    )
    steps = visibility_steps([f"{c:,}" for c in contexts], groups, always, "context")
    fig.update_layout(
        sliders=[slider(steps, contexts.index(default_context), "context (prompt tokens): ")],
        xaxis={**th.log2_axis(sorted(x.unique())), "title": "concurrent sequences"},
        yaxis={
            "title": "speedup over plain decoding",
            "range": [0, float(data["speedup"].max()) * 1.08],
            "ticksuffix": "x",
        },
    )
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 600, slider=True, extra=pl.sparse_ticks(sorted(x.unique()))))
    return fig


def hardware_ladders(data: pd.DataFrame, deployment: ArticleDeployment, default_context: int = 2048) -> go.Figure:
    """The ladder on several cards side by side (one panel each, shared speedup axis), with
    one slider over context for all panels; open markers do not fit on that card."""
    cards = list(dict.fromkeys(data["hardware"]))
    names = [data.loc[data["hardware"] == c, "hardware_name"].iloc[0] for c in cards]
    fig = make_subplots(rows=1, cols=len(cards), shared_yaxes=True, horizontal_spacing=0.03, subplot_titles=names)
    fig.update_layout(template=th.TEMPLATE, height=500, autosize=True)
    contexts = sorted(data["context"].unique())
    x = data["concurrency"]
    groups = []
    for context in contexts:
        group = []
        for col, card in enumerate(cards, start=1):
            part_ctx = data[(data["hardware"] == card) & (data["context"] == context)]
            for drafter, part in part_ctx.groupby("drafter", sort=False):
                group.append(len(fig.data))
                fig.add_trace(
                    _ladder_trace(
                        part,
                        drafter,
                        context,
                        bool(context == default_context),
                        deployment,
                        col == 1,
                        f", {names[col - 1]}",
                    ),
                    row=1,
                    col=col,
                )
        groups.append(group)
    always = []
    for col in range(1, len(cards) + 1):
        always.append(len(fig.data))
        th.reference_line(fig, 1.0, x.min(), x.max(), row=1, col=col)
    steps = visibility_steps([f"{c:,}" for c in contexts], groups, always, "context")
    fig.update_xaxes(**th.log2_axis([2**i for i in range(0, 11, 2)]), title_text="concurrent sequences")
    fig.update_yaxes(range=[0, float(data["speedup"].max()) * 1.08], ticksuffix="x")
    fig.update_yaxes(title_text="speedup over plain decoding", row=1, col=1)
    fig.update_layout(sliders=[slider(steps, contexts.index(default_context), "context (prompt tokens): ")])
    pl.side_by_side(fig, len(cards), slider=True)
    return fig


def _map_traces(
    part: pd.DataFrame, drafter: str, xs: list[str], ys: list[str], span: float, visible: bool
) -> list[go.BaseTraceType]:
    """One drafter's layer of the map: the heatmap of speedups (best gamma written in each
    cell), the 1.0x contour, and open boxes on the cells that do not fit in memory."""
    contexts, concurrencies = [int(y) for y in ys], [int(x) for x in xs]
    speed = part["speedup"].loc[contexts, concurrencies].to_numpy()
    gamma = part["best_gamma"].loc[contexts, concurrencies].to_numpy()
    label = th.drafter_label(drafter)
    gains = np.vectorize(lambda x: verdict(float(x)) == "faster")(speed)
    # A flat near-white band over the speedups called even (within EVEN_MARGIN of 1x).
    band = float(np.log2(1 + EVEN_MARGIN)) / (2 * span)
    heatmap = go.Heatmap(
        x=xs, y=ys, z=np.log2(speed), zmin=-span, zmax=span,
        colorscale=[[0.0, th.LOSS], [0.5 - band, "#f2f2f2"], [0.5 + band, "#f2f2f2"], [1.0, th.ROLE_COLORS["ngram"]]],
        text=np.where(gains, gamma.astype(str), "off"), texttemplate="%{text}", customdata=speed,
        hovertext=[sequences(concurrencies)] * len(contexts), visible=visible, name=label,
        colorbar={"title": {"text": "speedup"}, "tickvals": [-2, -1, 0, 1, 2],
                  "ticktext": ["0.25x", "0.5x", "1x", "2x", "4x"]},
        hovertemplate="%{hovertext}, context %{y}<br>best gamma %{text}: %{customdata:.2f}x<extra>" + label
        + "</extra>",
    )  # fmt: skip
    # Unlabelled: a label would print over the cells' numbers (the caption says what the line is).
    contour = go.Contour(
        x=xs, y=ys, z=speed, contours={"start": 1, "end": 1, "size": 1, "coloring": "none", "showlabels": False},
        # Dark in both schemes: it runs over the map's near-white 1x cells, not the page.
        line={"width": 3, "color": "#1f1f1f"}, showscale=False, visible=visible, hoverinfo="skip",
        showlegend=False, name="1.0x contour",
    )  # fmt: skip
    rows, cols = np.nonzero(~part["fits"].loc[contexts, concurrencies].to_numpy(dtype=bool))
    boxes = go.Scatter(
        x=[xs[c] for c in cols], y=[ys[r] for r in rows], mode="markers", visible=visible, showlegend=False,
        marker={"symbol": "square-open", "size": 30, "line": {"width": 1.5}, "color": th.NEUTRAL},
        name="does not fit in memory", hovertext=sequences([concurrencies[c] for c in cols]),
        customdata=[[float(speed[r, c]), str(gamma[r, c]) if gains[r, c] else "off"] for r, c in zip(rows, cols)],
        hovertemplate="%{hovertext}, context %{y}<br>best gamma %{customdata[1]}: %{customdata[0]:.2f}x,"
        " but does not fit in memory<extra>" + label + "</extra>",
    )  # fmt: skip
    return [heatmap, contour, boxes]


def breakeven_map(data: pd.DataFrame, deployment: ArticleDeployment, default: str | None = None) -> go.Figure:
    """Speedup at the best gamma over concurrency x context, per drafter (buttons), with the
    1.0x contour and the best gamma written in each cell."""
    fig = th.base_figure(height=520)
    default = default or deployment.draft
    drafters = list(dict.fromkeys(data["drafter"]))
    xs = [str(batch) for batch in sorted(data["concurrency"].unique())]
    ys = [str(c) for c in sorted(data["context"].unique())]
    span = max(abs(float(np.log2(data["speedup"].min()))), abs(float(np.log2(data["speedup"].max()))))
    groups = []
    for drafter in drafters:
        part = data[data["drafter"] == drafter].pivot(index="context", columns="concurrency")
        start = len(fig.data)
        fig.add_traces(_map_traces(part, drafter, xs, ys, span, drafter == default))
        groups.append([start, start + 1, start + 2])
    buttons = []
    for drafter, group in zip(drafters, groups):
        visible = [i in group for i in range(len(fig.data))]
        buttons.append({"method": "restyle", "args": [{"visible": visible}], "label": th.drafter_short_label(drafter)})
    # name: the label of the page's own control for this menu (docs/javascripts/figures.js).
    menu = {"name": "drafter", "type": "buttons", "direction": "right", "buttons": buttons,
            "active": drafters.index(default), "x": 0, "y": 1.14, "xanchor": "left", "showactive": True}  # fmt: skip
    fig.update_layout(
        updatemenus=[menu],
        xaxis={"title": "concurrent sequences", "type": "category"},
        yaxis={"title": "context (prompt tokens)", "type": "category"},
        margin={"t": 70},
    )
    pl.legend_below(fig)
    _map_narrow(fig, xs, groups)
    return fig


COLORBAR = 66  # px a horizontal colour bar takes: title, bar and labels


def _map_narrow(fig: go.Figure, xs: list[str], groups: list[list[int]]) -> None:
    """Narrow: a dropdown instead of the row of buttons, every other column labelled, cell
    text of 10 px, smaller boxes, and the colour bar laid flat under the plot."""
    height, top = 570, 56
    menu = {"type": "dropdown", "direction": "down", "x": 0, "xanchor": "left", "y": 1, "yanchor": "bottom"}
    paths = {f"updatemenus[0].{k}": v for k, v in menu.items()}
    paths.update(
        {"updatemenus[0].pad.b": 8, "xaxis.tickvals": xs[::2], "xaxis.ticktext": xs[::2], "xaxis.tickangle": 0}
    )
    narrow = pl.narrow_below(fig, height, top=top, band=pl.X_BAND + pl.GAP + COLORBAR, extra=paths)
    colorbar = {"orientation": "h", "x": 0, "xanchor": "left", "len": 1, "thickness": 10, "yanchor": "top"}
    colorbar["y"] = round(-(pl.X_BAND + pl.GAP) / (height - top - narrow["margin.b"]), 4)
    heatmap = {"textfont.size": 10, "colorbar.title.side": "top", **{f"colorbar.{k}": v for k, v in colorbar.items()}}
    heatmaps, boxes = [g[0] for g in groups], [g[2] for g in groups]
    pl.set_narrow(fig, narrow, [(heatmaps, heatmap), (boxes, {"marker.size": 22})])
