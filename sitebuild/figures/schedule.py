"""The schedule of gamma by load (the article's section on choosing gamma): the best gamma at
every batch size as vLLM's ``num_speculative_tokens_per_batch_size``
(:mod:`specmodel.schedule`), for the article's deployment and for a small draft model serving a
large target on four GPUs (the page "Beyond one GPU"), under the ideal roofline and the vLLM
profile, set against one gamma at every load. The pairs' scenarios, their schedules (computed
once per build: the figure, the numbers, the claims and the printed configuration read the
same ones; the simulator's cover the same loads), the figure's data, drawing and
:class:`~sitebuild.figures.spec.FigureSpec` are here."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import SiteSettings
from sitebuild.figures import beyond as multi
from sitebuild.figures import placement as pl
from sitebuild.figures.common import CONCURRENCY, menu, sequences
from sitebuild.figures.spec import FigureSpec
from sitebuild.memo import Keyed
from specmodel.formatting import plural
from specmodel.model.acceptance import alpha_for_mean_acceptance_length
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import DEFAULTS, ENGINES
from specmodel.model.specs import get_architecture
from specmodel.model.types import IntArray
from specmodel.schedule import OFF, GammaSchedule, gamma_schedule, most_sequences, vllm_schedule_json

#: The largest load a schedule covers: the top rung of the site's ladder (and the simulator's),
#: or fewer where plain decoding holds fewer sequences in memory.
LARGEST_LOAD = int(CONCURRENCY[-1])
#: The gamma a schedule is set against, at every load: the simulator's default.
FIXED_GAMMA = int(DEFAULTS["gamma"])
#: The second pair: the measured draft model of the page "Beyond one GPU" on its deployment.
BIG_DRAFT = "llama-3.2-1b"
#: The pairs, by key: the article's deployment, and BIG_DRAFT serving the large target.
PAIRS = ("article", "big")
#: Each engine's colour (as on the validation figures) and how the legend names it.
ENGINE_COLORS = th.ENGINE_COLORS
ENGINE_LABELS = {"ideal": "ideal roofline", "vllm": "vLLM profile"}


def loads(settings: SiteSettings, **fields: Any) -> IntArray:
    """The batch sizes a schedule covers for the scenario of ``fields``: every one from 1 to the
    most plain decoding holds in memory (:func:`specmodel.schedule.most_sequences`), at most
    :data:`LARGEST_LOAD`."""
    return np.arange(1, min(most_sequences(settings, **fields), LARGEST_LOAD) + 1)


def big_pair_fields(settings: SiteSettings, engine: str) -> dict[str, Any]:
    """BIG_DRAFT serving the large target of :mod:`sitebuild.figures.beyond` on its four GPUs, at
    the lengths of the page's workload and the acceptance fitted under ``engine`` to its measured
    speedup at one sequence (:func:`sitebuild.figures.beyond.series`): the fitted mean acceptance
    length at the measured gamma, as the ``same`` profile's alpha, so that every gamma can be
    tried."""
    found = [s for s in multi.series(settings, engine) if s.dataset == multi.WORKLOAD and s.drafter == BIG_DRAFT]
    fields = dict(found[0].fields)
    alpha = alpha_for_mean_acceptance_length(fields.pop("mean_acceptance_length"), fields.pop("gamma"))
    del fields["concurrency"]
    return {**fields, "acceptance": "same", "alpha": float(alpha), "engine": engine}


def pair_fields(settings: SiteSettings, pair: str, engine: str) -> dict[str, Any]:
    """The scenario of ``pair`` under ``engine``: the article's default scenario, or the large pair's."""
    return {"engine": engine} if pair == "article" else big_pair_fields(settings, engine)


def pair_label(settings: SiteSettings, pair: str) -> str:
    """A pair's name on the figure's menu, short enough for a phone: its draft model and how many
    GPUs the target is split over (``Qwen3-0.6B draft, 1 GPU``; the caption names the targets)."""
    if pair == "article":
        draft, gpus = settings.deployment.draft, settings.deployment.tensor_parallel or 1
    else:
        draft, gpus = BIG_DRAFT, multi.BIG_TP
    return f"{get_architecture(draft).name} draft, {plural(gpus, 'GPU')}"


@dataclass(frozen=True)
class PairSchedule:
    """A pair's schedule under one engine, its scenario, and the speedup of FIXED_GAMMA at every load."""

    fields: dict[str, Any]
    schedule: GammaSchedule
    fixed_speedup: np.ndarray

    @property
    def json(self) -> str:
        """The schedule as vLLM's configuration (one line of JSON)."""
        return vllm_schedule_json(self.schedule.ranges)


