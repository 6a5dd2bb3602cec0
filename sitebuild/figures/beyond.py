"""The page "Beyond one GPU", and the four-GPU measurements the validation page sets against
the model: Llama-3-70B on four H100s against the public measurements of vLLM (each series'
acceptance fitted at batch 1, :mod:`specmodel.acceptance_fit`), the same model on MI300X, a
chain against trees of guesses, and a mixture of experts against a dense model. The page's
deployments, drafters and workloads are here; each figure's data (tidy DataFrames), drawing
and :class:`~sitebuild.figures.spec.FigureSpec` are together, each table beside its figure."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment, SiteSettings
from sitebuild.figures import placement as pl
from sitebuild.figures.common import (
    CONCURRENCY,
    IDEAL_SYMBOL,
    SPEEDUP_HOVER,
    UNFIT_SYMBOL,
    fitted_frame,
    named_groups,
    point_colors,
    prediction_diagonal,
    sequences,
    square_scatter,
)
from sitebuild.figures.spec import FigureSpec, parts_table
from sitebuild.memo import Keyed
from specmodel.acceptance_fit import FittedSeries, fit_series
from specmodel.formatting import GIB, percent
from specmodel.measurements import MULTIGPU_MEASUREMENTS_FILE, load_measurements
from specmodel.model import experts
from specmodel.model.drafters import drafter_kind
from specmodel.model.evaluate import evaluate
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import DEFAULTS, ENGINES
from specmodel.model.specs import get_architecture, get_hardware

#: The measured deployment: Llama-3-70B on four H100s (SpecDecode-Bench, arXiv:2601.11580).
BIG_TARGET, BIG_HARDWARE, BIG_TP = "llama-3-70b", "h100-sxm", 4
#: The engine the page prices real deployments with (fitted to measurements of vLLM).
ENGINE = "vllm"
#: The measured workload the page's comparisons of cards use (longer prompts and outputs).
WORKLOAD = "ShareGPT"
#: Deployments of the measured model the page compares: (hardware, tensor-parallel degree).
DEPLOYMENTS = (("h100-sxm", 4), ("mi300x", 4), ("mi300x", 2))


# --- the measured series, their acceptance fitted at batch 1 ----------------------------------


def fitted(settings: SiteSettings, engine: str = ENGINE) -> list[FittedSeries]:
    """Every series of the four-GPU measurements with its mean acceptance length fitted at
    batch 1 under ``engine`` (computed once per settings and engine: fitting takes seconds under
    the ideal engine, whose cohort is simulated for every candidate acceptance, and the figures,
    tables and numbers of one build all need the same fits)."""
    return _fitted(engine, Keyed(repr(settings), settings))


@cache
def _fitted(engine: str, settings: Keyed[SiteSettings]) -> list[FittedSeries]:
    """:func:`fitted`, memoised by the engine and the settings' JSON."""
    return fit_series(load_measurements(MULTIGPU_MEASUREMENTS_FILE), engine, settings.value)


@dataclass(frozen=True)
class Series:
    """A measured series as the page uses it: its dataset, drafter, fitted mean acceptance
    length and the scenario it measured (the fitted acceptance in it)."""

    dataset: str
    drafter: str
    mean_acceptance_length: float
    fields: dict


def series(settings: SiteSettings, engine: str = ENGINE) -> list[Series]:
    """The measured series with their fitted acceptance, in the file's order."""
    out = []
    for fit in fitted(settings, engine):
        row, length = fit.rows[0], fit.mean_acceptance_length
        out.append(Series(row.dataset, row.method, length, row.scenario(length)))
    return out


def workload_series(settings: SiteSettings, name: str = WORKLOAD) -> dict[str, Series]:
    """Drafter -> its series of the workload ``name``."""
    return {s.drafter: s for s in series(settings) if s.dataset == name}


