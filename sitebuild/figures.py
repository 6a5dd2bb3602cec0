"""Drawing: one Plotly figure per function, from the data of :mod:`sitebuild.figures_data`.

Nothing here calls the model. Conventions: n-gram in teal, losses against plain decoding
in magenta, a dashed 1.0x line on every speedup axis, hover text with units, axis ranges
pinned so that sliders and buttons never rescale them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specmodel.model.settings import Deployment
from sitebuild import theme as th

SPEEDUP_HOVER = "%{y:.2f}x over plain decoding"


def _point_colors(speedup, color) -> list[str]:
    return [th.LOSS if s < 1 else color for s in speedup]


def _visibility_steps(labels, groups, always, prefix) -> list[dict]:
    """Slider steps: step k shows the traces in ``groups[k]`` plus ``always``."""
    total = sum(len(g) for g in groups) + len(always)
    steps = []
    for label, group in zip(labels, groups):
        visible = [False] * total
        for i in list(group) + list(always):
            visible[i] = True
        steps.append({"method": "restyle", "args": [{"visible": visible}], "label": label})
    return steps


def _slider(steps, active, prefix) -> dict:
    return {"active": active, "steps": steps, "currentvalue": {"prefix": prefix}, "pad": {"t": 48}, "x": 0, "len": 1}


#: Marker of a scenario that does not fit on the card: open, where fitting ones are filled.
UNFIT_SYMBOL = "circle-open"


def _ladder_trace(part: pd.DataFrame, drafter: str, context: int, visible: bool, deployment: Deployment,
                  showlegend: bool = True, where: str = "") -> go.Scatter:
    """One drafter's speedup vs concurrency at one context; filled markers fit on the card,
    open ones do not."""
    color = th.drafter_color(drafter, deployment)
    fits = part["fits"].to_numpy(dtype=bool)
    return go.Scatter(
        x=part["concurrency"], y=part["speedup"], mode="lines+markers", name=th.drafter_label(drafter),
        line={"color": color, "width": 2.5},
        marker={"size": 9, "color": _point_colors(part["speedup"], color), "line": {"width": 2},
                "symbol": ["circle" if f else UNFIT_SYMBOL for f in fits]},
        customdata=np.stack([part["spec_tokens_per_s"], part["base_tokens_per_s"], part["memory_gib"],
                             part["usable_gib"]], axis=-1),
        text=["fits on the card" if f else "does not fit on one card" for f in fits],
        hovertemplate="%{x} sequences<br>" + SPEEDUP_HOVER
        + "<br>%{customdata[0]:,.0f} vs %{customdata[1]:,.0f} tokens/s"
        + "<br>%{text}: needs %{customdata[2]:,.1f} of %{customdata[3]:,.1f} GiB<extra>" + th.drafter_label(drafter)
        + f", context {context}{where}</extra>",
        visible=visible, legendgroup=drafter, showlegend=showlegend,
    )


def ladder(data: pd.DataFrame, deployment: Deployment, default_context: int = 2048) -> go.Figure:
    """Speedup vs concurrency for each drafter, with a slider over context; open markers do
    not fit on one card."""
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
    fig.add_annotation(xref="paper", yref="paper", x=1, y=0.02, xanchor="right", yanchor="bottom", showarrow=False,
                       text="open markers: does not fit on one card", font={"size": 11})
    steps = _visibility_steps([f"{c:,}" for c in contexts], groups, always, "context")
    fig.update_layout(
        sliders=[_slider(steps, contexts.index(default_context), "context (prompt tokens): ")],
        xaxis={**th.log2_axis(sorted(x.unique())), "title": "concurrent sequences"},
        yaxis={"title": "speedup over plain decoding", "range": [0, float(data["speedup"].max()) * 1.08], "ticksuffix": "x"},
        legend={"y": 1.16, "orientation": "h"}, margin={"t": 80},
    )
    return fig


def hardware_ladders(data: pd.DataFrame, deployment: Deployment, default_context: int = 2048) -> go.Figure:
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
                fig.add_trace(_ladder_trace(part, drafter, context, bool(context == default_context), deployment,
                                            col == 1, f", {names[col - 1]}"), row=1, col=col)
        groups.append(group)
    always = []
    for col in range(1, len(cards) + 1):
        always.append(len(fig.data))
        th.reference_line(fig, 1.0, x.min(), x.max(), row=1, col=col)
    steps = _visibility_steps([f"{c:,}" for c in contexts], groups, always, "context")
    fig.update_xaxes(**th.log2_axis([2**i for i in range(0, 11, 2)]), title_text="concurrent sequences")
    fig.update_yaxes(range=[0, float(data["speedup"].max()) * 1.08], ticksuffix="x")
    fig.update_yaxes(title_text="speedup over plain decoding", row=1, col=1)
    slider = _slider(steps, contexts.index(default_context), "context (prompt tokens): ")
    slider["pad"] = {"t": 72}
    fig.update_layout(sliders=[slider], legend={"y": 1.2, "orientation": "h"}, margin={"t": 96})
    return fig


def head_costs(data: pd.DataFrame) -> go.Figure:
    """Bytes one draft step reads per drafter at one sequence: the LM head against the rest."""
    fig = th.base_figure(height=360)
    labels = [th.drafter_label(d) for d in data["drafter"]]
    rest = data["weights_read_gib"] - data["lm_head_gib"]
    fig.add_trace(go.Bar(y=labels, x=data["lm_head_gib"], orientation="h", name="output (LM) head",
                         marker_color=th.COMPUTE, customdata=data["vocabulary"],
                         hovertemplate="%{y}: %{x:.2f} GiB of LM head over %{customdata:,} tokens<extra></extra>"))
    fig.add_trace(go.Bar(y=labels, x=rest, orientation="h", name="everything else", marker_color=th.MEMORY,
                         hovertemplate="%{y}: %{x:.2f} GiB of other weights<extra></extra>"))
    fig.update_layout(barmode="stack", xaxis={"title": "weights read per draft step, GiB",
                                              "range": [0, float(data["weights_read_gib"].max()) * 1.1]},
                      yaxis={"autorange": "reversed"}, legend={"y": -0.3})
    return fig


def roofline(data: pd.DataFrame) -> go.Figure:
    """The verify pass's memory and arithmetic time (top) and idle share (bottom) vs concurrency."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4])
    fig.update_layout(template=th.TEMPLATE, height=520, autosize=True)
    b = data["concurrency"]
    fig.add_trace(go.Scatter(x=b, y=data["memory_time"] * 1e3, name="memory time", mode="lines",
                             line={"color": th.MEMORY, "width": 2.5},
                             hovertemplate="%{x} sequences: %{y:.2f} ms moving bytes<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=b, y=data["compute_time"] * 1e3, name="arithmetic time", mode="lines",
                             line={"color": th.COMPUTE, "width": 2.5},
                             hovertemplate="%{x} sequences: %{y:.2f} ms of arithmetic<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=b, y=data["idle"] * 100, name="tensor cores idle", mode="lines",
                             line={"color": th.IDLE, "width": 2.5}, fill="tozeroy",
                             hovertemplate="%{x} sequences: idle %{y:.0f}% of the pass<extra></extra>"), row=2, col=1)
    ticks = th.log2_axis([2**i for i in range(11)])
    fig.update_xaxes(**ticks)
    fig.update_xaxes(title_text="concurrent sequences (gamma 4, context 2048)", row=2, col=1)
    fig.update_yaxes(type="log", title_text="verify pass, ms", row=1, col=1)
    fig.update_yaxes(range=[0, 100], ticksuffix="%", title_text="idle", row=2, col=1)
    fig.update_layout(legend={"y": 1.1, "orientation": "h"}, margin={"t": 48})
    return fig


