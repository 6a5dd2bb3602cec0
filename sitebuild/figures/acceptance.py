"""Acceptance and what it buys, the article's opening sections: Algorithm 1 on a toy
vocabulary, tokens per iteration against gamma, per-position acceptance, and speedup against
alpha and against gamma. Each figure's data (tidy DataFrames from the model), its drawing and
its :class:`~sitebuild.figures.spec.FigureSpec` (caption, published table) are together."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment, SiteSettings
from sitebuild.figures.common import (
    CONCURRENCY,
    GAMMAS,
    SPEEDUP_HOVER,
    evaluation_frame,
    model_drafters,
    named_groups,
    point_colors,
    sequences,
    slider,
    visibility_steps,
)
from sitebuild.figures.placement import TITLE_LINE, X_BAND, legend_above, legend_below, narrow_below, set_narrow
from sitebuild.figures.spec import FigureSpec, parts_table
from sitebuild.sampling import toy_demo
from specmodel.model import acceptance as acc
from specmodel.model.breakeven import first_crossing
from specmodel.model.evaluate import evaluate

# --- Algorithm 1 on a toy vocabulary ----------------------------------------------------------


SAMPLING_SEED, SAMPLING_TRIALS = 0, 200_000


def sampling() -> pd.DataFrame:
    """Algorithm 1 run for real on a toy vocabulary (one guess, seeded): the target's p, the
    draft's q, the residual norm(max(0, p - q)) and the empirical distribution of the
    emitted token."""
    demo = toy_demo(seed=SAMPLING_SEED, trials=SAMPLING_TRIALS)
    return pd.DataFrame(
        {"token": demo.labels, "p": demo.p, "q": demo.q, "residual": demo.residual, "output": demo.output}
    )


def draw_sampling(data: pd.DataFrame, trials: int) -> go.Figure:
    """Target p, draft q and the sampler's output, per token of the toy vocabulary."""
    fig = th.base_figure(height=380)
    series = (
        ("q", "draft q", th.ROLE_COLORS["big_draft"]),
        ("p", "target p", th.MUTED),
        ("output", f"sampler output ({trials:,} runs)", th.SAME_ACCEPTANCE),
    )
    for column, name, color in series:
        fig.add_trace(
            go.Bar(
                x=data["token"],
                y=data[column],
                name=name,
                marker_color=color,
                hovertemplate="%{x}: %{y:.3f}<extra>" + name + "</extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        xaxis={"title": "token"},
        yaxis={"title": "probability", "range": [0, float(data[["p", "q", "output"]].max().max()) * 1.15]},
    )
    legend_below(fig)
    # Narrow: the tokens slanted, so that "banana" clears its neighbours on any phone.
    set_narrow(fig, narrow_below(fig, 400, extra={"xaxis.tickangle": -30}))
    return fig


SAMPLING_FIGURE = FigureSpec(
    "sampling",
    "Algorithm 1 run on a toy vocabulary",
    "Purple bars (the sampler's output) sit on the dark grey ones (the target), not on the orange ones (the "
    "draft): 'dog', which the draft never proposes, still comes out, and 'banana', which only the draft "
    "likes, never does.",
    lambda s: sampling(),
    lambda d, s: draw_sampling(d, SAMPLING_TRIALS),
)


# --- tokens per iteration ---------------------------------------------------------------------


TOKEN_ALPHAS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.9)


def tokens_per_iteration() -> pd.DataFrame:
    """Expected tokens per iteration vs gamma (i.i.d. closed form) for several alpha, with
    each alpha's ceiling 1 / (1 - alpha)."""
    g, a = np.meshgrid(np.arange(1, 21), np.array(TOKEN_ALPHAS), indexing="ij")
    tokens = acc.closed_form_tokens_per_iteration(a, g)
    return pd.DataFrame(
        {"gamma": g.ravel(), "alpha": a.ravel(), "tokens": tokens.ravel(), "ceiling": (1 / (1 - a)).ravel()}
    )


