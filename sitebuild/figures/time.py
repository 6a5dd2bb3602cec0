"""Drawing where the time goes (a step's time per generated token split into its parts, plain
against speculative, at every rung) and what it buys (each user's token rate against the
server's total)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment
from sitebuild.figures.common import UNFIT_SYMBOL, named_groups, sequences
from sitebuild.figures.placement import legend_below, narrow_below, set_narrow
from specmodel.model.timing import TIME_PARTS

#: Each part's legend label and colour: the target's in blues and orange, the drafter's in
#: purples and green, communication in teal, the engine's fixed costs grey.
PARTS = {
    "target_weights": ("target: weights", "#3b6fd8"),
    "target_kv": ("target: cache", "#8fb0ee"),
    "target_arithmetic": ("target: arithmetic not hidden", "#e0662f"),
    "draft_weights": ("drafter: weights", "#7c6bd6"),
    "draft_kv": ("drafter: cache", "#b9aef0"),
    "draft_arithmetic": ("drafter: arithmetic not hidden", "#5c8a2e"),
    "communication": ("all-reduces", "#0f9d8a"),
    "engine_fixed": ("engine fixed costs", th.NEUTRAL),
}
MODES = {"plain": "plain", "speculative": "spec."}


def time_breakdown(data: pd.DataFrame) -> go.Figure:
    """Stacked bars, two per rung (plain, speculative), of the time per generated token as a
    share of the plain step's, by part; a menu switches between the cases (drafter, context).
    Parts that are zero in every case are left out of the legend."""
    fig = th.base_figure(height=500)
    cases = list(dict.fromkeys(data["case"]))
    used = [p for p in TIME_PARTS if data.loc[data["part"] == p, "share"].max() > 1e-9]
    groups: list[list[int]] = []
    for c, case in enumerate(cases):
        group = []
        part_of_case = data[data["case"] == case]
        for name in used:
            rows = part_of_case[part_of_case["part"] == name].sort_values(["concurrency", "mode"])
            label, color = PARTS[name]
            rungs = [f"{b:,}" for b in rows["concurrency"]]
            modes = [MODES[m] for m in rows["mode"]]
            group.append(len(fig.data))
            fig.add_trace(go.Bar(
                x=[rungs, modes], y=rows["share"], name=label, marker={"color": color}, visible=c == 0,
                legendgroup=name, showlegend=True,
                customdata=np.stack([rows["seconds"] * 1e3, rows["speedup"]], axis=-1),
                hovertemplate="%{x}: %{y:.2f} of a plain step, %{customdata[0]:.3f} ms per token"
                              "<br>speedup %{customdata[1]:.2f}x<extra>" + label + "</extra>",
            ))  # fmt: skip
        groups.append(group)
    totals = data.groupby(["case", "concurrency", "mode"])["share"].sum()
    top = float(np.ceil(totals.max() * 10) / 10)
    buttons = []
    for case, group in zip(cases, groups):
        visible = [i in group for i in range(len(fig.data))]
        buttons.append({"method": "restyle", "args": [{"visible": visible}], "label": case})
    # name: the label of the page's own control for this menu (docs/javascripts/figures.js).
    menu = {"name": "drafter and prompt length", "type": "dropdown", "direction": "down", "buttons": buttons,
            "active": 0, "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom", "pad": {"b": 4}}  # fmt: skip
    fig.update_layout(
        barmode="stack",
        updatemenus=[menu],
        margin={"t": 48},
        xaxis={"title": "concurrent sequences: plain decoding and speculation", "type": "multicategory"},
        yaxis={"title": "time per token, share of a plain step", "range": [0, top]},
    )
    # The plain step's time: a bar above this line takes longer than plain decoding.
    fig.add_shape(type="line", xref="paper", x0=0, x1=1, y0=1, y1=1, line={"dash": "dash", "width": 1.5,
                  "color": th.NEUTRAL})  # fmt: skip
    legend_below(fig, band=104)  # two rows of tick labels (rung, plain or speculative) and the title
    narrow = {"xaxis.tickfont.size": 9, "xaxis.title.text": "sequences: plain, spec."}
    set_narrow(fig, narrow_below(fig, 660, top=48, band=104, extra=narrow))
    return fig


def _decade_ticks(low: float, high: float) -> dict:
    """Ticks at 1, 2 and 5 times each power of ten between ``low`` and ``high``."""
    ticks = [m * 10**e for e in range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
             for m in (1, 2, 5) if low <= m * 10**e <= high]  # fmt: skip
    return {"tickvals": ticks, "ticktext": [f"{t:,.0f}" for t in ticks]}


def latency_throughput(data: pd.DataFrame, targets: tuple[float, float], deployment: ArticleDeployment) -> go.Figure:
    """Each user's token rate against the server's total, one line per configuration with a
    point per rung (open: does not fit), and the two per-user targets the article reads off."""
    fig = th.base_figure(height=480)
    for series, part in named_groups(data, "series"):
        drafter = part["drafter"].iloc[0]
        color = th.drafter_color(drafter, deployment) if drafter else th.NEUTRAL
        fits = part["fits"].to_numpy(dtype=bool)
        fig.add_trace(go.Scatter(
            x=part["total"], y=part["per_user"], name=series, mode="lines+markers",
            line={"color": color, "width": 2.5},
            marker={"size": 8, "color": color, "symbol": ["circle" if f else UNFIT_SYMBOL for f in fits],
                    "line": {"width": 2, "color": color}},
            hovertext=sequences(part["concurrency"]),
            text=["" if f else " (does not fit)" for f in fits],
            hovertemplate="%{hovertext}%{text}: %{y:,.0f} tokens/s per user, %{x:,.0f} in all<extra>"
                          + series + "</extra>",
        ))  # fmt: skip
    low_x, high_x = float(data["total"].min()) * 0.8, float(data["total"].max()) * 1.25
    for target, dash in zip(targets, ("dash", "dashdot")):
        # A target rate per user, named in the legend (a label on the plot would sit on the points).
        fig.add_trace(go.Scatter(
            x=[low_x, high_x], y=[target, target], mode="lines", name=f"target: {target:,.0f} tokens/s per user",
            line={"dash": dash, "width": 1.5, "color": th.NEUTRAL}, meta=th.REFERENCE, hoverinfo="skip",
        ))  # fmt: skip
    low_y, high_y = float(data["per_user"].min()) * 0.8, float(data["per_user"].max()) * 1.25
    fig.update_layout(
        xaxis={"type": "log", "title": "tokens per second, all users together", "range": np.log10([low_x, high_x]),
               **_decade_ticks(low_x, high_x)},
        yaxis={"type": "log", "title": "tokens per second, each user", "range": np.log10([low_y, high_y]),
               **_decade_ticks(low_y, high_y)},
    )  # fmt: skip
    legend_below(fig)
    set_narrow(fig, narrow_below(fig, 620))
    return fig