def evaluate_series(settings: SiteSettings, s: Series, **override: Any) -> Evaluation:
    """The model for a measured series' scenario (fitted acceptance, vLLM engine), with
    ``override`` (the ladder of concurrencies by default)."""
    fields = {**s.fields, "concurrency": CONCURRENCY, **override}
    return evaluate(**fields, engine=ENGINE, settings=settings)


# --- ladders side by side, one panel per deployment -------------------------------------------


def _ladder_columns(ev: Evaluation) -> dict:
    return {
        "concurrency": CONCURRENCY,
        "speedup": ev.speedup,
        "spec_tokens_per_s": ev.spec_tokens_per_s,
        "base_tokens_per_s": ev.base_tokens_per_s,
        "fits": ev.fits,
        "memory_gib": ev.memory_required_bytes / GIB,
        "usable_gib": ev.usable_memory_bytes / GIB,
    }


def deployment_name(hardware: str, gpus: int) -> str:
    """A panel's title: ``4 x H100-SXM, 80 GB``."""
    return f"{gpus} × {hardware.upper()}, {get_hardware(hardware).datasheet_memory_capacity.value / 1e9:.0f} GB"


SPEEDUP_AXIS = "speedup over plain decoding"
#: Ticks of the concurrency axis of side-by-side panels (every other power of two).
PANEL_TICKS = [2**i for i in range(0, 11, 2)]
#: Marker of a public measurement, drawn over the model's curve.
MEASURED_SYMBOL = "diamond"


def drafter_color(drafter: str, deployment: ArticleDeployment) -> str:
    """A drafter's colour; a draft model outside the deployment's roles takes the draft's."""
    color = th.drafter_color(drafter, deployment)
    return th.ROLE_COLORS["draft"] if color == th.MUTED and drafter_kind(drafter) == "model" else color


def _curve(part: pd.DataFrame, drafter: str, panel: str, color: str, showlegend: bool) -> go.Scatter:
    """One drafter's speedup against concurrency on one deployment; open markers do not fit."""
    fits = part["fits"].to_numpy(dtype=bool)
    gpus = int(part["gpus"].iloc[0])
    where = "1 GPU" if gpus == 1 else f"{gpus} GPUs"
    return go.Scatter(
        x=part["concurrency"],
        y=part["speedup"],
        mode="lines+markers",
        name=th.drafter_label(drafter),
        line={"color": color, "width": 2.5},
        legendgroup=drafter,
        showlegend=showlegend,
        marker={
            "size": 8,
            "color": point_colors(part["speedup"], color),
            "line": {"width": 2},
            "symbol": ["circle" if f else UNFIT_SYMBOL for f in fits],
        },
        customdata=np.stack(
            [part["spec_tokens_per_s"], part["base_tokens_per_s"], part["memory_gib"], part["usable_gib"]], axis=-1
        ),
        text=[f"fits on {where}" if f else f"does not fit on {where}" for f in fits],
        hovertext=sequences(part["concurrency"]),
        hovertemplate="%{hovertext}<br>" + SPEEDUP_HOVER + "<br>%{customdata[0]:,.0f} vs %{customdata[1]:,.0f} "
        "tokens/s<br>%{text}: needs %{customdata[2]:,.1f} of %{customdata[3]:,.1f} GiB per GPU<extra>"
        + th.drafter_label(drafter)
        + f", {panel}</extra>",
    )


def _measured(part: pd.DataFrame, drafter: str, panel: str, color: str) -> go.Scatter:
    """The published measurements of one series, with the model's prediction of each."""
    note = ["the acceptance is fitted here" if f else "predicted with that acceptance" for f in part["fitted"]]
    return go.Scatter(
        x=part["batch"],
        y=part["measured"],
        mode="markers",
        name="measured",
        legendgroup=drafter,
        showlegend=False,
        marker={"size": 13, "symbol": MEASURED_SYMBOL, "color": color, "line": {"width": 1.5, "color": th.MUTED}},
        customdata=np.stack([part["predicted"], 100 * (part["predicted"] / part["measured"] - 1)], axis=-1),
        text=note,
        hovertext=sequences(part["batch"]),
        hovertemplate="%{hovertext}: measured %{y:.2f}x<br>model %{customdata[0]:.2f}x (%{customdata[1]:+.0f}%): "
        "%{text}<extra>" + th.drafter_label(drafter) + f", {panel}</extra>",
    )


