"""Where the time goes and what it buys: a step's time per generated token split into its
parts, plain against speculative, at every rung of the ladder; and each user's token rate
against the server's total, with the two per-user targets the article reads off. Each
figure's data, drawing and :class:`~sitebuild.figures.spec.FigureSpec` are together."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sitebuild import theme as th
from sitebuild.claims.serving import HIGH_TARGET_RUNG, LOW_TARGET_RUNG, latency_target
from sitebuild.config import ArticleDeployment, SiteSettings
from sitebuild.figures.common import CONCURRENCY, UNFIT_SYMBOL, menu, named_groups, sequences
from sitebuild.figures.placement import legend_below, narrow_below, set_narrow
from sitebuild.figures.spec import FigureSpec
from specmodel.model.drafters import drafter_label
from specmodel.model.evaluate import evaluate
from specmodel.model.timing import TIME_PARTS

# --- where the time goes ----------------------------------------------------------------------


def breakdown_cases(settings: SiteSettings) -> tuple[tuple[str, int], ...]:
    """(drafter, context) of each case the breakdown figure offers, the article's first."""
    draft = settings.deployment.draft
    return ((draft, 2048), (draft, 512), (draft, 8192), ("ngram", 2048), ("ngram", 256), ("eagle", 2048))


def time_breakdown(settings: SiteSettings) -> pd.DataFrame:
    """For each case of :func:`breakdown_cases` and each rung: the time per generated token of
    plain decoding and of speculation split into :data:`TIME_PARTS`, as shares of the plain
    step's (``share``) and in seconds (``seconds``), with the speedup and whether it fits."""
    frames = []
    for drafter, context in breakdown_cases(settings):
        ev = evaluate(settings=settings, concurrency=CONCURRENCY, drafter=drafter, context=context)
        plain_total = ev.base_time_parts.sum(axis=-1)
        for mode, parts in (("plain", ev.base_time_parts), ("speculative", ev.spec_time_parts)):
            for k, name in enumerate(TIME_PARTS):
                frames.append(
                    pd.DataFrame(
                        {
                            "case": f"{drafter_label(drafter)}, {context:,} tokens",
                            "drafter": drafter,
                            "context": context,
                            "concurrency": CONCURRENCY,
                            "mode": mode,
                            "part": name,
                            "seconds": parts[:, k],
                            "share": parts[:, k] / plain_total,
                            "speedup": ev.speedup,
                            "fits": ev.fits,
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


#: Each part's legend label and colour: the target's in blues and orange, the drafter's in
#: purples and green, communication in gold, the engine's fixed costs dark grey (no verdict colour).
PARTS = {
    "target_weights": ("target: weights", "#3b6fd8"),
    "target_kv": ("target: cache", "#8fb0ee"),
    "target_arithmetic": ("target: arithmetic not hidden", "#e0662f"),
    "draft_weights": ("drafter: weights", "#7c6bd6"),
    "draft_kv": ("drafter: cache", "#b9aef0"),
    "draft_arithmetic": ("drafter: arithmetic not hidden", "#5c8a2e"),
    "communication": ("all-reduces", "#a67c00"),
    "engine_fixed": ("engine fixed costs", th.MUTED),
}


MODES = {"plain": "plain", "speculative": "spec."}


def _part_bar(rows: pd.DataFrame, name: str, visible: bool) -> go.Bar:
    """One part's bars of one case: its share of the plain step at each rung, plain and speculative."""
    label, color = PARTS[name]
    rungs = [f"{b:,}" for b in rows["concurrency"]]
    modes = [MODES[m] for m in rows["mode"]]
    return go.Bar(
        x=[rungs, modes],
        y=rows["share"],
        name=label,
        marker={"color": color},
        visible=visible,
        legendgroup=name,
        showlegend=True,
        customdata=np.stack([rows["seconds"] * 1e3, rows["speedup"]], axis=-1),
        hovertemplate="%{x}: %{y:.2f} of a plain step, %{customdata[0]:.3f} ms per token"
        "<br>speedup %{customdata[1]:.2f}x<extra>" + label + "</extra>",
    )


def _case_menu(cases: list[str], groups: list[list[int]], traces: int) -> dict:
    """The menu that shows one case's bars (``groups[k]`` for ``cases[k]``) of ``traces`` in all."""
    buttons = []
    for case, group in zip(cases, groups):
        visible = [i in group for i in range(traces)]
        buttons.append({"method": "restyle", "args": [{"visible": visible}], "label": case})
    return menu("drafter and prompt length", buttons, 0)


def draw_time_breakdown(data: pd.DataFrame) -> go.Figure:
    """Stacked bars, two per rung (plain, speculative), of the time per generated token as a
    share of the plain step's, by part; a menu switches between the cases (drafter, context).
    Parts that are zero in every case are left out of the legend."""
    fig = th.base_figure(height=488)
    cases = list(dict.fromkeys(data["case"]))
    used = [p for p in TIME_PARTS if data.loc[data["part"] == p, "share"].max() > 1e-9]
    groups: list[list[int]] = []
    for c, case in enumerate(cases):
        group = []
        part_of_case = data[data["case"] == case]
        for name in used:
            rows = part_of_case[part_of_case["part"] == name].sort_values(["concurrency", "mode"])
            group.append(len(fig.data))
            fig.add_trace(_part_bar(rows, name, c == 0))
        groups.append(group)
    totals = data.groupby(["case", "concurrency", "mode"])["share"].sum()
    top = float(np.ceil(totals.max() * 10) / 10)
    fig.update_layout(
        barmode="stack",
        updatemenus=[_case_menu(cases, groups, len(fig.data))],
        xaxis={"title": "concurrent sequences: plain decoding and speculation", "type": "multicategory"},
        yaxis={"title": "time per token, share of a plain step", "range": [0, top]},
    )
    # The plain step's time: a bar above this line takes longer than plain decoding.
    plain_step = {"dash": "dash", "width": 1.5, "color": th.EVEN}
    fig.add_shape(type="line", xref="paper", x0=0, x1=1, y0=1, y1=1, line=plain_step)
    legend_below(fig, band=104)  # two rows of tick labels (rung, plain or speculative) and the title
    narrow = {"xaxis.tickfont.size": 9, "xaxis.title.text": "sequences: plain, spec."}
    set_narrow(fig, narrow_below(fig, 628, band=104, extra=narrow))
    return fig


BREAKDOWN_FIGURE = FigureSpec(
    "breakdown",
    "Time per generated token split into its parts, plain decoding against speculation, at every concurrency",
    "Two bars per rung, plain decoding and speculation with the drafter and prompt length the menu picks, each "
    "part a share of the plain step's time per token, so that a speculative bar above the dashed line is slower "
    "than plain decoding.",
    time_breakdown,
    lambda d, s: draw_time_breakdown(d),
)


# --- what it buys: each user's rate against the server's --------------------------------------


def latency_throughput(settings: SiteSettings) -> tuple[pd.DataFrame, tuple[float, float]]:
    """Each user's token rate against the server's total at every rung, for plain decoding and
    each drafter of the article's ladder (ideal engine), with whether it fits; and the two
    per-user targets the article reads off (:mod:`sitebuild.claims.serving`)."""
    dep = settings.deployment
    drafters = (dep.draft, dep.big_draft, "ngram", "eagle-32k")
    frames = []
    for i, drafter in enumerate(drafters):
        ev = evaluate(settings=settings, concurrency=CONCURRENCY, drafter=drafter)
        if i == 0:
            plain_fits = evaluate(settings=settings, concurrency=CONCURRENCY, drafter="ngram").fits
            frames.append(
                pd.DataFrame(
                    {
                        "series": "plain decoding",
                        "drafter": "",
                        "concurrency": CONCURRENCY,
                        "per_user": ev.base_tokens_per_s_per_sequence,
                        "total": ev.base_tokens_per_s,
                        "fits": plain_fits,
                    }
                )
            )
        frames.append(
            pd.DataFrame(
                {
                    "series": drafter_label(drafter),
                    "drafter": drafter,
                    "concurrency": CONCURRENCY,
                    "per_user": ev.spec_tokens_per_s_per_sequence,
                    "total": ev.spec_tokens_per_s,
                    "fits": ev.fits,
                }
            )
        )
    targets = (latency_target(settings, HIGH_TARGET_RUNG), latency_target(settings, LOW_TARGET_RUNG))
    return pd.concat(frames, ignore_index=True), targets


def _latency_table(computed: tuple[pd.DataFrame, tuple[float, float]]) -> pd.DataFrame:
    frame, targets = computed
    lines = pd.DataFrame({"series": [f"target: {t:,.0f} tokens/s per user" for t in targets], "per_user": targets})
    return pd.concat([frame, lines], ignore_index=True)


def _decade_ticks(low: float, high: float) -> dict:
    """Ticks at 1, 2 and 5 times each power of ten between ``low`` and ``high``."""
    ticks = [
        m * 10**e
        for e in range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
        for m in (1, 2, 5)
        if low <= m * 10**e <= high
    ]
    return {"tickvals": ticks, "ticktext": [f"{t:,.0f}" for t in ticks]}


def _rate_trace(part: pd.DataFrame, series: str, color: str) -> go.Scatter:
    """One configuration's rate per user against the total, a point per rung (open: does not fit)."""
    fits = part["fits"].to_numpy(dtype=bool)
    return go.Scatter(
        x=part["total"],
        y=part["per_user"],
        name=series,
        mode="lines+markers",
        line={"color": color, "width": 2.5},
        marker={
            "size": 8,
            "color": color,
            "symbol": ["circle" if f else UNFIT_SYMBOL for f in fits],
            "line": {"width": 2, "color": color},
        },
        hovertext=sequences(part["concurrency"]),
        text=["" if f else " (does not fit)" for f in fits],
        hovertemplate="%{hovertext}%{text}: %{y:,.0f} tokens/s per user, %{x:,.0f} in all<extra>" + series + "</extra>",
    )


def draw_latency_throughput(
    data: pd.DataFrame, targets: tuple[float, float], deployment: ArticleDeployment
) -> go.Figure:
    """Each user's token rate against the server's total, one line per configuration with a
    point per rung (open: does not fit), and the two per-user targets the article reads off."""
    fig = th.base_figure(height=480)
    for series, part in named_groups(data, "series"):
        drafter = part["drafter"].iloc[0]
        fig.add_trace(_rate_trace(part, series, th.drafter_color(drafter, deployment) if drafter else th.MUTED))
    low_x, high_x = float(data["total"].min()) * 0.8, float(data["total"].max()) * 1.25
    for target, dash in zip(targets, ("dash", "dashdot")):
        # A target rate per user, named in the legend (a label on the plot would sit on the points).
        fig.add_trace(
            go.Scatter(
                x=[low_x, high_x],
                y=[target, target],
                mode="lines",
                name=f"target: {target:,.0f} tokens/s per user",
                line={"dash": dash, "width": 1.5, "color": th.MUTED},
                meta=th.REFERENCE,
                hoverinfo="skip",
            )
        )
    low_y, high_y = float(data["per_user"].min()) * 0.8, float(data["per_user"].max()) * 1.25
    fig.update_layout(
        xaxis={
            "type": "log",
            "title": "tokens per second, all users together",
            "range": np.log10([low_x, high_x]),
            **_decade_ticks(low_x, high_x),
        },
        yaxis={
            "type": "log",
            "title": "tokens per second, each user",
            "range": np.log10([low_y, high_y]),
            **_decade_ticks(low_y, high_y),
        },
    )
    legend_below(fig)
    set_narrow(fig, narrow_below(fig, 620))
    return fig


LATENCY_FIGURE = FigureSpec(
    "latency",
    "Tokens per second for each user against tokens per second in all, plain decoding and each drafter",
    "One point per concurrency, from one sequence (top left) to 1,024, open where it does not fit: along a "
    "target line, the curve that reaches furthest right serves the most tokens per second at that rate per user.",
    latency_throughput,
    lambda d, s: draw_latency_throughput(d[0], d[1], s.deployment),
    _latency_table,
)


FIGURES: tuple[FigureSpec, ...] = (
    BREAKDOWN_FIGURE,
    LATENCY_FIGURE,
)
"""The figures of this module, in the order of their pages."""
