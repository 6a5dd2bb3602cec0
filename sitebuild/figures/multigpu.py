"""Drawing the page "Beyond one GPU": ladders on several GPUs side by side (with the public
measurements where they exist), a chain against trees, the weights a mixture-of-experts pass
reads, and the four-GPU measurements against the model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment
from sitebuild.figures import placement as pl
from sitebuild.figures.common import (
    IDEAL_SYMBOL,
    SPEEDUP_HOVER,
    UNFIT_SYMBOL,
    named_groups,
    point_colors,
    sequences,
)
from specmodel.model.drafters import drafter_kind

SPEEDUP_AXIS = "speedup over plain decoding"
#: Ticks of the concurrency axis of side-by-side panels (every other power of two).
PANEL_TICKS = [2**i for i in range(0, 11, 2)]
#: Marker of a public measurement, drawn over the model's curve.
MEASURED_SYMBOL = "diamond"
#: The chain and the trees, in the order of TREES (sitebuild.figures_data_multigpu).
TREE_COLORS = ("#3b6fd8", "#d9822b", "#7c6bd6")
#: The two targets of the mixture-of-experts figure: the MoE model, then the dense one.
MODEL_COLORS = ("#d9822b", "#3b6fd8")


def drafter_color(drafter: str, deployment: ArticleDeployment) -> str:
    """A drafter's colour; a draft model outside the deployment's roles takes the draft's."""
    color = th.drafter_color(drafter, deployment)
    return th.ROLE_COLORS["draft"] if color == th.NEUTRAL and drafter_kind(drafter) == "model" else color


def _curve(part: pd.DataFrame, drafter: str, panel: str, color: str, showlegend: bool) -> go.Scatter:
    """One drafter's speedup against concurrency on one deployment; open markers do not fit."""
    fits = part["fits"].to_numpy(dtype=bool)
    gpus = int(part["gpus"].iloc[0])
    where = "1 GPU" if gpus == 1 else f"{gpus} GPUs"
    return go.Scatter(
        x=part["concurrency"], y=part["speedup"], mode="lines+markers", name=th.drafter_label(drafter),
        line={"color": color, "width": 2.5}, legendgroup=drafter, showlegend=showlegend,
        marker={"size": 8, "color": point_colors(part["speedup"], color), "line": {"width": 2},
                "symbol": ["circle" if f else UNFIT_SYMBOL for f in fits]},
        customdata=np.stack([part["spec_tokens_per_s"], part["base_tokens_per_s"], part["memory_gib"],
                             part["usable_gib"]], axis=-1),
        text=[f"fits on {where}" if f else f"does not fit on {where}" for f in fits],
        hovertext=sequences(part["concurrency"]),
        hovertemplate="%{hovertext}<br>" + SPEEDUP_HOVER + "<br>%{customdata[0]:,.0f} vs %{customdata[1]:,.0f} "
        "tokens/s<br>%{text}: needs %{customdata[2]:,.1f} of %{customdata[3]:,.1f} GiB per GPU<extra>"
        + th.drafter_label(drafter) + f", {panel}</extra>",
    )  # fmt: skip


def _measured(part: pd.DataFrame, drafter: str, panel: str, color: str) -> go.Scatter:
    """The published measurements of one series, with the model's prediction of each."""
    note = ["the acceptance is fitted here" if f else "predicted with that acceptance" for f in part["fitted"]]
    return go.Scatter(
        x=part["batch"], y=part["measured"], mode="markers", name="measured", legendgroup=drafter,
        showlegend=False, marker={"size": 13, "symbol": MEASURED_SYMBOL, "color": color,
                                  "line": {"width": 1.5, "color": th.NEUTRAL}},
        customdata=np.stack([part["predicted"], 100 * (part["predicted"] / part["measured"] - 1)], axis=-1),
        text=note, hovertext=sequences(part["batch"]),
        hovertemplate="%{hovertext}: measured %{y:.2f}x<br>model %{customdata[0]:.2f}x (%{customdata[1]:+.0f}%): "
        "%{text}<extra>" + th.drafter_label(drafter) + f", {panel}</extra>",
    )  # fmt: skip


