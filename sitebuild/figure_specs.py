"""The site's figures: for each, its id, an accessible title, the caption saying what to
look at, the data it is drawn from (:mod:`sitebuild.figures_data` and its siblings), how to
draw it (:mod:`sitebuild.figures`), and the tidy table of that data the site publishes beside
the figure as its text alternative (CSV)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from sitebuild import figures as draw
from sitebuild import figures_data as data
from sitebuild import figures_data_multigpu as multi
from sitebuild import figures_data_time as time_data
from sitebuild.config import SiteSettings
from sitebuild.figures import time as draw_time
from sitebuild.paths import MEASUREMENTS
from specmodel.measurements import load_measurements
from specmodel.model.evaluate import evaluate


def _frame(computed: Any) -> pd.DataFrame:
    """The table of data that is one DataFrame: the frame itself."""
    if not isinstance(computed, pd.DataFrame):
        raise TypeError(f"a figure's data is a {type(computed).__name__}: give its FigureSpec a table function")
    return computed


def _parts(column: str, *parts: tuple[str, pd.DataFrame]) -> pd.DataFrame:
    """Several frames as one table, each row named by its part in a first column ``column``."""
    frames = [frame.assign(**{column: name})[[column, *frame.columns.drop(column, errors="ignore")]]
              for name, frame in parts]  # fmt: skip
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class FigureSpec:
    """A figure of the site: its id (``{{ figure:<id> }}`` in the Markdown), an accessible
    title, the one-line caption saying what to look at, the data it shows (computed once from
    the settings), how to draw that data, the data as one tidy table (the published CSV), and
    the simulator setting its caption links to (the article's defaults but for these; None: no
    link), so that a reader can open what the figure shows and change it."""

    id: str
    title: str
    caption: str
    data: Callable[[SiteSettings], Any]
    draw: Callable[[Any, SiteSettings], go.Figure]
    table: Callable[[Any], pd.DataFrame] = _frame
    setting: Callable[[SiteSettings], dict[str, object]] | None = None

    def make(self, settings: SiteSettings) -> go.Figure:
        """The figure for these settings."""
        return self.draw(self.data(settings), settings)


def _alpha_data(settings: SiteSettings) -> tuple[pd.DataFrame, dict[str, float], dict[str, tuple[float, float]]]:
    """Speedup against alpha, each draft's break-even alpha, and the two marked points (the
    larger draft at 0.95, the smaller at 0.75)."""
    frame, breakeven = data.alpha_sweep(settings)
    draft, big = data.model_drafters(settings)
    marks = {
        draft: (0.75, float(evaluate(drafter=draft, settings=settings).speedup)),
        big: (0.95, float(evaluate(drafter=big, alpha=0.95, settings=settings).speedup)),
    }
    return frame, breakeven, marks


def _alpha_table(computed: tuple[pd.DataFrame, dict[str, float], dict[str, tuple[float, float]]]) -> pd.DataFrame:
    frame, breakeven, marks = computed
    even = pd.DataFrame({"drafter": list(breakeven), "alpha": list(breakeven.values()), "speedup": 1.0})
    marked = pd.DataFrame({"drafter": list(marks), "alpha": [a for a, _ in marks.values()],
                           "speedup": [s for _, s in marks.values()]})  # fmt: skip
    return _parts("series", ("curve", frame), ("break-even", even), ("marked", marked))


def _latency_table(computed: tuple[pd.DataFrame, tuple[float, float]]) -> pd.DataFrame:
    frame, targets = computed
    lines = pd.DataFrame({"series": [f"target: {t:,.0f} tokens/s per user" for t in targets], "per_user": targets})
    return pd.concat([frame, lines], ignore_index=True)


def _measured_table(computed: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    curves, points = computed
    return _parts("kind", ("model", curves), ("measured", points))


def _moe_weights_table(computed: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    curves, marks = computed
    table = pd.concat([curves.assign(kind="every pass size"), marks], ignore_index=True)
    return table[["kind", *table.columns.drop("kind")]]


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "ladder",
        "Speedup against concurrency for each drafter",
        "The ladder: each drafter's speedup as concurrent sequences rise. Magenta points are more than 3% slower "
        "than plain decoding, grey ones within 3% of it; open markers do not fit in memory. The slider sets the "
        "prompt length.",
        data.ladder,
        lambda d, s: draw.ladder(d, s.deployment),
        setting=lambda s: {},
    ),
    FigureSpec(
        "breakdown",
        "Time per generated token split into its parts, plain decoding against speculation, at every concurrency",
        "Two bars per rung, plain decoding and speculation, each part a share of the plain step's time per token: "
        "a speculative bar above the dashed line is slower than plain decoding. The menu switches drafter and "
        "prompt length.",
        time_data.time_breakdown,
        lambda d, s: draw_time.time_breakdown(d),
    ),
    FigureSpec(
        "latency",
        "Tokens per second for each user against tokens per second in all, plain decoding and each drafter",
        "One point per concurrency, from one sequence (top left) to 1,024; open points do not fit. Along a "
        "target line, the curve that reaches furthest right serves the most tokens per second at that rate per user.",
        time_data.latency_throughput,
        lambda d, s: draw_time.latency_throughput(d[0], d[1], s.deployment),
        _latency_table,
    ),
    FigureSpec(
        "roofline",
        "Verify-pass memory time, arithmetic time and idle share",
        "The verify pass's memory time and arithmetic time at each concurrency (top) and the share of it the "
        "tensor cores sit idle (bottom): the gap between the two lines is the arithmetic speculation borrows.",
        data.roofline,
        lambda d, s: draw.roofline(d),
        setting=lambda s: {"concurrency": 64},
    ),
    FigureSpec(
        "arithmetic",
        "Arithmetic per output token against gamma",
        "The bill: dots are the model's own FLOP counts per output token, dotted lines Theorem 3.11; compare each "
        "set of dots with the line of the same colour.",
        data.arithmetic_bill,
        lambda d, s: draw.arithmetic_bill(d, s.deployment),
        setting=lambda s: {"acceptance": "same", "drafter": "ngram"},
    ),
    FigureSpec(
        "alpha",
        "Speedup against acceptance rate for the two draft models",
        "Speedup at one sequence against α for the two draft models. The diamonds mark the larger draft at "
        "α = 0.95 and the smaller at 0.75, the pair section 4 compares; dotted lines mark each draft's break-even "
        "α.",
        _alpha_data,
        lambda d, s: draw.alpha_sweep(d[0], d[1], d[2], s.deployment),
        _alpha_table,
        setting=lambda s: {"alpha": 0.95, "drafter": s.deployment.big_draft},
    ),
    FigureSpec(
        "memory",
        "Weights and KV cache per token of the three models",
        "Weights and KV cache per token of the target and the two draft models, side by side.",
        data.memory_footprint,
        lambda d, s: draw.memory_footprint(d),
    ),
    FigureSpec(
        "context",
        "Speedup and draft share against context at 64 sequences",
        "Speedup (top) and the share of the wall clock spent drafting (bottom) against prompt length at 64 "
        "sequences. Open markers: 64 sequences at that prompt length do not fit in memory.",
        lambda s: data.context_sweep(s, 64),
        lambda d, s: draw.context_sweep(d, 64, s.deployment),
        setting=lambda s: {"concurrency": 64, "context": 8192},
    ),
    FigureSpec(
        "gamma",
        "Speedup against gamma at 1 and 32 sequences",
        "Speedup against γ at one and at 32 sequences, each with its peak; the slider adds a third concurrency.",
        data.gamma_sweep,
        lambda d, s: draw.gamma_sweep(d),
        setting=lambda s: {"concurrency": 32, "gamma": 2},
    ),
    FigureSpec(
        "tokens",
        "Expected tokens per iteration against gamma",
        "Each curve flattens onto its dashed ceiling 1/(1 - alpha): past a few draft tokens, more guesses "
        "buy almost nothing.",
        lambda s: data.tokens_per_iteration(),
        lambda d, s: draw.tokens_per_iteration(d),
    ),
    FigureSpec(
        "per-position",
        "Per-position acceptance, falling against same",
        "The share of iterations in which each guess reaches the output, under the falling profile and with "
        "the same acceptance at every position (the i.i.d. assumption).",
        data.per_position,
        lambda d, s: draw.per_position(d),
        setting=lambda s: {"gamma": 6},
    ),
    FigureSpec(
        "sampling",
        "Algorithm 1 run on a toy vocabulary",
        "Teal bars (the sampler's output) sit on the grey ones (the target), not on the orange ones (the "
        "draft): 'dog', which the draft never proposes, still comes out, and 'banana', which only the draft "
        "likes, never does.",
        lambda s: data.sampling(),
        lambda d, s: draw.sampling(d, data.SAMPLING_TRIALS),
    ),
    FigureSpec(
        "breakeven",
        "Break-even map over concurrency and context",
        "Each cell is the speedup at the best γ, written in the cell (off: no γ gains more than 3%): teal cells "
        "gain, magenta cells lose, grey ones are within 3% of even; the dark line is the 1.0x contour, the edge "
        "between gaining and losing cells, and boxed cells do not fit in memory. The drafter menu (or the buttons) "
        "above the map switches drafters.",
        data.breakeven_map,
        lambda d, s: draw.breakeven_map(d, s.deployment),
        setting=lambda s: {"concurrency": 64, "gamma": 1},
    ),
    FigureSpec(
        "heads",
        "Weights one draft step reads, LM head against the rest",
        "Weights one draft step reads at one sequence, by drafter: orange is the output head it scores tokens "
        "with, the rest its own layers.",
        data.head_costs,
        lambda d, s: draw.head_costs(d),
        setting=lambda s: {"concurrency": 64, "drafter": "eagle-32k"},
    ),
    FigureSpec(
        "engines",
        "Speedup against concurrency under the ideal model and the vLLM profile",
        "Dashed lines with triangles: the article's ideal roofline; solid lines with circles: the same scenario "
        "under the engine profile fitted to measurements of vLLM, with continuous batching keeping the batch full.",
        data.engine_ladder,
        lambda d, s: draw.engine_ladder(d, s.deployment),
        setting=lambda s: {"concurrency": 16, "engine": "vllm"},
    ),
    FigureSpec(
        "validation",
        "Predicted against measured speedup on public vLLM measurements",
        "Each point is one published measurement of vLLM on an H100, with the acceptance that run measured given "
        "to the model; on the diagonal the model predicts exactly, dotted lines are 15% off. Orange triangles: "
        "the ideal roofline; teal circles: the fitted vLLM profile.",
        lambda s: data.validation(s, load_measurements(MEASUREMENTS)),
        lambda d, s: draw.validation(d),
    ),
    FigureSpec(
        "hardware",
        "The ladder on H100, H200 and B200 side by side",
        "The same model pair on three cards; open markers do not fit in memory. One slider sets the prompt "
        "length of all three.",
        data.hardware_ladders,
        lambda d, s: draw.hardware_ladders(d, s.deployment),
    ),
    FigureSpec(
        "beyond-70b",
        "Llama-3-70B on four H100s: speedup against concurrency, model and measurements",
        "Lines: the model (vLLM profile) with each series' acceptance fitted to its measured point at one sequence; "
        "diamonds: the published measurements (those at 16, 64 and 128 sequences are left out of the fit). Open "
        "markers do not fit on the four GPUs.",
        multi.measured_ladders,
        lambda d, s: draw.panel_ladders(d[0], s.deployment, d[1]),
        _measured_table,
    ),
    FigureSpec(
        "beyond-mi300x",
        "Llama-3-70B on four H100s, four MI300X and two MI300X side by side",
        "The same model, drafters and workload (ShareGPT lengths, fitted acceptance) on three deployments: the "
        "MI300X's memory holds the model on two GPUs, its mesh gives each GPU less all-reduce bandwidth in a group "
        "of four. Open markers do not fit.",
        multi.card_ladders,
        lambda d, s: draw.panel_ladders(d, s.deployment),
    ),
    FigureSpec(
        "beyond-tree",
        "Speedup against concurrency of a chain and two trees of guesses",
        "Llama-3-70B on four H100s with an EAGLE head, five steps deep: a chain, SGLang's default tree and a wide "
        "tree that verifies 41 positions per sequence. Each shape's tokens per verify pass (an upper bound) and its "
        "arithmetic show on hover and in the data behind the figure.",
        multi.tree_ladder,
        lambda d, s: draw.tree_ladder(d),
    ),
    FigureSpec(
        "beyond-moe-weights",
        "Weights one pass reads against the token positions in it, mixture of experts and dense",
        "The dense model reads all its weights in every pass; the mixture of experts reads only the experts its "
        "tokens are routed to, more of them the more tokens a pass holds. Grey markers: plain steps and verify "
        "passes at 1 and 64 sequences.",
        multi.moe_weights,
        lambda d, s: draw.moe_weights(d[0], d[1]),
        _moe_weights_table,
    ),
    FigureSpec(
        "beyond-moe",
        "Speedup against concurrency on a mixture of experts and on a dense model",
        "The same drafters and acceptance on two GPUs, a mixture of experts beside a dense model of similar "
        "size; the page's text reads the two shapes.",
        multi.moe_ladders,
        lambda d, s: draw.panel_ladders(d, s.deployment),
    ),
    FigureSpec(
        "validation-multigpu",
        "Predicted against measured speedup on four H100s serving Llama-3-70B",
        "Each series' acceptance is fitted at one sequence, so its batch-1 point (grey star) lies on the diagonal by "
        "construction; the teal circles and orange triangles at 16, 64 and 128 sequences are predictions. Dotted "
        "lines are 15% off.",
        multi.multigpu_validation,
        lambda d, s: draw.multigpu_validation(d),
    ),
)