def arithmetic_bill(data: pd.DataFrame, deployment: Deployment) -> go.Figure:
    """Arithmetic per output token vs gamma: simulated points and Theorem 3.11 lines."""
    fig = th.base_figure()
    styles = {"simulated": {"mode": "markers", "marker": {"size": 10}},
              "theorem": {"mode": "lines", "line": {"width": 2, "dash": "dot"}}}
    draft = deployment.draft
    palette = {f"simulated: {draft}, falling": th.ROLE_COLORS["draft"], f"simulated: {draft}, same": "#7c6bd6",
               "simulated: ngram, same": th.ROLE_COLORS["ngram"]}
    for series, part in data.groupby("series", sort=False):
        kind = part["kind"].iloc[0]
        color = palette.get(series, th.drafter_color(part["drafter"].iloc[0], deployment))
        style = {k: (dict(v, color=color) if isinstance(v, dict) else v) for k, v in styles[kind].items()}
        fig.add_trace(go.Scatter(x=part["gamma"], y=part["ratio"], name=series, **style,
                                 hovertemplate="gamma %{x}: %{y:.2f}x the FLOPs per output token<extra>" + series + "</extra>"))
    fig.update_layout(xaxis={"title": "draft tokens per iteration (gamma)", "dtick": 1},
                      yaxis={"title": "FLOPs per output token vs plain", "ticksuffix": "x",
                             "range": [1, float(data["ratio"].max()) * 1.05]},
                      legend={"y": -0.25})
    return fig