def panel_ladders(
    curves: pd.DataFrame, deployment: ArticleDeployment, points: pd.DataFrame | None = None, height: int = 480
) -> go.Figure:
    """Speedup against concurrency, one panel per value of ``panel`` (shared speedup axis),
    each drafter in its colour, open markers where the scenario does not fit; with the
    measured points (diamonds) of ``points`` where given."""
    panels = list(dict.fromkeys(curves["panel"]))
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.03, subplot_titles=panels)
    fig.update_layout(template=th.TEMPLATE, height=height, autosize=True)
    x = curves["concurrency"]
    for col, panel in enumerate(panels, start=1):
        for drafter, part in curves[curves["panel"] == panel].groupby("drafter", sort=False):
            color = drafter_color(drafter, deployment)
            fig.add_trace(_curve(part, drafter, panel, color, col == 1), row=1, col=col)
            if points is not None:
                mine = points[(points["panel"] == panel) & (points["drafter"] == drafter)]
                fig.add_trace(_measured(mine, drafter, panel, color), row=1, col=col)
        th.reference_line(fig, 1.0, x.min(), x.max(), row=1, col=col)
    if points is not None:  # one legend entry for the measured points of every drafter
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="measured (SpecDecode-Bench)",
                                 marker={"size": 12, "symbol": MEASURED_SYMBOL, "color": th.NEUTRAL}))  # fmt: skip
    top = max(float(curves["speedup"].max()), float(points["measured"].max()) if points is not None else 0.0)
    fig.update_xaxes(**th.log2_axis(PANEL_TICKS), title_text="concurrent sequences")
    fig.update_yaxes(range=[0, top * 1.08], ticksuffix="x")
    fig.update_yaxes(title_text=SPEEDUP_AXIS, row=1, col=1)
    pl.side_by_side(fig, len(panels))
    return fig


def tree_ladder(data: pd.DataFrame) -> go.Figure:
    """Speedup against concurrency of a chain and two trees of guesses; open markers do not fit."""
    fig = th.base_figure(height=460)
    for color, (_, part) in zip(TREE_COLORS, data.groupby("shape", sort=False)):
        label, fits = str(part["label"].iloc[0]), part["fits"].to_numpy(dtype=bool)
        fig.add_trace(go.Scatter(
            x=part["concurrency"], y=part["speedup"], mode="lines+markers", name=label,
            line={"color": color, "width": 2.5},
            marker={"size": 9, "color": point_colors(part["speedup"], color), "line": {"width": 2},
                    "symbol": ["circle" if f else UNFIT_SYMBOL for f in fits]},
            customdata=np.stack([part["mean_acceptance_length"], part["arithmetic_ratio"]], axis=-1),
            hovertext=sequences(part["concurrency"]),
            hovertemplate="%{hovertext}: " + SPEEDUP_HOVER + "<br>%{customdata[0]:.2f} tokens per verify pass "
            "(an upper bound)<br>%{customdata[1]:.2f}x the arithmetic of plain decoding<extra>" + label + "</extra>",
        ))  # fmt: skip
    x = data["concurrency"]
    th.reference_line(fig, 1.0, x.min(), x.max(), at="right")
    fig.update_layout(
        xaxis={**th.log2_axis(sorted(x.unique())), "title": "concurrent sequences"},
        yaxis={"title": SPEEDUP_AXIS, "ticksuffix": "x", "range": [0, float(data["speedup"].max()) * 1.08]},
    )
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 500, extra=pl.sparse_ticks(sorted(x.unique()))))
    return fig


