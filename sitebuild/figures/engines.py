"""Drawing the engines: the model against public measurements, and the ladder under each
engine."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment
from sitebuild.figures import placement as pl
from sitebuild.figures.common import IDEAL_SYMBOL, SPEEDUP_HOVER, point_colors, sequences

#: How each engine's traces look: the article's ideal model dashed with triangles, the fitted
#: engine solid with circles (open markers mean "does not fit" on every figure of the site).
ENGINE_STYLE = {"ideal": {"dash": "dash", "symbol": IDEAL_SYMBOL, "label": "ideal roofline"},
                "vllm": {"dash": "solid", "symbol": "circle", "label": "vLLM profile"}}  # fmt: skip


def validation(data: pd.DataFrame) -> go.Figure:
    """Predicted against measured speedup for every public measurement, one colour per engine,
    with the diagonal (a perfect prediction) and a band of +-15 %."""
    fig = th.base_figure(height=480)
    top = float(max(data["measured"].max(), data["ideal"].max(), data["vllm"].max())) * 1.05
    low = min(0.9, float(min(data["measured"].min(), data["vllm"].min())) * 0.95)
    for share, dash in ((1.15, "dot"), (0.85, "dot")):
        fig.add_trace(
            go.Scatter(
                x=[low, top],
                y=[low * share, top * share],
                mode="lines",
                meta=th.REFERENCE,
                line={"color": th.NEUTRAL, "dash": dash, "width": 1},
                hoverinfo="skip",
                showlegend=False,
                name=f"{share - 1:+.0%}",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[low, top],
            y=[low, top],
            mode="lines",
            meta=th.REFERENCE,
            name="measured = predicted",
            line={"color": th.NEUTRAL, "width": 1.5},
            hoverinfo="skip",
        )
    )
    colors = {"ideal": th.COMPUTE, "vllm": th.ROLE_COLORS["ngram"]}
    text = [f"{m}, batch {b}, gamma {g}" for m, b, g in zip(data["method"], data["batch"], data["gamma"])]
    for engine, style in ENGINE_STYLE.items():
        fig.add_trace(go.Scatter(
            x=data["measured"], y=data[engine], mode="markers", name=style["label"], text=text,
            marker={"size": 8, "symbol": style["symbol"], "color": colors[engine], "line": {"width": 1.5}},
            customdata=np.stack([100 * data[f"{engine}_error"], data["source"]], axis=-1),
            hovertemplate="%{text}<br>measured %{x:.2f}x, predicted %{y:.2f}x (%{customdata[0]:+.0f}%)"
            "<br>%{customdata[1]}<extra>" + style["label"] + "</extra>",
        ))  # fmt: skip
    axis = {"range": [low, top], "ticksuffix": "x"}
    fig.update_layout(xaxis={**axis, "title": "measured speedup"},
                      yaxis={**axis, "title": "predicted speedup", "scaleanchor": "x"})  # fmt: skip
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 470))
    return fig


def engine_ladder(data: pd.DataFrame, deployment: ArticleDeployment) -> go.Figure:
    """Speedup against concurrency for each drafter under the ideal model (dashed) and the
    vLLM profile (solid)."""
    fig = th.base_figure(height=440)
    for key, part in data.groupby(["drafter", "engine"], sort=False):
        drafter, engine = cast(tuple[str, str], key)  # a key of two columns of names
        color, style = th.drafter_color(drafter, deployment), ENGINE_STYLE[engine]
        label = f"{th.drafter_label(drafter)}, {style['label']}"
        fig.add_trace(go.Scatter(
            x=part["concurrency"], y=part["speedup"], mode="lines+markers", name=label,
            line={"color": color, "width": 2.5, "dash": style["dash"]},
            marker={"size": 8, "color": point_colors(part["speedup"], color), "symbol": style["symbol"],
                    "line": {"width": 1.5, "color": color}},
            hovertext=sequences(part["concurrency"]),
            hovertemplate="%{hovertext}: " + SPEEDUP_HOVER + "<extra>" + label + "</extra>",
        ))  # fmt: skip
    x = data["concurrency"]
    th.reference_line(fig, 1.0, x.min(), x.max())
    fig.update_layout(xaxis={**th.log2_axis(sorted(x.unique())), "title": "concurrent sequences"},
                      yaxis={"title": "speedup over plain decoding", "ticksuffix": "x",
                             "range": [0, float(data["speedup"].max()) * 1.1]})  # fmt: skip
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 470, extra=pl.sparse_ticks(sorted(x.unique()))))
    return fig