def alpha_sweep(data: pd.DataFrame, breakeven: dict[str, float], marks: dict[str, tuple[float, float]],
                deployment: Deployment) -> go.Figure:
    """Speedup vs alpha at one sequence for both draft models, with break-even alphas and
    the article's two marked points."""
    fig = th.base_figure()
    for drafter, part in data.groupby("drafter", sort=False):
        color = th.drafter_color(drafter, deployment)
        fig.add_trace(go.Scatter(x=part["alpha"], y=part["speedup"], mode="lines", name=th.drafter_label(drafter),
                                 line={"color": color, "width": 2.5},
                                 hovertemplate="alpha %{x:.2f}: " + SPEEDUP_HOVER + "<extra>" + th.drafter_label(drafter) + "</extra>"))
        a0 = breakeven[drafter]
        fig.add_trace(go.Scatter(x=[a0, a0], y=[0, 1], mode="lines", line={"color": color, "dash": "dot", "width": 1.5},
                                 showlegend=False, hovertemplate=f"break-even alpha {a0:.2f}<extra></extra>"))
        fig.add_annotation(x=a0, y=0, yanchor="bottom", xanchor="left", text=f" break-even {a0:.2f}", showarrow=False,
                           font={"color": color})
    for label, (x, y) in marks.items():
        drafter = label.split(" ")[0]
        fig.add_trace(go.Scatter(x=[x], y=[y], mode="markers+text", text=[f"{y:.2f}x"], textposition="top center",
                                 marker={"size": 12, "symbol": "diamond", "color": th.drafter_color(drafter, deployment)},
                                 name=label, hovertemplate=label + ": %{y:.2f}x<extra></extra>", showlegend=False))
    th.reference_line(fig, 1.0, 0, 1)
    ymax = float(data["speedup"].max()) * 1.12
    fig.update_layout(xaxis={"title": "acceptance rate alpha (falling profile, 1 sequence, gamma 4)", "range": [0, 1]},
                      yaxis={"title": "speedup over plain decoding", "ticksuffix": "x", "range": [0, ymax]})
    return fig