def moe_weights(curves: pd.DataFrame, marks: pd.DataFrame) -> go.Figure:
    """Weights one pass reads against the token positions in it, for a mixture-of-experts and
    a dense model, with the plain step and the verify pass marked on each."""
    fig = th.base_figure(height=440)
    for color, (model, part) in zip(MODEL_COLORS, named_groups(curves, "model")):
        experts = int(part["experts"].iloc[0])
        text = [
            f"{d:.1f} of {experts} experts per layer" if experts else "every weight" for d in part["distinct_experts"]
        ]
        kind = "mixture of experts" if experts else "dense"
        fig.add_trace(go.Scatter(
            x=part["tokens"], y=part["weights_gib"], mode="lines", name=f"{model} ({kind})",
            line={"color": color, "width": 2.5}, text=text,
            hovertemplate="%{x} token positions: %{y:.1f} GiB, %{text}<extra>" + model + "</extra>",
        ))  # fmt: skip
    for kind, symbol in (("plain step", "circle"), ("verify pass", "diamond")):
        part = marks[marks["kind"] == kind]
        fig.add_trace(go.Scatter(
            x=part["tokens"], y=part["weights_gib"], mode="markers", name=f"{kind} at 1 and 64 sequences",
            marker={"size": 11, "symbol": symbol, "color": th.NEUTRAL, "line": {"width": 1, "color": th.NEUTRAL}},
            text=[f"{m}, {kind}" for m in part["model"]], hovertext=sequences(part["batch"]),
            hovertemplate="%{text}, %{hovertext}: %{x} positions, %{y:.1f} GiB<extra></extra>",
        ))  # fmt: skip
    top = float(curves["weights_gib"].max()) * 1.1
    ticks = [1, 4, 16, 64, 256, 1024]
    fig.update_layout(
        xaxis={**th.log2_axis(ticks), "title": "token positions in the pass (sequences x positions each)"},
        yaxis={"title": "weights read by the pass (GiB, all GPUs)", "range": [0, top]},
    )
    pl.legend_above(fig)
    title = {"xaxis.title.text": "token positions in the pass", "yaxis.title.text": "weights read (GiB)"}
    pl.set_narrow(fig, pl.narrow_below(fig, 480, extra=title))
    return fig


def multigpu_validation(data: pd.DataFrame) -> go.Figure:
    """Predicted against measured speedup on the four-GPU measurements: the held-out rows
    under each engine, and the batch-1 rows the acceptance is fitted on (on the diagonal)."""
    fig = th.base_figure(height=480)
    low = min(0.5, float(data["predicted"].min()) * 0.95)
    top = float(max(data["measured"].max(), data["predicted"].max())) * 1.05
    for share in (1.15, 0.85):
        fig.add_trace(go.Scatter(x=[low, top], y=[low * share, top * share], mode="lines", meta=th.REFERENCE,
                                 line={"color": th.NEUTRAL, "dash": "dot", "width": 1}, hoverinfo="skip",
                                 showlegend=False, name=f"{share - 1:+.0%}"))  # fmt: skip
    fig.add_trace(go.Scatter(x=[low, top], y=[low, top], mode="lines", meta=th.REFERENCE, hoverinfo="skip",
                             name="measured = predicted", line={"color": th.NEUTRAL, "width": 1.5}))  # fmt: skip
    styles = {
        "ideal": ("ideal roofline, held out", IDEAL_SYMBOL, th.COMPUTE),
        "vllm": ("vLLM profile, held out", "circle", th.ROLE_COLORS["ngram"]),
    }
    groups = [(data[(data["engine"] == e) & ~data["fitted"]], *style) for e, style in styles.items()]
    groups.append((data[(data["engine"] == "vllm") & data["fitted"]], "batch 1: acceptance fitted", "star", th.NEUTRAL))
    for part, name, symbol, color in groups:
        text = [
            f"{d}, {th.drafter_label(m)}, batch {b}" for d, m, b in zip(part["dataset"], part["method"], part["batch"])
        ]
        fig.add_trace(go.Scatter(
            x=part["measured"], y=part["predicted"], mode="markers", name=name, text=text,
            marker={"size": 9, "symbol": symbol, "color": color, "line": {"width": 1.5, "color": color}},
            customdata=100 * part["error"],
            hovertemplate="%{text}<br>measured %{x:.2f}x, predicted %{y:.2f}x (%{customdata:+.0f}%)<extra>"
            + name + "</extra>",
        ))  # fmt: skip
    axis = {"range": [low, top], "ticksuffix": "x"}
    fig.update_layout(xaxis={**axis, "title": "measured speedup", "constrain": "domain"},
                      yaxis={**axis, "title": "predicted speedup", "scaleanchor": "x"})  # fmt: skip
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 480))
    return fig