def draw_tokens_per_iteration(data: pd.DataFrame) -> go.Figure:
    """Expected tokens per iteration vs gamma for several alpha, with dashed ceilings."""
    fig = th.base_figure(height=440)
    g_max = int(data["gamma"].max())
    for (alpha, part), color in zip(data.groupby("alpha", sort=True), th.SEQUENCE):
        ceiling = float(part["ceiling"].iloc[0])
        fig.add_trace(
            go.Scatter(
                x=part["gamma"],
                y=part["tokens"],
                mode="lines+markers",
                name=f"alpha {alpha:g}",
                line={"color": color, "width": 2.5},
                marker={"size": 6},
                legendgroup=str(alpha),
                hovertemplate="gamma %{x}: %{y:.2f} tokens per target pass<extra>alpha " + f"{alpha:g}</extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[0.5, g_max + 0.5],
                y=[ceiling, ceiling],
                mode="lines",
                showlegend=False,
                line={"color": color, "dash": "dash", "width": 1},
                legendgroup=str(alpha),
                hovertemplate=f"ceiling 1/(1 - {alpha:g}) = {ceiling:.2f}<extra></extra>",
            )
        )
    fig.update_layout(
        xaxis={"title": "draft tokens per iteration (gamma)", "range": [0.5, g_max + 0.5], "dtick": 2},
        yaxis={"title": "expected tokens per iteration", "range": [0, float(data["ceiling"].max()) * 1.05]},
    )
    legend_below(fig)
    set_narrow(fig, narrow_below(fig, 480))
    return fig


TOKENS_FIGURE = FigureSpec(
    "tokens",
    "Expected tokens per iteration against gamma",
    "Each curve flattens onto its dashed ceiling 1/(1 - alpha): past a few draft tokens, more guesses "
    "buy almost nothing.",
    lambda s: tokens_per_iteration(),
    lambda d, s: draw_tokens_per_iteration(d),
)


# --- per-position acceptance ------------------------------------------------------------------


def per_position(settings: SiteSettings, gamma: int = 6) -> pd.DataFrame:
    """Unconditional acceptance of each draft position, falling vs same (alpha 0.75)."""
    rows = []
    for profile in ("falling", "same"):
        ev = evaluate(settings=settings, gamma=gamma, acceptance=profile)
        rows.append(
            pd.DataFrame(
                {"position": np.arange(1, gamma + 1), "profile": profile, "acceptance": np.ravel(ev.per_position)}
            )
        )
    return pd.concat(rows, ignore_index=True)


def draw_per_position(data: pd.DataFrame, cut: float = 0.15) -> go.Figure:
    """Unconditional acceptance per draft position, falling vs same, with the 0.15 cut."""
    fig = th.base_figure(height=380)
    colors = {"falling": th.ROLE_COLORS["draft"], "same": "#7c6bd6"}
    for profile, part in named_groups(data, "profile"):
        fig.add_trace(
            go.Bar(
                x=part["position"],
                y=part["acceptance"],
                name=profile,
                marker_color=colors[profile],
                hovertemplate="guess %{x} reaches the output in %{y:.1%} of iterations<extra>" + profile + "</extra>",
            )
        )
    n = int(data["position"].max())
    th.reference_line(fig, cut, 0.5, n + 0.5, label=f"{cut:g}: cut gamma below this", color=th.MUTED)
    # The label stands over the last gap between bars, clear of them, with a stroke to the line.
    fig.layout.annotations[0].update(
        xref="x", x=n - 0.5, xanchor="center", yanchor="bottom", showarrow=True, ax=0, ay=-44, arrowhead=0
    )
    fig.layout.annotations[0].update(arrowwidth=1, arrowcolor=th.MUTED)
    fig.update_layout(
        barmode="group",
        xaxis={"title": "draft position", "dtick": 1, "range": [0.5, n + 0.5]},
        yaxis={"title": "share of iterations the guess is used", "range": [0, 1], "tickformat": ".0%"},
    )
    legend_below(fig)
    set_narrow(fig, narrow_below(fig, 420, extra={"annotations[0].text": f"cut gamma<br>below {cut:g}"}))
    return fig


PER_POSITION_FIGURE = FigureSpec(
    "per-position",
    "Per-position acceptance, falling against same",
    "The share of iterations in which each guess reaches the output, under the falling profile and with "
    "the same acceptance at every position (guesses accepted independently, each as likely as the last).",
    per_position,
    lambda d, s: draw_per_position(d),
    setting=lambda s: {"gamma": 6},
)


# --- speedup against alpha --------------------------------------------------------------------


def alpha_sweep(settings: SiteSettings) -> tuple[pd.DataFrame, dict[str, float]]:
    """Speedup vs alpha at one sequence for the two draft models, and each one's break-even
    alpha (where speedup crosses 1, linearly interpolated on a 0.005 grid)."""
    alphas = np.round(np.arange(0.02, 0.9951, 0.005), 3)
    a, d = np.meshgrid(alphas, np.array(model_drafters(settings)), indexing="ij")
    ev = evaluate(settings=settings, alpha=a, drafter=d)
    frame = evaluation_frame(ev, alpha=a, drafter=d, speedup=ev.speedup)
    breakeven = {
        str(drafter): first_crossing(group["alpha"].to_numpy(), group["speedup"].to_numpy())
        for drafter, group in frame.groupby("drafter", sort=False)
    }
    return frame, breakeven