def memory_footprint(data: pd.DataFrame) -> go.Figure:
    """Weights vs KV cache per token for the three models (two panels)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("weights (GiB, bf16)", "KV cache per token (KiB)"),
                        horizontal_spacing=0.14)
    fig.update_layout(template=th.TEMPLATE, height=380, autosize=True, showlegend=False)
    colors = [th.NEUTRAL, th.ROLE_COLORS["draft"], th.ROLE_COLORS["big_draft"]]
    fig.add_trace(go.Bar(x=data["model"], y=data["weights_gib"], marker_color=colors, text=data["weights_gib"].map("{:.2f}".format),
                         textposition="outside", cliponaxis=False,
                         hovertemplate="%{x}: %{y:.2f} GiB of weights<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Bar(x=data["model"], y=data["kv_kib_per_token"], marker_color=colors,
                         text=data["kv_kib_per_token"].map("{:.0f}".format), textposition="outside", cliponaxis=False,
                         hovertemplate="%{x}: %{y:.0f} KiB of cache per token<extra></extra>"), row=1, col=2)
    fig.update_yaxes(range=[0, float(data["weights_gib"].max()) * 1.2], row=1, col=1)
    fig.update_yaxes(range=[0, float(data["kv_kib_per_token"].max()) * 1.2], row=1, col=2)
    return fig


def context_sweep(data: pd.DataFrame, concurrency: int, deployment: Deployment) -> go.Figure:
    """Speedup (top) and the drafter's share of wall clock (bottom) vs context."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    fig.update_layout(template=th.TEMPLATE, height=520, autosize=True)
    for drafter, part in data.groupby("drafter", sort=False):
        color, label = th.drafter_color(drafter, deployment), th.drafter_label(drafter)
        fig.add_trace(go.Scatter(x=part["context"], y=part["speedup"], mode="lines+markers", name=label,
                                 line={"color": color, "width": 2.5},
                                 marker={"size": 8, "color": _point_colors(part["speedup"], color)}, legendgroup=drafter,
                                 hovertemplate="context %{x:,}: " + SPEEDUP_HOVER + "<extra>" + label + "</extra>"), row=1, col=1)
        if drafter != "ngram":
            fig.add_trace(go.Scatter(x=part["context"], y=part["draft_share"] * 100, mode="lines+markers", name=label,
                                     line={"color": color, "width": 2.5}, showlegend=False, legendgroup=drafter,
                                     hovertemplate="context %{x:,}: %{y:.0f}% of wall clock drafting<extra>" + label + "</extra>"),
                          row=2, col=1)
    x = data["context"]
    th.reference_line(fig, 1.0, x.min(), x.max(), row=1, col=1)
    fig.update_xaxes(**th.log2_axis(sorted(x.unique())))
    fig.update_xaxes(title_text=f"context, prompt tokens per sequence ({concurrency} sequences)", row=2, col=1)
    fig.update_yaxes(title_text="speedup", ticksuffix="x", range=[0, float(data["speedup"].max()) * 1.1], row=1, col=1)
    fig.update_yaxes(title_text="draft share", ticksuffix="%", range=[0, 100], row=2, col=1)
    fig.update_layout(legend={"y": 1.1, "orientation": "h"}, margin={"t": 48})
    return fig


def gamma_sweep(data: pd.DataFrame, fixed=(1, 32), default: int = 64) -> go.Figure:
    """Speedup vs gamma at 1 and 32 sequences, plus a third curve chosen with a slider."""
    fig = th.base_figure(height=460)
    colors = {fixed[0]: th.ROLE_COLORS["draft"], fixed[1]: "#7c6bd6"}
    for b in fixed:
        part = data[data["concurrency"] == b]
        fig.add_trace(go.Scatter(x=part["gamma"], y=part["speedup"], mode="lines+markers", name=f"{b} sequence{'s' * (b > 1)}",
                                 line={"color": colors[b], "width": 2.5},
                                 marker={"size": 9, "color": _point_colors(part["speedup"], colors[b])},
                                 hovertemplate="gamma %{x}: " + SPEEDUP_HOVER + f"<extra>{b} sequences</extra>"))
    concurrencies = sorted(data["concurrency"].unique())
    first = len(fig.data)
    for b in concurrencies:
        part = data[data["concurrency"] == b]
        fig.add_trace(go.Scatter(x=part["gamma"], y=part["speedup"], mode="lines+markers", name=f"chosen: {b} sequences",
                                 line={"color": th.NEUTRAL, "width": 2, "dash": "dash"},
                                 marker={"size": 8, "color": _point_colors(part["speedup"], th.NEUTRAL)},
                                 hovertemplate="gamma %{x}: " + SPEEDUP_HOVER + f"<extra>{b} sequences</extra>",
                                 visible=bool(b == default)))
    always = list(range(first)) + [len(fig.data)]
    th.reference_line(fig, 1.0, 1, int(data["gamma"].max()))
    groups = [[first + i] for i in range(len(concurrencies))]
    steps = _visibility_steps([str(b) for b in concurrencies], groups, always, "sequences")
    fig.update_layout(
        sliders=[_slider(steps, concurrencies.index(default), "third curve, concurrent sequences: ")],
        xaxis={"title": "draft tokens per iteration (gamma)", "dtick": 1},
        yaxis={"title": "speedup over plain decoding", "ticksuffix": "x", "range": [0, float(data["speedup"].max()) * 1.1]},
        legend={"y": 1.12, "orientation": "h"}, margin={"t": 60},
    )
    return fig