def draw_panel_ladders(
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
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name="measured (SpecDecode-Bench)",
                marker={"size": 12, "symbol": MEASURED_SYMBOL, "color": th.MUTED},
            )
        )
    top = max(float(curves["speedup"].max()), float(points["measured"].max()) if points is not None else 0.0)
    fig.update_xaxes(**th.log2_axis(PANEL_TICKS), title_text="concurrent sequences")
    fig.update_yaxes(range=[0, top * 1.08], ticksuffix="x")
    fig.update_yaxes(title_text=SPEEDUP_AXIS, row=1, col=1)
    pl.side_by_side(fig, len(panels))
    return fig


# --- Llama-3-70B on four H100s against its measurements ---------------------------------------


def measured_ladders(settings: SiteSettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The model's ladder for every measured series (its fitted acceptance, the vLLM engine,
    four H100s), one panel per dataset; and the measured points with the model's prediction
    of each (batch 1: where the acceptance was fitted)."""
    curves, points = [], []
    for s, fit in zip(series(settings), fitted(settings)):
        ev = evaluate_series(settings, s)
        frame = pd.DataFrame(_ladder_columns(ev))
        frame.insert(0, "panel", f"{s.dataset} ({s.fields['context']} + {s.fields['generated_tokens']} tokens)")
        frame.insert(1, "drafter", s.drafter)
        frame["gpus"] = BIG_TP
        curves.append(frame)
        points.append(
            pd.DataFrame(
                {
                    "panel": frame["panel"].iloc[0],
                    "drafter": s.drafter,
                    "batch": [r.batch for r in fit.rows],
                    "measured": [r.measured_speedup for r in fit.rows],
                    "predicted": fit.predicted,
                    "fitted": [i == 0 for i in range(len(fit.rows))],
                }
            )
        )
    return pd.concat(curves, ignore_index=True), pd.concat(points, ignore_index=True)


def _measured_table(computed: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    curves, points = computed
    return parts_table("kind", ("model", curves), ("measured", points))


MEASURED_FIGURE = FigureSpec(
    "beyond-70b",
    "Llama-3-70B on four H100s: speedup against concurrency, model and measurements",
    "Lines: the model (vLLM profile) with each series' acceptance fitted to its measured point at one sequence; "
    "diamonds: the published measurements (those at 16, 64 and 128 sequences are left out of the fit); open "
    "markers: the scenario does not fit on the four GPUs.",
    measured_ladders,
    lambda d, s: draw_panel_ladders(d[0], s.deployment, d[1]),
    _measured_table,
)


# --- the same model on MI300X -----------------------------------------------------------------


def card_ladders(settings: SiteSettings) -> pd.DataFrame:
    """The measured model and workload (WORKLOAD, each drafter's fitted acceptance) on each
    deployment of DEPLOYMENTS, one panel each, with whether it fits."""
    frames = []
    for hardware, gpus in DEPLOYMENTS:
        for drafter, s in workload_series(settings).items():
            ev = evaluate_series(settings, s, hardware=hardware, tensor_parallel=gpus)
            frame = pd.DataFrame(_ladder_columns(ev))
            frame.insert(0, "panel", deployment_name(hardware, gpus))
            frame.insert(1, "drafter", drafter)
            frame["gpus"] = gpus
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


CARDS_FIGURE = FigureSpec(
    "beyond-mi300x",
    "Llama-3-70B on four H100s, four MI300X and two MI300X side by side",
    "The same model, drafters and workload (ShareGPT lengths, fitted acceptance) on three deployments, open "
    "markers where they do not fit: the MI300X's memory holds the model on two GPUs, its mesh gives each GPU "
    "less all-reduce bandwidth in a group of four.",
    card_ladders,
    lambda d, s: draw_panel_ladders(d, s.deployment),
)


# --- a chain against trees of guesses ---------------------------------------------------------


#: Chain against trees, drafted by an EAGLE head on the measured deployment: (key, label,
#: candidates per depth K, positions verified V), all five steps deep (SGLang's options).
TREE_DRAFTER, TREE_STEPS = "eagle", 5
TREES = (
    ("chain", "chain, 6 positions", 1, 6),
    ("sglang", "tree 4 wide, 8 positions (SGLang's default)", 4, 8),
    ("wide", "tree 8 wide, 41 positions", 8, 41),
)


def tree_ladder(settings: SiteSettings) -> pd.DataFrame:
    """Speedup against concurrency of a chain and two trees (TREES) drafted by an EAGLE head
    on the measured deployment, under the vLLM engine, at the article's acceptance profile."""
    frames = []
    for key, label, topk, verify in TREES:
        ev = evaluate(
            settings=settings,
            target=BIG_TARGET,
            hardware=BIG_HARDWARE,
            tensor_parallel=BIG_TP,
            engine=ENGINE,
            drafter=TREE_DRAFTER,
            gamma=TREE_STEPS,
            tree_topk=topk,
            verify_tokens=verify,
            concurrency=CONCURRENCY,
        )
        frames.append(
            pd.DataFrame(
                {
                    "shape": key,
                    "label": label,
                    "verify_tokens": verify,
                    "concurrency": CONCURRENCY,
                    "speedup": ev.speedup,
                    "fits": ev.fits,
                    "mean_acceptance_length": ev.mean_acceptance_length,
                    "arithmetic_ratio": ev.arithmetic_ratio,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


#: The chain and the trees, in the order of TREES.
TREE_COLORS = ("#3b6fd8", "#d9822b", "#7c6bd6")


def draw_tree_ladder(data: pd.DataFrame) -> go.Figure:
    """Speedup against concurrency of a chain and two trees of guesses; open markers do not fit."""
    fig = th.base_figure(height=460)
    for color, (_, part) in zip(TREE_COLORS, data.groupby("shape", sort=False)):
        label, fits = str(part["label"].iloc[0]), part["fits"].to_numpy(dtype=bool)
        fig.add_trace(
            go.Scatter(
                x=part["concurrency"],
                y=part["speedup"],
                mode="lines+markers",
                name=label,
                line={"color": color, "width": 2.5},
                marker={
                    "size": 9,
                    "color": point_colors(part["speedup"], color),
                    "line": {"width": 2},
                    "symbol": ["circle" if f else UNFIT_SYMBOL for f in fits],
                },
                customdata=np.stack([part["mean_acceptance_length"], part["arithmetic_ratio"]], axis=-1),
                hovertext=sequences(part["concurrency"]),
                hovertemplate="%{hovertext}: " + SPEEDUP_HOVER + "<br>%{customdata[0]:.2f} tokens per verify pass "
                "(an upper bound)<br>%{customdata[1]:.2f}x the arithmetic of plain decoding<extra>"
                + label
                + "</extra>",
            )
        )
    x = data["concurrency"]
    th.reference_line(fig, 1.0, x.min(), x.max(), at="right")
    fig.update_layout(
        xaxis={**th.log2_axis(sorted(x.unique())), "title": "concurrent sequences"},
        yaxis={"title": SPEEDUP_AXIS, "ticksuffix": "x", "range": [0, float(data["speedup"].max()) * 1.08]},
    )
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 500, extra=pl.sparse_ticks(sorted(x.unique()))))
    return fig


TREE_FIGURE = FigureSpec(
    "beyond-tree",
    "Speedup against concurrency of a chain and two trees of guesses",
    "Llama-3-70B on four H100s with an EAGLE head, five steps deep: a chain, SGLang's default tree and a wide "
    "tree that verifies 41 positions per sequence, each shape's tokens per verify pass (an upper bound) and "
    "arithmetic shown on hover and in the data behind the figure.",
    tree_ladder,
    lambda d, s: draw_tree_ladder(d),
)


# --- a mixture of experts against a dense model -----------------------------------------------


#: Mixture of experts against a dense model of about the same weights, on two H100s.
MOE_TARGET, DENSE_TARGET, MOE_HARDWARE, MOE_TP = "qwen3-30b-a3b", "qwen3-32b", "h100-sxm", 2
#: The draft model of the MoE comparison (it shares the Qwen3 vocabulary of both targets).
MOE_DRAFT = "qwen3-0.6b"
#: The batches whose plain and verify passes the weights figure marks.
MOE_MARKED_BATCHES = (1, 64)
#: Token positions of one pass for the weights curve (1 to 1,024).
PASS_TOKENS = np.unique(np.round(np.geomspace(1, 1024, 41)).astype(int))
#: The drafters of the MoE comparison: n-gram lookup, the EAGLE head and a small draft model.
MOE_DRAFTERS = ("ngram", "eagle", MOE_DRAFT)


def moe_pass(settings: SiteSettings, target: str, **fields: Any) -> Evaluation:
    """A scenario on the MoE comparison's deployment (MOE_HARDWARE, MOE_TP GPUs, the vLLM engine)."""
    return evaluate(
        settings=settings, target=target, hardware=MOE_HARDWARE, tensor_parallel=MOE_TP, engine=ENGINE, **fields
    )


def moe_weights(settings: SiteSettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Weights one pass reads (all GPUs, GiB) against the token positions in it, for the MoE
    and the dense target (a plain step over that many sequences), with the MoE's expected
    distinct experts per layer; and the marked passes: the plain step and the verify pass
    (gamma + 1 positions per sequence, drafted by MOE_DRAFT) at MOE_MARKED_BATCHES."""
    curves, marks = [], []
    for target in (MOE_TARGET, DENSE_TARGET):
        arch = get_architecture(target)
        name, e, k = arch.name, arch.num_experts, arch.num_experts_per_tok  # E and k: both, or neither (dense)
        plain = moe_pass(settings, target, drafter="ngram", concurrency=PASS_TOKENS)
        distinct = (
            np.zeros(len(PASS_TOKENS))
            if e is None or k is None
            else experts.expected_distinct_experts(PASS_TOKENS, e, k)
        )
        curves.append(
            pd.DataFrame(
                {
                    "model": name,
                    "tokens": PASS_TOKENS,
                    "weights_gib": plain.plain_weights_read_bytes / GIB,
                    "distinct_experts": distinct,
                    "experts": 0 if e is None else e,
                }
            )
        )
        batches = np.array(MOE_MARKED_BATCHES)
        ev = moe_pass(settings, target, drafter=MOE_DRAFT, concurrency=batches)
        gamma = int(DEFAULTS["gamma"])
        for kind, tokens, read in (
            ("plain step", batches, ev.plain_weights_read_bytes),
            ("verify pass", batches * (gamma + 1), ev.verify_weights_read_bytes),
        ):
            marks.append(
                pd.DataFrame(
                    {"model": name, "kind": kind, "batch": batches, "tokens": tokens, "weights_gib": read / GIB}
                )
            )
    return pd.concat(curves, ignore_index=True), pd.concat(marks, ignore_index=True)


def _moe_weights_table(computed: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    curves, marks = computed
    table = pd.concat([curves.assign(kind="every pass size"), marks], ignore_index=True)
    return table[["kind", *table.columns.drop("kind")]]


#: The two targets of the mixture-of-experts figure: the MoE model, then the dense one.
MODEL_COLORS = ("#d9822b", "#3b6fd8")


def draw_moe_weights(curves: pd.DataFrame, marks: pd.DataFrame) -> go.Figure:
    """Weights one pass reads against the token positions in it, for a mixture-of-experts and
    a dense model, with the plain step and the verify pass marked on each."""
    fig = th.base_figure(height=440)
    for color, (model, part) in zip(MODEL_COLORS, named_groups(curves, "model")):
        experts = int(part["experts"].iloc[0])
        text = [
            f"{d:.1f} of {experts} experts per layer" if experts else "every weight" for d in part["distinct_experts"]
        ]
        kind = "mixture of experts" if experts else "dense"
        fig.add_trace(
            go.Scatter(
                x=part["tokens"],
                y=part["weights_gib"],
                mode="lines",
                name=f"{model} ({kind})",
                line={"color": color, "width": 2.5},
                text=text,
                hovertemplate="%{x} token positions: %{y:.1f} GiB, %{text}<extra>" + model + "</extra>",
            )
        )
    for kind, symbol in (("plain step", "circle"), ("verify pass", "diamond")):
        part = marks[marks["kind"] == kind]
        fig.add_trace(
            go.Scatter(
                x=part["tokens"],
                y=part["weights_gib"],
                mode="markers",
                name=f"{kind} at 1 and 64 sequences",
                marker={"size": 11, "symbol": symbol, "color": th.MUTED, "line": {"width": 1, "color": th.MUTED}},
                text=[f"{m}, {kind}" for m in part["model"]],
                hovertext=sequences(part["batch"]),
                hovertemplate="%{text}, %{hovertext}: %{x} positions, %{y:.1f} GiB<extra></extra>",
            )
        )
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


MOE_WEIGHTS_FIGURE = FigureSpec(
    "beyond-moe-weights",
    "Weights one pass reads against the token positions in it, mixture of experts and dense",
    "The dense model reads all its weights in every pass, the mixture of experts only the experts its tokens "
    "are routed to, more of them the more tokens a pass holds; dark grey markers: plain steps and verify passes "
    "at 1 and 64 sequences.",
    moe_weights,
    lambda d, s: draw_moe_weights(d[0], d[1]),
    _moe_weights_table,
)


def moe_ladders(settings: SiteSettings) -> pd.DataFrame:
    """Speedup against concurrency on the MoE and the dense target (one panel each) for
    each drafter of MOE_DRAFTERS, under the vLLM engine, at the article's acceptance."""
    frames = []
    for target in (MOE_TARGET, DENSE_TARGET):
        for drafter in MOE_DRAFTERS:
            ev = moe_pass(settings, target, drafter=drafter, concurrency=CONCURRENCY)
            frame = pd.DataFrame(_ladder_columns(ev))
            frame.insert(0, "panel", f"{get_architecture(target).name}, {MOE_TP} GPUs")
            frame.insert(1, "drafter", drafter)
            frame["gpus"] = MOE_TP
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


MOE_FIGURE = FigureSpec(
    "beyond-moe",
    "Speedup against concurrency on a mixture of experts and on a dense model",
    "The same drafters and acceptance on two GPUs, a mixture of experts beside a dense model of similar "
    "size; the page's text reads the two shapes.",
    moe_ladders,
    lambda d, s: draw_panel_ladders(d, s.deployment),
)


# --- the four-GPU measurements against the model (the validation page) ------------------------


def multigpu_validation(settings: SiteSettings) -> pd.DataFrame:
    """Every four-GPU measurement against the model under each engine, the acceptance of its
    series fitted at batch 1 under that engine (``fitted``: the row it was fitted on)."""
    return fitted_frame({engine: fitted(settings, engine) for engine in ENGINES})


def draw_multigpu_validation(data: pd.DataFrame) -> go.Figure:
    """Predicted against measured speedup on the four-GPU measurements: the held-out rows
    under each engine, and the batch-1 rows the acceptance is fitted on (on the diagonal)."""
    fig = th.base_figure(height=480)
    low = min(0.5, float(data["predicted"].min()) * 0.95)
    top = float(max(data["measured"].max(), data["predicted"].max())) * 1.05
    prediction_diagonal(fig, low, top)
    styles = {
        "ideal": ("ideal roofline, held out", IDEAL_SYMBOL, th.COMPUTE),
        "vllm": ("vLLM profile, held out", "circle", th.ENGINE_COLORS["vllm"]),
    }
    groups = [(data[(data["engine"] == e) & ~data["fitted"]], *style) for e, style in styles.items()]
    groups.append((data[(data["engine"] == "vllm") & data["fitted"]], "batch 1: acceptance fitted", "star", th.MUTED))
    for part, name, symbol, color in groups:
        text = [
            f"{d}, {th.drafter_label(m)}, batch {b}" for d, m, b in zip(part["dataset"], part["method"], part["batch"])
        ]
        fig.add_trace(
            go.Scatter(
                x=part["measured"],
                y=part["predicted"],
                mode="markers",
                name=name,
                text=text,
                marker={"size": 9, "symbol": symbol, "color": color, "line": {"width": 1.5, "color": color}},
                customdata=100 * part["error"],
                hovertemplate="%{text}<br>measured %{x:.2f}x, predicted %{y:.2f}x (%{customdata:+.0f}%)<extra>"
                + name
                + "</extra>",
            )
        )
    return square_scatter(fig, low, top)


VALIDATION_FIGURE = FigureSpec(
    "validation-multigpu",
    "Predicted against measured speedup on four H100s serving Llama-3-70B",
    "Each series' acceptance is fitted at one sequence, so its batch-1 point (dark grey star) lies on the "
    "diagonal by construction, and the purple circles and orange triangles at 16, 64 and 128 sequences are "
    "predictions, with dotted lines 15% off.",
    multigpu_validation,
    lambda d, s: draw_multigpu_validation(d),
)


def multigpu_series_table(data: pd.DataFrame) -> str:
    """Each four-GPU series with the mean acceptance length fitted at batch 1 under each
    engine (:func:`multigpu_validation`)."""
    fitted = data[data["fitted"]].pivot_table(
        index=["dataset", "method"], columns="engine", values="mean_acceptance_length", sort=False
    )
    out = [
        "| dataset | drafter | γ | fitted acceptance length, ideal | fitted acceptance length, vLLM |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    gamma = data.groupby(["dataset", "method"], sort=False)["gamma"].first()
    for index, row in fitted.iterrows():
        dataset, method = cast(tuple[str, str], index)  # the pivot's index
        out.append(
            f"| {dataset} | {th.drafter_label(method)} | {gamma[(dataset, method)]} "
            f"| {row['ideal']:.2f} | {row['vllm']:.2f} |"
        )
    return "\n".join(out)


def multigpu_validation_table(data: pd.DataFrame) -> str:
    """Every four-GPU measurement against the model under each engine; the batch-1 rows are
    those each series' acceptance is fitted on."""
    out = [
        "| # | dataset | drafter | batch | measured | ideal | vLLM |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    wide = data.pivot_table(index=["dataset", "method", "batch"], columns="engine", values="predicted", sort=False)
    rows = data.groupby(["dataset", "method", "batch"], sort=False)
    measured, fitted = rows["measured"].first(), rows["fitted"].first()
    for i, (index, row) in enumerate(wide.iterrows(), start=1):
        dataset, method, batch = cast(tuple[str, str, int], index)  # the pivot's index
        m, key = measured[(dataset, method, batch)], (dataset, method, batch)
        cells = [
            f"{row[e]:.2f}x (fitted)" if fitted[key] else f"{row[e]:.2f}x ({percent(row[e] / m - 1, signed=True)})"
            for e in ("ideal", "vllm")
        ]
        out.append(f"| {i} | {dataset} | {th.drafter_label(method)} | {batch} | {m:.2f}x | {cells[0]} | {cells[1]} |")
    return "\n".join(out)


FIGURES: tuple[FigureSpec, ...] = (
    MEASURED_FIGURE,
    CARDS_FIGURE,
    TREE_FIGURE,
    MOE_WEIGHTS_FIGURE,
    MOE_FIGURE,
    VALIDATION_FIGURE,
)
"""The figures of this module, in the order of their pages."""