def _alpha_data(settings: SiteSettings) -> tuple[pd.DataFrame, dict[str, float], dict[str, tuple[float, float]]]:
    """Speedup against alpha, each draft's break-even alpha, and the two marked points (the
    larger draft at 0.95, the smaller at 0.75)."""
    frame, breakeven = alpha_sweep(settings)
    draft, big = model_drafters(settings)
    marks = {
        draft: (0.75, float(evaluate(drafter=draft, settings=settings).speedup)),
        big: (0.95, float(evaluate(drafter=big, alpha=0.95, settings=settings).speedup)),
    }
    return frame, breakeven, marks


def _alpha_table(computed: tuple[pd.DataFrame, dict[str, float], dict[str, tuple[float, float]]]) -> pd.DataFrame:
    frame, breakeven, marks = computed
    even = pd.DataFrame({"drafter": list(breakeven), "alpha": list(breakeven.values()), "speedup": 1.0})
    marked = pd.DataFrame(
        {"drafter": list(marks), "alpha": [a for a, _ in marks.values()], "speedup": [s for _, s in marks.values()]}
    )
    return parts_table("series", ("curve", frame), ("break-even", even), ("marked", marked))


def draw_alpha_sweep(
    data: pd.DataFrame,
    breakeven: dict[str, float],
    marks: dict[str, tuple[float, float]],
    deployment: ArticleDeployment,
) -> go.Figure:
    """Speedup vs alpha at one sequence for both draft models, with break-even alphas and
    the article's two marked points."""
    fig = th.base_figure()
    short = {}  # narrow screens: the break-even labels without the words, so that they do not overlap
    for drafter, part in named_groups(data, "drafter"):
        color = th.drafter_color(drafter, deployment)
        fig.add_trace(
            go.Scatter(
                x=part["alpha"],
                y=part["speedup"],
                mode="lines",
                name=th.drafter_label(drafter),
                line={"color": color, "width": 2.5},
                hovertemplate="alpha %{x:.2f}: " + SPEEDUP_HOVER + "<extra>" + th.drafter_label(drafter) + "</extra>",
            )
        )
        short.update(_breakeven_line(fig, breakeven[drafter], color))
    edge = _marks(fig, marks, deployment)
    th.reference_line(fig, 1.0, 0, 1, at="right")
    ymax = float(data["speedup"].max()) * 1.12
    fig.update_layout(
        xaxis={"title": "acceptance rate alpha (falling profile, 1 sequence, gamma 4)", "range": [0, 1]},
        yaxis={"title": "speedup over plain decoding", "ticksuffix": "x", "range": [0, ymax]},
    )
    legend_below(fig)
    title = {"xaxis.title.text": "acceptance rate alpha<br>(falling, 1 sequence, gamma 4)"}
    set_narrow(
        fig,
        narrow_below(fig, 460, band=X_BAND + TITLE_LINE, extra={**title, **short}),
        [(edge, {"textposition": "top left"})],
    )
    return fig


def _breakeven_line(fig: go.Figure, a0: float, color: str) -> dict:
    """A dotted line up to 1x at the break-even alpha, labelled at its foot; returns the
    narrow variant's label (the number alone: the two labels would overlap). Nothing where the
    curve never crosses 1x (``a0`` is NaN): there is no break-even to mark."""
    if not math.isfinite(a0):
        return {}
    fig.add_trace(
        go.Scatter(
            x=[a0, a0],
            y=[0, 1],
            mode="lines",
            line={"color": color, "dash": "dot", "width": 1.5},
            showlegend=False,
            hovertemplate=f"break-even alpha {a0:.2f}<extra></extra>",
        )
    )
    text = {"x": a0, "y": 0, "yanchor": "bottom", "xanchor": "left", "showarrow": False, "font": {"color": color}}
    fig.add_annotation(text=f" break-even {a0:.2f}", **text)
    return {f"annotations[{len(fig.layout.annotations) - 1}].text": f" {a0:.2f}"}


def _marks(fig: go.Figure, marks: dict[str, tuple[float, float]], deployment: ArticleDeployment) -> list[int]:
    """The article's marked points, as diamonds with their speedup; returns their indices:
    the narrow variant writes each value to the left of its diamond (the one by the right
    edge would be cut off, and centred values would run into each other)."""
    edge = []
    for drafter, (x, y) in marks.items():
        label = f"{th.drafter_label(drafter)} at alpha {x:g}"
        edge.append(len(fig.data))
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers+text",
                text=[f"{y:.2f}x"],
                textposition="top center",
                marker={"size": 12, "symbol": "diamond", "color": th.drafter_color(drafter, deployment)},
                name=label,
                hovertemplate=label + ": %{y:.2f}x<extra></extra>",
                showlegend=False,
            )
        )
    return edge