def tokens_per_iteration(data: pd.DataFrame) -> go.Figure:
    """Expected tokens per iteration vs gamma for several alpha, with dashed ceilings."""
    fig = th.base_figure(height=440)
    g_max = int(data["gamma"].max())
    for (alpha, part), color in zip(data.groupby("alpha", sort=True), th.SEQUENCE):
        ceiling = float(part["ceiling"].iloc[0])
        fig.add_trace(go.Scatter(x=part["gamma"], y=part["tokens"], mode="lines+markers", name=f"alpha {alpha:g}",
                                 line={"color": color, "width": 2.5}, marker={"size": 6}, legendgroup=str(alpha),
                                 hovertemplate="gamma %{x}: %{y:.2f} tokens per target pass<extra>alpha " + f"{alpha:g}</extra>"))
        fig.add_trace(go.Scatter(x=[0.5, g_max + 0.5], y=[ceiling, ceiling], mode="lines", showlegend=False,
                                 line={"color": color, "dash": "dash", "width": 1}, legendgroup=str(alpha),
                                 hovertemplate=f"ceiling 1/(1 - {alpha:g}) = {ceiling:.2f}<extra></extra>"))
    fig.update_layout(xaxis={"title": "draft tokens per iteration (gamma)", "range": [0.5, g_max + 0.5], "dtick": 2},
                      yaxis={"title": "expected tokens per iteration", "range": [0, float(data["ceiling"].max()) * 1.05]})
    return fig


def per_position(data: pd.DataFrame, cut: float = 0.15) -> go.Figure:
    """Unconditional acceptance per draft position, falling vs same, with the 0.15 cut."""
    fig = th.base_figure(height=380)
    colors = {"falling": th.ROLE_COLORS["draft"], "same": "#7c6bd6"}
    for profile, part in data.groupby("profile", sort=False):
        fig.add_trace(go.Bar(x=part["position"], y=part["acceptance"], name=profile, marker_color=colors[profile],
                             hovertemplate="guess %{x} reaches the output in %{y:.1%} of iterations<extra>" + profile + "</extra>"))
    n = int(data["position"].max())
    th.reference_line(fig, cut, 0.5, n + 0.5, label=f"{cut:g}: cut gamma below this")
    fig.update_layout(barmode="group", xaxis={"title": "draft position", "dtick": 1, "range": [0.5, n + 0.5]},
                      yaxis={"title": "share of iterations the guess is used", "range": [0, 1], "tickformat": ".0%"})
    return fig


