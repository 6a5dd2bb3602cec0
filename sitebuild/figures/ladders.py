"""The ladder, the article's central figure: each drafter's speedup against concurrency at
every context, and the break-even map (the best gamma's speedup over concurrency and
context). Each figure's data, drawing and :class:`~sitebuild.figures.spec.FigureSpec` are
together; :mod:`sitebuild.figures.cards` draws the same ladder on other cards."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment, SiteSettings
from sitebuild.figures import placement as pl
from sitebuild.figures.common import (
    CONCURRENCY,
    CONTEXTS,
    GAMMAS,
    SPEEDUP_HOVER,
    UNFIT_SYMBOL,
    evaluation_frame,
    menu,
    point_colors,
    sequences,
    site_drafters,
    slider,
    visibility_steps,
)
from sitebuild.figures.spec import FigureSpec
from specmodel.formatting import EVEN_MARGIN, GIB, verdict
from specmodel.model.evaluate import evaluate

# --- the ladder -------------------------------------------------------------------------------


def ladder(settings: SiteSettings) -> pd.DataFrame:
    """Speedup and throughputs vs concurrency, for every drafter and context (defaults otherwise)."""
    return ladder_frame(settings, None)


def ladder_frame(
    settings: SiteSettings,
    hardware: str | None,
    contexts: ArrayLike = CONTEXTS,
    drafters: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    batch, t, d = np.meshgrid(
        CONCURRENCY, np.asarray(contexts), np.array(drafters or site_drafters(settings)), indexing="ij"
    )
    ev = evaluate(settings=settings, concurrency=batch, context=t, drafter=d, hardware=hardware)
    return evaluation_frame(
        ev,
        concurrency=batch,
        context=t,
        drafter=d,
        speedup=ev.speedup,
        spec_tokens_per_s=ev.spec_tokens_per_s,
        base_tokens_per_s=ev.base_tokens_per_s,
        fits=ev.fits,
        memory_gib=ev.memory_required_bytes / GIB,
        usable_gib=ev.usable_memory_bytes / GIB,
    )


def ladder_trace(
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


def draw_ladder(data: pd.DataFrame, deployment: ArticleDeployment, default_context: int = 2048) -> go.Figure:
    """Speedup vs concurrency for each drafter, with a slider over context; open markers do
    not fit in memory."""
    fig = th.base_figure(height=400)
    contexts = sorted(data["context"].unique())
    groups = []
    for context in contexts:
        group = []
        for drafter, part in data[data["context"] == context].groupby("drafter", sort=False):
            group.append(len(fig.data))
            fig.add_trace(ladder_trace(part, drafter, context, bool(context == default_context), deployment))
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
    pl.set_narrow(fig, pl.narrow_below(fig, 520, extra=pl.sparse_ticks(sorted(x.unique()))))
    return fig


LADDER_FIGURE = FigureSpec(
    "ladder",
    "Speedup against concurrency for each drafter",
    "The ladder: each drafter's speedup as concurrent sequences rise, at the prompt length the slider sets, "
    "with magenta points more than 3% slower than plain decoding, grey ones within 3% of it, and open markers "
    "where the scenario does not fit in memory.",
    ladder,
    lambda d, s: draw_ladder(d, s.deployment),
    setting=lambda s: {},
)


# --- the break-even map -----------------------------------------------------------------------

#: The map's 1.0x contour and the boxes of cells that do not fit: dark in both schemes, since they
#: run over the map's cells, not the page.
INK = "#1f1f1f"


def breakeven_map(settings: SiteSettings) -> pd.DataFrame:
    """For every drafter, concurrency and context: the best gamma (1..10) and its speedup."""
    batch, t, d, g = np.meshgrid(CONCURRENCY, CONTEXTS, np.array(site_drafters(settings)), GAMMAS, indexing="ij")
    ev = evaluate(settings=settings, concurrency=batch, context=t, drafter=d, gamma=g)
    best = np.argmax(ev.speedup, axis=-1)
    speedup = np.take_along_axis(ev.speedup, best[..., None], axis=-1)[..., 0]
    return pd.DataFrame(
        {
            "concurrency": batch[..., 0].ravel(),
            "context": t[..., 0].ravel(),
            "drafter": d[..., 0].ravel(),
            "best_gamma": GAMMAS[best].ravel(),
            "speedup": speedup.ravel(),
            "fits": ev.fits[..., 0].ravel(),
        }
    )


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
    # The verdict colours: a loss in magenta, a flat grey band over the speedups called even
    # (within EVEN_MARGIN of 1x), a gain in teal.
    band = float(np.log2(1 + EVEN_MARGIN)) / (2 * span)
    heatmap = go.Heatmap(
        x=xs,
        y=ys,
        z=np.log2(speed),
        zmin=-span,
        zmax=span,
        colorscale=[[0.0, th.LOSS], [0.5 - band, th.EVEN], [0.5 + band, th.EVEN], [1.0, th.GAIN]],
        text=np.where(gains, gamma.astype(str), "off"),
        texttemplate="%{text}",
        customdata=speed,
        hovertext=[sequences(concurrencies)] * len(contexts),
        visible=visible,
        name=label,
        colorbar={
            "title": {"text": "speedup"},
            "tickvals": [-2, -1, 0, 1, 2],
            "ticktext": ["0.25x", "0.5x", "1x", "2x", "4x"],
        },
        hovertemplate="%{hovertext}, context %{y}<br>best gamma %{text}: %{customdata:.2f}x<extra>"
        + label
        + "</extra>",
    )
    rows, cols = np.nonzero(~part["fits"].loc[contexts, concurrencies].to_numpy(dtype=bool))
    boxes = go.Scatter(
        x=[xs[c] for c in cols],
        y=[ys[r] for r in rows],
        mode="markers",
        visible=visible,
        showlegend=False,
        marker={"symbol": "square-open", "size": 30, "line": {"width": 1.5}, "color": INK},
        name="does not fit in memory",
        hovertext=sequences([concurrencies[c] for c in cols]),
        customdata=[[float(speed[r, c]), str(gamma[r, c]) if gains[r, c] else "off"] for r, c in zip(rows, cols)],
        hovertemplate="%{hovertext}, context %{y}<br>best gamma %{customdata[1]}: %{customdata[0]:.2f}x,"
        " but does not fit in memory<extra>" + label + "</extra>",
    )
    return [heatmap, _contour(xs, ys, speed, visible), boxes]


def _contour(xs: list[str], ys: list[str], speed: np.ndarray, visible: bool) -> go.Contour:
    """The 1.0x contour of a drafter's map: the edge between gaining and losing cells."""
    # Unlabelled: a label would print over the cells' numbers (the caption says what the line is).
    return go.Contour(
        x=xs,
        y=ys,
        z=speed,
        contours={"start": 1, "end": 1, "size": 1, "coloring": "none", "showlabels": False},
        line={"width": 3, "color": INK},
        showscale=False,
        visible=visible,
        hoverinfo="skip",
        showlegend=False,
        name="1.0x contour",
    )


