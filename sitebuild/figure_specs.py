"""The site's figures: for each, its id, an accessible title, the caption saying what to
look at, and how to make it from the settings (data from :mod:`sitebuild.figures_data`,
drawing from :mod:`sitebuild.figures`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go

from sitebuild import figures as draw
from sitebuild import figures_data as data
from sitebuild import figures_data_multigpu as multi
from sitebuild import figures_data_time as time_data
from sitebuild.figures import time as draw_time
from sitebuild.paths import MEASUREMENTS
from specmodel.measurements import load_measurements
from specmodel.model.evaluate import evaluate
from specmodel.model.settings import Settings


@dataclass(frozen=True)
class FigureSpec:
    """A figure of the site: its id (``{{ figure:<id> }}`` in the Markdown), an accessible
    title, the one-line caption saying what to look at, and how to make it."""

    id: str
    title: str
    caption: str
    make: Callable[[Settings], go.Figure]


def _alpha_figure(settings: Settings) -> go.Figure:
    frame, breakeven = data.alpha_sweep(settings)
    draft, big = data.model_drafters(settings)
    marks = {
        draft: (0.75, float(evaluate(drafter=draft, settings=settings).speedup)),
        big: (0.95, float(evaluate(drafter=big, alpha=0.95, settings=settings).speedup)),
    }
    return draw.alpha_sweep(frame, breakeven, marks, settings.deployment)


def _measured_figure(settings: Settings) -> go.Figure:
    curves, points = multi.measured_ladders(settings)
    return draw.panel_ladders(curves, settings.deployment, points)


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        "ladder",
        "Speedup against concurrency for each drafter",
        "The ladder: each drafter's speedup as concurrent sequences rise. Magenta points are more than 3% slower "
        "than plain decoding, grey ones within 3% of it; open markers do not fit in memory. The slider sets the "
        "prompt length.",
        lambda s: draw.ladder(data.ladder(s), s.deployment),
    ),
    FigureSpec(
        "breakdown",
        "Time per generated token split into its parts, plain decoding against speculation, at every concurrency",
        "Two bars per rung, plain decoding and speculation, each part a share of the plain step's time per token: "
        "a speculative bar above the dashed line is slower than plain decoding. The menu switches drafter and "
        "prompt length.",
        lambda s: draw_time.time_breakdown(time_data.time_breakdown(s)),
    ),
    FigureSpec(
        "latency",
        "Tokens per second for each user against tokens per second in all, plain decoding and each drafter",
        "One point per concurrency, from one sequence (top left) to 1,024; open points do not fit. Along a "
        "target line, the curve that reaches furthest right serves the most tokens per second at that rate per user.",
        lambda s: draw_time.latency_throughput(*time_data.latency_throughput(s), s.deployment),
    ),
    FigureSpec(
        "roofline",
        "Verify-pass memory time, arithmetic time and idle share",
        "The verify pass's memory time and arithmetic time at each concurrency (top) and the share of it the "
        "tensor cores sit idle (bottom): the gap between the two lines is the arithmetic speculation borrows.",
        lambda s: draw.roofline(data.roofline(s)),
    ),
    FigureSpec(
        "arithmetic",
        "Arithmetic per output token against gamma",
        "The bill: dots are the model's own FLOP counts per output token, dotted lines Theorem 3.11; compare each "
        "set of dots with the line of the same colour.",
        lambda s: draw.arithmetic_bill(data.arithmetic_bill(s), s.deployment),
    ),
    FigureSpec(
        "alpha",
        "Speedup against acceptance rate for the two draft models",
        "Speedup at one sequence against α for the two draft models. The diamonds mark the larger draft at "
        "α = 0.95 and the smaller at 0.75, the pair section 4 compares; dotted lines mark each draft's break-even "
        "α.",
        _alpha_figure,
    ),
    FigureSpec(
        "memory",
        "Weights and KV cache per token of the three models",
        "Weights and KV cache per token of the target and the two draft models, side by side.",
        lambda s: draw.memory_footprint(data.memory_footprint(s)),
    ),
    FigureSpec(
        "context",
        "Speedup and draft share against context at 64 sequences",
        "Speedup (top) and the share of the wall clock spent drafting (bottom) against prompt length at 64 "
        "sequences. Open markers: 64 sequences at that prompt length do not fit in memory.",
        lambda s: draw.context_sweep(data.context_sweep(s, 64), 64, s.deployment),
    ),
    FigureSpec(
        "gamma",
        "Speedup against gamma at 1 and 32 sequences",
        "Speedup against γ at one and at 32 sequences, each with its peak; the slider adds a third concurrency.",
        lambda s: draw.gamma_sweep(data.gamma_sweep(s)),
    ),
    FigureSpec(
        "tokens",
        "Expected tokens per iteration against gamma",
        "Each curve flattens onto its dashed ceiling 1/(1 - alpha): past a few draft tokens, more guesses "
        "buy almost nothing.",
        lambda s: draw.tokens_per_iteration(data.tokens_per_iteration()),
    ),
    FigureSpec(
        "per-position",
        "Per-position acceptance, falling against same",
        "The share of iterations in which each guess reaches the output, under the falling profile and with "
        "the same acceptance at every position (the i.i.d. assumption).",
        lambda s: draw.per_position(data.per_position(s)),
    ),
    FigureSpec(
        "sampling",
        "Algorithm 1 run on a toy vocabulary",
        "Teal bars (the sampler's output) sit on the grey ones (the target), not on the orange ones (the "
        "draft): 'dog', which the draft never proposes, still comes out, and 'banana', which only the draft "
        "likes, never does.",
        lambda s: draw.sampling(data.sampling(), data.SAMPLING_TRIALS),
    ),
    FigureSpec(
        "breakeven",
        "Break-even map over concurrency and context",
        "Each cell is the speedup at the best γ, written in the cell (off: no γ gains more than 3%): teal cells "
        "gain, magenta cells lose, grey ones are within 3% of even; the line is the 1.0x contour and boxed cells "
        "do not fit in memory. The buttons switch drafters.",
        lambda s: draw.breakeven_map(data.breakeven_map(s), s.deployment),
    ),
    FigureSpec(
        "heads",
        "Weights one draft step reads, LM head against the rest",
        "Weights one draft step reads at one sequence, by drafter: orange is the output head it scores tokens "
        "with, the rest its own layers.",
        lambda s: draw.head_costs(data.head_costs(s)),
    ),
    FigureSpec(
        "engines",
        "Speedup against concurrency under the ideal model and the vLLM profile",
        "Dashed: the article's ideal roofline; solid: the same scenario under the engine profile fitted to "
        "measurements of vLLM, with continuous batching keeping the batch full.",
        lambda s: draw.engine_ladder(data.engine_ladder(s), s.deployment),
    ),
    FigureSpec(
        "validation",
        "Predicted against measured speedup on public vLLM measurements",
        "Each point is one published measurement of vLLM on an H100, with the acceptance that run measured given "
        "to the model; on the diagonal the model predicts exactly, dotted lines are 15% off. Open orange circles: "
        "the ideal roofline; filled teal: the fitted vLLM profile.",
        lambda s: draw.validation(data.validation(s, load_measurements(MEASUREMENTS))),
    ),
    FigureSpec(
        "hardware",
        "The ladder on H100, H200 and B200 side by side",
        "The same model pair on three cards; open markers do not fit in memory. One slider sets the prompt "
        "length of all three.",
        lambda s: draw.hardware_ladders(data.hardware_ladders(s), s.deployment),
    ),
    FigureSpec(
        "beyond-70b",
        "Llama-3-70B on four H100s: speedup against concurrency, model and measurements",
        "Lines: the model (vLLM profile) with each series' acceptance fitted to its measured point at one sequence; "
        "diamonds: the published measurements (those at 16, 64 and 128 sequences are left out of the fit). Open "
        "markers do not fit on the four GPUs.",
        _measured_figure,
    ),
    FigureSpec(
        "beyond-mi300x",
        "Llama-3-70B on four H100s, four MI300X and two MI300X side by side",
        "The same model, drafters and workload (ShareGPT lengths, fitted acceptance) on three deployments: the "
        "MI300X's memory holds the model on two GPUs, its mesh gives each GPU less all-reduce bandwidth in a group "
        "of four. Open markers do not fit.",
        lambda s: draw.panel_ladders(multi.card_ladders(s), s.deployment),
    ),
    FigureSpec(
        "beyond-tree",
        "Speedup against concurrency of a chain and two trees of guesses",
        "Llama-3-70B on four H100s with an EAGLE head, five steps deep: a chain, SGLang's default tree and a wide "
        "tree that verifies 41 positions per sequence. Hover for each shape's tokens per verify pass (an upper "
        "bound) and its arithmetic.",
        lambda s: draw.tree_ladder(multi.tree_ladder(s)),
    ),
    FigureSpec(
        "beyond-moe-weights",
        "Weights one pass reads against the token positions in it, mixture of experts and dense",
        "The dense model reads all its weights in every pass; the mixture of experts reads only the experts its "
        "tokens are routed to, more of them the more tokens a pass holds. Grey markers: plain steps and verify "
        "passes at 1 and 64 sequences.",
        lambda s: draw.moe_weights(*multi.moe_weights(s)),
    ),
    FigureSpec(
        "beyond-moe",
        "Speedup against concurrency on a mixture of experts and on a dense model",
        "The same drafters and acceptance on two GPUs, a mixture of experts beside a dense model of similar "
        "size; the page's text reads the two shapes.",
        lambda s: draw.panel_ladders(multi.moe_ladders(s), s.deployment),
    ),
    FigureSpec(
        "validation-multigpu",
        "Predicted against measured speedup on four H100s serving Llama-3-70B",
        "Each series' acceptance is fitted at one sequence, so its batch-1 point (grey star) lies on the diagonal by "
        "construction; the circles at 16, 64 and 128 sequences are predictions. Dotted lines are 15% off.",
        lambda s: draw.multigpu_validation(multi.multigpu_validation(s)),
    ),
)
