"""The article's two pictures of one speculative iteration, with a slider over the batch: the
iteration drawn as a timeline (gamma draft passes, then the verify pass, beside one plain decode
step, each pass's memory time and arithmetic time, and the time per token each buys), and the
card's roofline with the plain step and the verify pass on it. Each figure's data, drawing and
:class:`~sitebuild.figures.spec.FigureSpec` are together."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import SiteSettings
from sitebuild.figures.common import CONCURRENCY, sequences, slider, visibility_steps
from sitebuild.figures.placement import legend_below, narrow_below, set_narrow
from sitebuild.figures.spec import FigureSpec, parts_table
from specmodel.formatting import GIB, plural
from specmodel.model.drafters import drafter_label
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.roofline import arithmetic_intensity, ridge_intensity
from specmodel.model.scenario import DEFAULTS
from specmodel.model.specs import get_hardware

#: The rung both sliders open at: the article's default scenario.
DEFAULT_CONCURRENCY = int(DEFAULTS["concurrency"])
#: Speculation in both pictures (the verify pass on the roofline, the speculative time per token on
#: the timeline) against plain decoding's muted grey. Not the draft model's colour: that is the
#: blue of memory traffic, which the timeline's bars use.
SPEC_COLOR = "#7c6bd6"  # the theme's purple
#: Lanes of the timeline, top to bottom: the drafter's passes, the verify pass, the plain step.
DRAFT_LANE, VERIFY_LANE, PLAIN_LANE = "draft passes", "verify pass", "plain decode step"
SPEC_SERIES, PLAIN_SERIES = "speculation", "plain decoding"
#: Thin edges between passes that follow each other, grey enough for both colour schemes.
PASS_EDGE = {"color": "rgba(128,128,128,0.7)", "width": 1}


def scenario_note(settings: SiteSettings) -> str:
    """The scenario both pictures show besides the batch: drafter, gamma and context."""
    gamma, context = int(DEFAULTS["gamma"]), int(DEFAULTS["context"])
    return f"{drafter_label(settings.deployment.draft)} draft, gamma {gamma}, context {context:,}"


# --- one iteration as a timeline ----------------------------------------------------------------


def _pass_rows(ev: Evaluation, i: int, gamma: int) -> list[dict]:
    """Rung i's passes, each from where the one before it ends: gamma draft passes and the
    verify pass, then the plain step from 0 (seconds, bytes, FLOPs of one GPU)."""
    draft = (ev.draft_step_time, ev.draft_step_memory_time, ev.draft_step_compute_time, ev.draft_step_bytes)
    verify = (ev.verify_time, ev.verify_memory_time, ev.verify_compute_time, ev.verify_bytes)
    plain = (ev.plain_time, ev.plain_memory_time, ev.plain_compute_time, ev.plain_bytes)
    passes = [(DRAFT_LANE, f"draft pass {k} of {gamma}", draft, ev.draft_step_flops) for k in range(1, gamma + 1)]
    passes += [(VERIFY_LANE, "verify pass", verify, ev.verify_flops), (PLAIN_LANE, "plain step", plain, ev.plain_flops)]
    rows, start = [], 0.0
    for lane, name, (time, memory, compute, moved), flops in passes:
        start = 0.0 if lane == PLAIN_LANE else start
        rows.append(
            {
                "lane": lane,
                "pass": name,
                "start_s": start,
                "time_s": float(time[i]),
                "memory_time_s": float(memory[i]),
                "compute_time_s": float(compute[i]),
                "bytes": float(moved[i]),
                "flops": float(flops[i]),
            }
        )
        start += float(time[i])
    return rows


@dataclass(frozen=True)
class Timeline:
    """The timeline's data: every pass at every rung (``passes``), and the time per token of
    speculation and of plain decoding there (``per_token``)."""

    passes: pd.DataFrame
    per_token: pd.DataFrame


def timeline(settings: SiteSettings) -> Timeline:
    """At every rung of the ladder (the article's drafter, gamma and context): each pass of one
    speculative iteration and the plain decode step, with its start, time, memory time,
    arithmetic time, bytes and FLOPs (SI units, full batch, one GPU); and the time per token,
    the iteration's over the tokens it yields on average (E[X]) and the plain step's over one."""
    ev = evaluate(settings=settings, concurrency=CONCURRENCY)
    gamma, plain_fits = int(DEFAULTS["gamma"]), ev.max_concurrency_without_draft >= CONCURRENCY
    passes = []
    for i, batch in enumerate(CONCURRENCY):
        for row in _pass_rows(ev, i, gamma):
            fits = plain_fits[i] if row["lane"] == PLAIN_LANE else ev.fits[i]
            passes.append({"concurrency": int(batch), **row, "fits": bool(fits)})
    iteration, tokens = gamma * ev.draft_step_time + ev.verify_time, ev.mean_acceptance_length
    per_token = pd.concat(
        [
            pd.DataFrame({"concurrency": CONCURRENCY, "series": SPEC_SERIES, "tokens": tokens, "step_s": iteration,
                          "time_per_token_s": iteration / tokens, "fits": ev.fits}),
            pd.DataFrame({"concurrency": CONCURRENCY, "series": PLAIN_SERIES, "tokens": 1.0, "step_s": ev.plain_time,
                          "time_per_token_s": ev.plain_time, "fits": plain_fits}),
        ],
        ignore_index=True,
    )  # fmt: skip
    return Timeline(pd.DataFrame(passes), per_token.sort_values(["concurrency", "series"], kind="stable"))


def timeline_table(data: Timeline) -> pd.DataFrame:
    """The timeline's passes and times per token as one table, each row named by its part."""
    return parts_table("part", ("pass", data.passes), ("time per token", data.per_token))


def _pass_bars(rows: pd.DataFrame, side: str, visible: bool) -> go.Bar:
    """One rung's bars of one side of every pass (``memory`` or ``arithmetic``), each from its
    pass's start: memory traffic above the lane's middle, arithmetic below it (ms)."""
    memory = side == "memory"
    width = rows["memory_time_s" if memory else "compute_time_s"]
    hidden = "hidden under the " + ("arithmetic" if memory else "memory traffic")
    sets = (width >= rows["time_s"] - 1e-15).map({True: "sets the pass's time", False: hidden})
    amount = rows["bytes"] / GIB if memory else rows["flops"] / 1e12
    unit = "GiB moved" if memory else "TFLOP"
    return go.Bar(
        y=rows["lane"],
        x=width * 1e3,
        base=rows["start_s"] * 1e3,
        orientation="h",
        offset=0.02 if memory else -0.42,
        width=0.4,
        name="memory traffic" if memory else "arithmetic",
        legendgroup=side,
        marker={"color": th.MEMORY if memory else th.COMPUTE, "line": PASS_EDGE},
        visible=visible,
        customdata=list(zip(rows["pass"], width * 1e3, amount, sets)),
        hovertemplate="%{customdata[0]}: %{customdata[1]:.3g} ms, %{customdata[2]:.3g} "
        + unit
        + "<br>%{customdata[3]}<extra>"
        + ("memory traffic" if memory else "arithmetic")
        + "</extra>",
    )


def _token_bars(rows: pd.DataFrame, visible: bool) -> go.Bar:
    """One rung's time per token: the iteration's over the tokens it yields, the plain step's over one (ms)."""
    spec = rows["series"] == SPEC_SERIES
    counts = [f"{t:.2f} tokens" if s else plural(1, "token") for s, t in zip(spec, rows["tokens"])]
    text = [f"{c} per {'iteration' if s else 'step'}" for s, c in zip(spec, counts)]
    fits = ["" if f else " (does not fit in memory)" for f in rows["fits"]]
    return go.Bar(
        y=rows["series"],
        x=rows["time_per_token_s"] * 1e3,
        orientation="h",
        width=0.6,
        marker={"color": [SPEC_COLOR if s else th.MUTED for s in spec]},
        text=text,
        textposition="auto",
        cliponaxis=False,
        showlegend=False,
        visible=visible,
        customdata=list(zip(rows["step_s"] * 1e3, fits, counts)),  # counts: the narrow variant's text
        hovertemplate="%{y}%{customdata[1]}: %{customdata[0]:.2f} ms for %{customdata[2]}, "
        "%{x:.2f} ms per token<extra></extra>",
        xaxis="x2",
        yaxis="y2",
    )


def draw_timeline(data: Timeline, settings: SiteSettings) -> go.Figure:
    """The iteration's passes as bars along time (ms) at one rung, memory traffic and arithmetic
    each from its pass's start, beside the plain step (top), and the time per token of each
    (bottom), on one time axis; a slider over the ladder. The axis follows each rung's times."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1, row_heights=[0.64, 0.36])
    fig.update_layout(template=th.TEMPLATE, height=500, autosize=True, barmode="overlay")
    rungs = [int(b) for b in CONCURRENCY]
    groups = []
    for batch in rungs:
        shown = batch == DEFAULT_CONCURRENCY
        rows = data.passes[data.passes["concurrency"] == batch]
        group = [len(fig.data), len(fig.data) + 1, len(fig.data) + 2]
        fig.add_trace(_pass_bars(rows, "memory", shown))
        fig.add_trace(_pass_bars(rows, "arithmetic", shown))
        fig.add_trace(_token_bars(data.per_token[data.per_token["concurrency"] == batch], shown))
        groups.append(group)
    steps = visibility_steps([f"{b:,}" for b in rungs], groups, [], "sequences")
    fig.update_layout(sliders=[slider(steps, rungs.index(DEFAULT_CONCURRENCY), "concurrent sequences: ")])
    lanes = [DRAFT_LANE, VERIFY_LANE, PLAIN_LANE]
    fig.update_yaxes(categoryorder="array", categoryarray=lanes[::-1], row=1, col=1)
    fig.update_yaxes(categoryorder="array", categoryarray=[PLAIN_SERIES, SPEC_SERIES], title_text="time per token",
                     row=2, col=1)  # fmt: skip
    title = f"time, ms ({scenario_note(settings)})"
    fig.update_xaxes(rangemode="tozero", row=1, col=1)
    fig.update_xaxes(rangemode="tozero", title_text=title, row=2, col=1)
    legend_below(fig)
    narrow = {"xaxis2.title.text": "time, ms", "sliders[0].currentvalue.prefix": "sequences: "}
    tokens = [group[2] for group in groups]  # narrow: "2.61 tokens" rather than "... per iteration"
    set_narrow(fig, narrow_below(fig, 500, extra=narrow), [(tokens, {"texttemplate": "%{customdata[2]}"})])
    return fig


TIMELINE_FIGURE = FigureSpec(
    "timeline",
    "One speculative iteration as a timeline beside one plain decode step, with the time per token of each",
    "Each pass of one iteration (the draft passes, then the verify pass) and one plain decode step, as long as "
    "the slower of its memory traffic (blue) and arithmetic (orange), with the time per token below once the "
    "iteration's time is shared over the tokens it yields; the slider sets the number of sequences.",
    timeline,
    draw_timeline,
    timeline_table,
    setting=lambda s: {"concurrency": DEFAULT_CONCURRENCY},
)


# --- the card's roofline --------------------------------------------------------------------------


def roofline(settings: SiteSettings) -> pd.DataFrame:
    """The plain decode step and the verify pass at every rung (the article's drafter, gamma and
    context): FLOPs, bytes, time, arithmetic intensity (FLOP/B) and attained FLOP/s, with the
    card's roof at that intensity, ``min(peak, BW x I)`` (datasheet: dense BF16 peak, HBM
    bandwidth), its ridge point, and the bandwidth and FLOP/s the model lets a pass attain."""
    ev = evaluate(settings=settings, concurrency=CONCURRENCY)
    hw = get_hardware(settings.deployment.hardware)
    bandwidth, peak = hw.memory_bandwidth.value, hw.peak_flops.value
    plain_fits = ev.max_concurrency_without_draft >= CONCURRENCY
    frames = []
    for name, (flops, moved, time, memory, compute, fits) in {
        "plain step": (ev.plain_flops, ev.plain_bytes, ev.plain_time, ev.plain_memory_time, ev.plain_compute_time,
                       plain_fits),
        "verify pass": (ev.verify_flops, ev.verify_bytes, ev.verify_time, ev.verify_memory_time,
                        ev.verify_compute_time, ev.fits),
    }.items():  # fmt: skip
        intensity = arithmetic_intensity(flops, moved)
        frames.append(
            pd.DataFrame(
                {
                    "concurrency": CONCURRENCY,
                    "pass": name,
                    "flops": flops,
                    "bytes": moved,
                    "time_s": time,
                    "intensity_flop_per_byte": intensity,
                    "attained_flops_per_s": flops / time,
                    "roof_flops_per_s": np.minimum(peak, bandwidth * intensity),
                    "attainable_bandwidth_bytes_per_s": moved / memory,
                    "attainable_flops_per_s": flops / compute,
                    "memory_bandwidth_bytes_per_s": bandwidth,
                    "peak_flops_per_s": peak,
                    "ridge_flop_per_byte": ridge_intensity(peak, bandwidth),
                    "fits": fits,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _line(x: Sequence[float], y: Sequence[float], name: str, line: dict, **extra: object) -> go.Scatter:
    """A roof of the card: a line through (x, y), no hover text unless ``extra`` gives one."""
    return go.Scatter(x=list(x), y=list(y), mode="lines", name=name, line=line, **{"hoverinfo": "skip", **extra})


def _roof_traces(data: pd.DataFrame, span: Sequence[float]) -> list[go.Scatter]:
    """The card's memory roof up to the ridge and its compute roof beyond (datasheet), the roof a
    pass attains in the model (dotted), and the ridge point, over intensities ``span`` (TFLOP/s)."""
    first = data.iloc[0]
    bandwidth, peak = float(first["memory_bandwidth_bytes_per_s"]), float(first["peak_flops_per_s"])
    reach_bw, reach_peak = float(first["attainable_bandwidth_bytes_per_s"]), float(first["attainable_flops_per_s"])
    ridge, low, high = float(first["ridge_flop_per_byte"]), span[0], span[1]
    share = f"{reach_bw / bandwidth:.0%} of the bandwidth, {reach_peak / peak:.0%} of the peak"
    return [
        _line([low, ridge], [bandwidth * low / 1e12, peak / 1e12], f"memory roof: {bandwidth / 1e12:.2f} TB/s",
              {"width": 2.5, "color": th.MEMORY}),
        _line([ridge, high], [peak / 1e12] * 2, f"compute roof: {peak / 1e12:,.0f} TFLOP/s",
              {"width": 2.5, "color": th.COMPUTE}),
        _line([low, reach_peak / reach_bw, high], [reach_bw * low / 1e12, reach_peak / 1e12, reach_peak / 1e12],
              "attainable roof", {"width": 1.5, "dash": "dot", "color": th.MUTED}, meta=th.REFERENCE,
              hoverinfo=None, hovertemplate=f"what a pass attains in the model: {share}<extra></extra>"),
        go.Scatter(x=[ridge], y=[peak / 1e12], mode="markers", showlegend=False, name="ridge point",
                   marker={"size": 10, "color": th.MUTED, "symbol": "x"},
                   hovertemplate="ridge point: %{x:.0f} FLOP per byte, %{y:,.0f} TFLOP/s<extra></extra>"),
    ]  # fmt: skip


def _pass_point(row: pd.Series, color: str, symbol: str, visible: bool) -> go.Scatter:
    """One pass at one rung as a point on the roofline (open: the batch does not fit in memory)."""
    fits = bool(row["fits"])
    name = str(row["pass"]) + ("" if fits else ", does not fit in memory")
    bound = "memory-bound" if row["roof_flops_per_s"] < row["peak_flops_per_s"] else "compute-bound"
    detail = (
        f"{sequences([row['concurrency']])[0]}: {row['flops'] / 1e12:.3g} TFLOP over {row['bytes'] / GIB:.3g} GiB "
        f"in {row['time_s'] * 1e3:.3g} ms, {bound}"
    )
    return go.Scatter(
        x=[row["intensity_flop_per_byte"]],
        y=[row["attained_flops_per_s"] / 1e12],
        mode="markers",
        name=name,
        visible=visible,
        marker={
            "size": 13,
            "color": color,
            "symbol": symbol if fits else f"{symbol}-open",
            "line": {"width": 2, "color": color},
        },
        hovertemplate="%{x:.3g} FLOP per byte, %{y:.3g} TFLOP/s<br>" + detail + "<extra>" + name + "</extra>",
    )


def _decades(low: float, high: float) -> dict:
    """A log axis from ``low`` to ``high`` with a labelled tick at each power of ten."""
    ticks = [10.0**e for e in range(int(np.ceil(np.log10(low))), int(np.floor(np.log10(high))) + 1)]
    return {"type": "log", "range": np.log10([low, high]), "tickvals": ticks, "ticktext": [f"{t:,.0f}" for t in ticks]}


def draw_roofline(data: pd.DataFrame) -> go.Figure:
    """Attained TFLOP/s against FLOP per byte (log-log): the card's roofs and ridge point, and the
    plain step (circle) and verify pass (purple diamond) at one rung; a slider over the ladder."""
    fig = th.base_figure(height=540)
    span = (0.5, 4000.0)
    roofs = _roof_traces(data, span)
    fig.add_traces(roofs)
    rungs = [int(b) for b in CONCURRENCY]
    looks = {"plain step": (th.MUTED, "circle"), "verify pass": (SPEC_COLOR, "diamond")}
    groups = []
    for batch in rungs:
        group = []
        for _, row in data[data["concurrency"] == batch].iterrows():
            group.append(len(fig.data))
            fig.add_trace(_pass_point(row, *looks[str(row["pass"])], batch == DEFAULT_CONCURRENCY))
        groups.append(group)
    ridge, peak = float(data["ridge_flop_per_byte"].iloc[0]), float(data["peak_flops_per_s"].iloc[0]) / 1e12
    fig.add_annotation(
        x=np.log10(ridge),  # a log axis places annotations by the logarithm
        y=np.log10(peak),
        text=f"ridge point<br>{ridge:.0f} FLOP per byte",
        showarrow=True,
        arrowhead=0,
        arrowcolor=th.MUTED,
        ax=-24,
        ay=-34,
        xanchor="right",
        font={"size": 12},
    )
    steps = visibility_steps([f"{b:,}" for b in rungs], groups, list(range(len(roofs))), "sequences")
    fig.update_layout(
        sliders=[slider(steps, rungs.index(DEFAULT_CONCURRENCY), "concurrent sequences: ")],
        xaxis={**_decades(*span), "title": "arithmetic intensity, FLOP per byte moved"},
        yaxis={**_decades(0.5 * span[0], peak * 4), "title": "attained TFLOP/s"},
    )
    legend_below(fig)
    narrow = {"xaxis.title.text": "FLOP per byte", "sliders[0].currentvalue.prefix": "sequences: "}
    set_narrow(fig, narrow_below(fig, 620, extra=narrow))
    return fig


ROOFLINE_FIGURE = FigureSpec(
    "roofline",
    "The card's roofline with the plain decode step and the verify pass on it",
    "Attained FLOP/s against FLOP per byte on the card's roofline, blue memory roof up to the ridge point and "
    "orange compute roof beyond, with the plain decode step (circle) and the verify pass (purple diamond) "
    "at the number of sequences the slider sets; open markers: that batch does not fit in memory.",
    roofline,
    lambda d, s: draw_roofline(d),
    setting=lambda s: {"concurrency": DEFAULT_CONCURRENCY},
)


FIGURES: tuple[FigureSpec, ...] = (
    TIMELINE_FIGURE,
    ROOFLINE_FIGURE,
)
"""The figures of this module, in the order of the article."""