def breakeven_map(data: pd.DataFrame, deployment: Deployment, default: str | None = None) -> go.Figure:
    """Speedup at the best gamma over concurrency x context, per drafter (buttons), with the
    1.0x contour and the best gamma written in each cell."""
    fig = th.base_figure(height=520)
    default = default or deployment.draft
    drafters = list(dict.fromkeys(data["drafter"]))
    contexts = sorted(data["context"].unique())
    concurrencies = sorted(data["concurrency"].unique())
    zmax = float(np.log2(data["speedup"].max()))
    zmin = float(np.log2(data["speedup"].min()))
    span = max(abs(zmin), abs(zmax))
    scale = [[0.0, th.LOSS], [0.5, "#f2f2f2"], [1.0, th.ROLE_COLORS["ngram"]]]
    groups = []
    for drafter in drafters:
        part = data[data["drafter"] == drafter].pivot(index="context", columns="concurrency")
        speed = part["speedup"].loc[contexts, concurrencies].to_numpy()
        gamma = part["best_gamma"].loc[contexts, concurrencies].to_numpy()
        text = np.where(speed >= 1, gamma.astype(str), "off")
        xs, ys = [str(b) for b in concurrencies], [str(c) for c in contexts]
        visible = drafter == default
        start = len(fig.data)
        fig.add_trace(go.Heatmap(
            x=xs, y=ys, z=np.log2(speed), zmin=-span, zmax=span, colorscale=scale, text=text, texttemplate="%{text}",
            customdata=speed, visible=visible, name=th.drafter_label(drafter),
            colorbar={"title": {"text": "speedup"}, "tickvals": [-2, -1, 0, 1, 2], "ticktext": ["0.25x", "0.5x", "1x", "2x", "4x"]},
            hovertemplate="%{x} sequences, context %{y}<br>best gamma %{text}: %{customdata:.2f}x<extra>"
            + th.drafter_label(drafter) + "</extra>",
        ))
        fig.add_trace(go.Contour(
            x=xs, y=ys, z=speed, contours={"start": 1, "end": 1, "size": 1, "coloring": "none", "showlabels": True},
            line={"width": 3, "color": "#1f1f1f"}, showscale=False, visible=visible, hoverinfo="skip", meta=th.REFERENCE,
            name="1.0x contour",
        ))
        unfit = ~part["fits"].loc[contexts, concurrencies].to_numpy(dtype=bool)
        rows, cols = np.nonzero(unfit)
        fig.add_trace(go.Scatter(
            x=[xs[c] for c in cols], y=[ys[r] for r in rows], mode="markers", visible=visible, showlegend=False,
            marker={"symbol": "square-open", "size": 30, "line": {"width": 1.5}, "color": th.NEUTRAL},
            name="does not fit on one card", hovertemplate="%{x} sequences, context %{y}: does not fit on one card"
            "<extra></extra>",
        ))
        groups.append([start, start + 1, start + 2])
    buttons = []
    for drafter, group in zip(drafters, groups):
        visible = [i in group for i in range(len(fig.data))]
        buttons.append({"method": "restyle", "args": [{"visible": visible}], "label": th.drafter_short_label(drafter)})
    fig.update_layout(
        updatemenus=[{"type": "buttons", "direction": "right", "buttons": buttons, "active": drafters.index(default),
                      "x": 0, "y": 1.14, "xanchor": "left", "showactive": True}],
        xaxis={"title": "concurrent sequences", "type": "category"},
        yaxis={"title": "context (prompt tokens)", "type": "category"}, margin={"t": 70},
    )
    return fig


def sampling(data: pd.DataFrame, trials: int) -> go.Figure:
    """Target p, draft q and the sampler's output, per token of the toy vocabulary."""
    fig = th.base_figure(height=380)
    series = (("q", "draft q", th.ROLE_COLORS["big_draft"]), ("p", "target p", th.NEUTRAL),
              ("output", f"sampler output ({trials:,} runs)", th.ROLE_COLORS["ngram"]))
    for column, name, color in series:
        fig.add_trace(go.Bar(x=data["token"], y=data[column], name=name, marker_color=color,
                             hovertemplate="%{x}: %{y:.3f}<extra>" + name + "</extra>"))
    fig.update_layout(barmode="group", xaxis={"title": "token"},
                      yaxis={"title": "probability", "range": [0, float(data[["p", "q", "output"]].max().max()) * 1.15]})
    return fig