def draw_breakeven_map(data: pd.DataFrame, deployment: ArticleDeployment, default: str | None = None) -> go.Figure:
    """Speedup at the best gamma over concurrency x context, per drafter (buttons), with the
    1.0x contour and the best gamma written in each cell."""
    fig = th.base_figure(height=450)
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
    fig.update_layout(
        updatemenus=[menu("drafter", buttons, drafters.index(default))],
        xaxis={"title": "concurrent sequences", "type": "category"},
        yaxis={"title": "context (prompt tokens)", "type": "category"},
    )
    pl.legend_below(fig)
    _map_narrow(fig, xs, groups)
    return fig


COLORBAR = 66  # px a horizontal colour bar takes: title, bar and labels


def _map_narrow(fig: go.Figure, xs: list[str], groups: list[list[int]]) -> None:
    """Narrow: every other column labelled, cell text of 10 px, smaller boxes, and the colour bar
    laid flat under the plot."""
    height, top = 530, pl.NARROW_TOP
    paths = {"xaxis.tickvals": xs[::2], "xaxis.ticktext": xs[::2], "xaxis.tickangle": 0}
    narrow = pl.narrow_below(fig, height, top=top, band=pl.X_BAND + pl.GAP + COLORBAR, extra=paths)
    colorbar = {"orientation": "h", "x": 0, "xanchor": "left", "len": 1, "thickness": 10, "yanchor": "top"}
    colorbar["y"] = round(-(pl.X_BAND + pl.GAP) / (height - top - narrow["margin.b"]), 4)
    heatmap = {"textfont.size": 10, "colorbar.title.side": "top", **{f"colorbar.{k}": v for k, v in colorbar.items()}}
    heatmaps, boxes = [g[0] for g in groups], [g[2] for g in groups]
    pl.set_narrow(fig, narrow, [(heatmaps, heatmap), (boxes, {"marker.size": 22})])


BREAKEVEN_FIGURE = FigureSpec(
    "breakeven",
    "Break-even map over concurrency and context",
    "Each cell is the speedup at the best γ of the drafter the menu picks, with that γ written in it (off: no "
    "γ gains more than 3%): teal cells gain, magenta cells lose, grey ones are within 3% of even, the dark "
    "line is the 1.0x contour between gaining and losing cells, and boxed cells do not fit in memory.",
    breakeven_map,
    lambda d, s: draw_breakeven_map(d, s.deployment),
    setting=lambda s: {"concurrency": 64, "gamma": 1},
)


FIGURES: tuple[FigureSpec, ...] = (
    LADDER_FIGURE,
    BREAKEVEN_FIGURE,
)
"""The figures of this module, in the order of their pages."""