ALPHA_FIGURE = FigureSpec(
    "alpha",
    "Speedup against acceptance rate for the two draft models",
    "Speedup at one sequence against α for the two draft models, with diamonds on the larger draft at "
    "α = 0.95 and the smaller at 0.75 (the pair section 4 compares) and a dotted line at each draft's "
    "break-even α.",
    _alpha_data,
    lambda d, s: draw_alpha_sweep(d[0], d[1], d[2], s.deployment),
    _alpha_table,
    setting=lambda s: {"alpha": 0.95, "drafter": s.deployment.big_draft},
)


# --- speedup against gamma --------------------------------------------------------------------


def gamma_sweep(settings: SiteSettings) -> pd.DataFrame:
    """Speedup vs gamma at every concurrency (0.6B draft, falling, alpha 0.75, context 2048)."""
    g, batch = np.meshgrid(GAMMAS, CONCURRENCY, indexing="ij")
    ev = evaluate(settings=settings, gamma=g, concurrency=batch)
    return evaluation_frame(ev, gamma=g, concurrency=batch, speedup=ev.speedup)


def _gamma_trace(data: pd.DataFrame, batch: int, name: str, color: str, line: dict, size: int) -> go.Scatter:
    """Speedup against gamma at ``batch`` sequences, magenta where it loses."""
    part = data[data["concurrency"] == batch]
    return go.Scatter(
        x=part["gamma"],
        y=part["speedup"],
        mode="lines+markers",
        name=name,
        line={"color": color, **line},
        marker={"size": size, "color": point_colors(part["speedup"], color)},
        hovertemplate="gamma %{x}: " + SPEEDUP_HOVER + f"<extra>{sequences([batch])[0]}</extra>",
    )


def draw_gamma_sweep(data: pd.DataFrame, fixed: tuple[int, int] = (1, 32), default: int = 64) -> go.Figure:
    """Speedup vs gamma at 1 and 32 sequences, plus a third curve chosen with a slider."""
    fig = th.base_figure(height=380)
    colors = {fixed[0]: th.ROLE_COLORS["draft"], fixed[1]: "#7c6bd6"}
    for batch in fixed:
        fig.add_trace(_gamma_trace(data, batch, sequences([batch])[0], colors[batch], {"width": 2.5}, 9))
    concurrencies = sorted(data["concurrency"].unique())
    first = len(fig.data)
    for batch in concurrencies:
        chosen = f"chosen: {sequences([batch])[0]}"
        trace = _gamma_trace(data, batch, chosen, th.SEQUENCE[3], {"width": 2, "dash": "dash"}, 8)
        fig.add_trace(trace.update(visible=bool(batch == default)))
    always = list(range(first)) + [len(fig.data)]
    th.reference_line(fig, 1.0, 1, int(data["gamma"].max()), at="right")
    groups = [[first + i] for i in range(len(concurrencies))]
    steps = visibility_steps([str(batch) for batch in concurrencies], groups, always, "sequences")
    fig.update_layout(
        sliders=[slider(steps, concurrencies.index(default), "third curve, concurrent sequences: ")],
        xaxis={"title": "draft tokens per iteration (gamma)", "dtick": 1},
        yaxis={
            "title": "speedup over plain decoding",
            "ticksuffix": "x",
            "range": [0, float(data["speedup"].max()) * 1.1],
        },
    )
    legend_above(fig)
    prefix = {"sliders[0].currentvalue.prefix": "third curve, sequences: "}
    set_narrow(fig, narrow_below(fig, 480, extra=prefix))
    return fig


GAMMA_FIGURE = FigureSpec(
    "gamma",
    "Speedup against gamma at 1 and 32 sequences",
    "Speedup against γ at one and at 32 sequences, each with its peak; the slider adds a third concurrency.",
    gamma_sweep,
    lambda d, s: draw_gamma_sweep(d),
    setting=lambda s: {"concurrency": 32, "gamma": 2},
)


FIGURES: tuple[FigureSpec, ...] = (
    SAMPLING_FIGURE,
    TOKENS_FIGURE,
    PER_POSITION_FIGURE,
    ALPHA_FIGURE,
    GAMMA_FIGURE,
)
"""The figures of this module, in the order of their pages."""