def schedules(settings: SiteSettings) -> dict[tuple[str, str], PairSchedule]:
    """(pair, engine) -> its schedule over :func:`loads`, for every pair and engine (computed
    once per settings)."""
    return _schedules(Keyed(repr(settings), settings))


@cache
def _schedules(settings: Keyed[SiteSettings]) -> dict[tuple[str, str], PairSchedule]:
    """:func:`schedules`, memoised by the settings' JSON."""
    out = {}
    for pair in PAIRS:
        for engine in ENGINES:
            fields = pair_fields(settings.value, pair, engine)
            batch = loads(settings.value, **fields)
            schedule = gamma_schedule(batch_sizes=batch, settings=settings.value, **fields)
            fixed = evaluate(settings=settings.value, concurrency=batch, gamma=FIXED_GAMMA, **fields).speedup
            out[(pair, engine)] = PairSchedule(fields, schedule, np.asarray(fixed))
    return out


# --- the figure -------------------------------------------------------------------------------


def schedule_frame(settings: SiteSettings) -> pd.DataFrame:
    """Every pair and engine at every load: the scheduled gamma (0: off), the best gamma and its
    speedup, the speedup the schedule gives (1 where it is off: plain decoding), FIXED_GAMMA's
    speedup and whether speculation fits in memory."""
    frames = []
    for (pair, engine), p in schedules(settings).items():
        s = p.schedule
        frames.append(
            pd.DataFrame(
                {
                    "pair": pair_label(settings, pair),
                    "engine": engine,
                    "concurrency": s.batch_sizes,
                    "gamma": s.gamma,
                    "best_gamma": s.best_gamma,
                    "best_speedup": s.speedup,
                    "schedule_speedup": np.where(s.gamma == OFF, 1.0, s.speedup),
                    "fixed_gamma": FIXED_GAMMA,
                    "fixed_speedup": p.fixed_speedup,
                    "fits": s.fits,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


#: Loads drawn per octave of the log axis (besides every load where the schedule or the fit changes).
DRAWN_PER_OCTAVE = 8


def drawn(part: pd.DataFrame) -> pd.DataFrame:
    """The loads of ``part`` (one pair and engine, ascending) a line is drawn through: about
    DRAWN_PER_OCTAVE per octave, and both sides of every change of the scheduled gamma or of
    whether speculation fits, so that every step of the schedule is drawn where it is. The
    published table keeps every load."""
    batch = part["concurrency"].to_numpy()
    spaced = np.round(np.exp2(np.arange(0, np.log2(batch[-1]) * DRAWN_PER_OCTAVE + 1) / DRAWN_PER_OCTAVE))
    change = np.flatnonzero((np.diff(part["gamma"]) != 0) | (np.diff(part["fits"].astype(int)) != 0))
    keep = np.isin(batch, spaced) | np.isin(np.arange(len(batch)), np.r_[change, change + 1, len(batch) - 1])
    return part[keep]


def _traces(part: pd.DataFrame, engine: str, visible: bool) -> list[tuple[go.Scatter, int]]:
    """One engine's traces for one pair, each with its row: the schedule's speedup and
    FIXED_GAMMA's (gaps where speculation does not fit), and the scheduled gamma."""
    color, label = ENGINE_COLORS[engine], ENGINE_LABELS[engine]
    part = drawn(part)
    batch, gamma = part["concurrency"], part["gamma"].to_numpy()
    said = np.where(gamma == OFF, "off", [f"γ = {g}" for g in gamma])
    fixed = np.where(part["fits"].to_numpy(dtype=bool), part["fixed_speedup"], np.nan)
    common = {"x": batch, "mode": "lines", "legendgroup": engine, "visible": visible, "hovertext": sequences(batch)}
    return [
        (
            go.Scatter(
                y=part["schedule_speedup"],
                name=f"{label}: the schedule",
                line={"color": color, "width": 2.5},
                text=said,
                hovertemplate="%{hovertext}: %{text}, %{y:.2f}x<extra>" + label + "</extra>",
                **common,
            ),
            1,
        ),
        (
            go.Scatter(
                y=fixed,
                name=f"{label}: γ = {FIXED_GAMMA} at every load",
                line={"color": color, "width": 1.5, "dash": "dash"},
                hovertemplate="%{hovertext}: γ = " + f"{FIXED_GAMMA}, " + "%{y:.2f}x<extra>" + label + "</extra>",
                connectgaps=False,
                **common,
            ),
            1,
        ),
        (
            go.Scatter(
                y=gamma,
                name=f"{label}: γ scheduled",
                line={"color": color, "width": 2, "shape": "hv"},
                showlegend=False,
                text=said,
                hovertemplate="%{hovertext}: %{text}<extra>" + label + "</extra>",
                **common,
            ),
            2,
        ),
    ]


#: What the figure says where neither pair holds one sequence in memory.
NOTHING_FITS = "not one sequence fits in memory: there is no schedule to draw"


def draw_schedule(data: pd.DataFrame, default: str) -> go.Figure:
    """Speedup against load with the schedule and with FIXED_GAMMA under each engine (top), and
    the gamma the schedule runs (bottom), one pair at a time (buttons)."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.07, row_heights=[0.64, 0.36])
    fig.update_layout(template=th.TEMPLATE, height=566, autosize=True)
    pairs = list(dict.fromkeys(data["pair"]))  # those that hold at least one sequence in memory
    if not pairs:
        fig.add_annotation(text=NOTHING_FITS, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
        return fig
    default = default if default in pairs else pairs[0]
    groups = []
    for pair in pairs:
        group = []
        for engine in ENGINES:
            part = data[(data["pair"] == pair) & (data["engine"] == engine)]
            for trace, row in _traces(part, engine, pair == default):
                group.append(len(fig.data))
                fig.add_trace(trace, row=row, col=1)
        groups.append(group)
    top = int(data["concurrency"].max())
    th.reference_line(fig, 1.0, 1, top, row=1, col=1)
    always = [len(fig.data) - 1]
    buttons = [
        {"method": "restyle", "args": [{"visible": [i in g or i in always for i in range(len(fig.data))]}], "label": p}
        for p, g in zip(pairs, groups)
    ]
    fig.update_layout(updatemenus=[menu("model pair", buttons, pairs.index(default))])
    ticks = [b for b in CONCURRENCY.tolist() if b <= top]
    fastest = max([1.0, *data["schedule_speedup"], *data.loc[data["fits"], "fixed_speedup"]])
    fig.update_xaxes(**th.log2_axis(ticks), range=[0, float(np.log10(top))])
    fig.update_xaxes(title_text="concurrent sequences", row=2, col=1)
    fig.update_yaxes(title_text="speedup", ticksuffix="x", range=[0, fastest * 1.08], row=1, col=1)
    gammas = list(range(int(data["gamma"].max()) + 1))
    fig.update_yaxes(title_text="γ", range=[-0.4, gammas[-1] + 0.4], tickvals=gammas,
                     ticktext=["off" if g == OFF else str(g) for g in gammas], row=2, col=1)  # fmt: skip
    pl.legend_below(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 620, extra=pl.sparse_ticks(ticks, axes=2)))
    return fig


SCHEDULE_FIGURE = FigureSpec(
    "gamma-schedule",
    "Speedup against load with the best γ at every load and with one γ throughout",
    "Top, the speedup of the article's deployment at every load with the γ the schedule picks for it (solid; "
    f"1x where the schedule turns speculation off) and with γ = {FIXED_GAMMA} at every load (dashed, ending where "
    "the drafter no longer fits in memory), under the ideal roofline (orange) and the vLLM profile (purple); "
    "bottom, the γ the schedule runs at each load; the menu switches to "
    f"{get_architecture(BIG_DRAFT).name} drafting for "
    f"{get_architecture(multi.BIG_TARGET).name} on {multi.deployment_name(multi.BIG_HARDWARE, multi.BIG_TP)}, the "
    "deployment of the page Beyond one GPU.",
    schedule_frame,
    lambda d, s: draw_schedule(d, pair_label(s, "article")),
    setting=lambda s: {},
)


FIGURES: tuple[FigureSpec, ...] = (SCHEDULE_FIGURE,)
"""The figures of this module, in the order of their pages."""
