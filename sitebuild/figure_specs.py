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
        "The ladder: follow each drafter's speedup as concurrent sequences rise; magenta points are "
        "slower than plain decoding, open markers do not fit on one card. Drag the slider to change the "
        "context.",
        lambda s: draw.ladder(data.ladder(s), s.deployment),
    ),
    FigureSpec(
        "roofline",
        "Verify-pass memory time, arithmetic time and idle share",
        "Memory time barely moves until the caches dominate, arithmetic time grows with every sequence: "
        "the gap between them is the idle arithmetic speculation borrows.",
        lambda s: draw.roofline(data.roofline(s)),
    ),
    FigureSpec(
        "arithmetic",
        "Arithmetic per output token against gamma",
        "The bill: dots are the model's own FLOP counts, dotted lines Theorem 3.11; only the n-gram drafter "
        "with i.i.d. acceptance sits on the paper's c = 0 line.",
        lambda s: draw.arithmetic_bill(data.arithmetic_bill(s), s.deployment),
    ),
    FigureSpec(
        "alpha",
        "Speedup against acceptance rate for the two draft models",
        "Look at the diamonds: the larger draft at a fantasy alpha of 0.95 still falls short of the smaller "
        "draft at 0.75. Dotted lines mark each draft's break-even alpha.",
        _alpha_figure,
    ),
    FigureSpec(
        "memory",
        "Weights and KV cache per token of the three models",
        "The drafts' weights are small; their caches are not: each draft token re-reads most of a target's "
        "worth of cache.",
        lambda s: draw.memory_footprint(data.memory_footprint(s)),
    ),
    FigureSpec(
        "context",
        "Speedup and draft share against context at 64 sequences",
        "At 64 sequences, longer prompts hand the wall clock to the drafter; the n-gram drafter has no cache "
        "to read and keeps its lead. Open markers: 64 sequences at that context do not fit on one card.",
        lambda s: draw.context_sweep(data.context_sweep(s, 64), 64, s.deployment),
    ),
    FigureSpec(
        "gamma",
        "Speedup against gamma at 1 and 32 sequences",
        "One sequence peaks at three or four draft tokens; 32 sequences peak earlier and fall below 1x. "
        "The slider adds a third concurrency.",
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
        "Under the falling profile the fourth guess reaches the output in about one iteration in eight; "
        "the i.i.d. assumption flatters every position after the first.",
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
        "Teal cells win, magenta cells lose; the line is the 1.0x contour and each cell shows the best "
        "gamma (off: no gamma wins); boxed cells do not fit on one card. Switch drafters with the buttons.",
        lambda s: draw.breakeven_map(data.breakeven_map(s), s.deployment),
    ),
    FigureSpec(
        "heads",
        "Weights one draft step reads, LM head against the rest",
        "Orange is the output head: a head that scores the target's whole vocabulary reads more per step "
        "than a small draft model; a 32k draft vocabulary removes most of it.",
        lambda s: draw.head_costs(data.head_costs(s)),
    ),
    FigureSpec(
        "engines",
        "Speedup against concurrency under the ideal model and the vLLM profile",
        "Dashed: the article's ideal roofline; solid: the same scenario under the engine profile fitted to "
        "measurements of vLLM, with continuous batching keeping the batch full. The fixed costs of a real engine "
        "take part of the gain at one sequence, and the draft model stops paying at a smaller batch.",
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
        "Same model pair, three cards: faster memory lifts plain decoding and speculation alike, more memory "
        "moves the open markers (does not fit) to the right. One slider sets the context of all three.",
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
        "Llama-3-70B on four H100s with an EAGLE head, five steps deep. The wide tree verifies 41 positions per "
        "sequence: it wins by far at one sequence and loses once the batch has used up the spare arithmetic. Hover "
        "for each shape's tokens per verify pass (an upper bound) and its arithmetic.",
        lambda s: draw.tree_ladder(multi.tree_ladder(s)),
    ),
    FigureSpec(
        "beyond-moe-weights",
        "Weights one pass reads against the token positions in it, mixture of experts and dense",
        "The dense model reads all its weights in every pass; the mixture of experts reads only the experts its "
        "tokens are routed to, so a verify pass of five positions per sequence reads several times a plain "
        "step's. Grey markers: plain steps and verify passes at 1 and 64 sequences.",
        lambda s: draw.moe_weights(*multi.moe_weights(s)),
    ),
    FigureSpec(
        "beyond-moe",
        "Speedup against concurrency on a mixture of experts and on a dense model",
        "Same drafters and acceptance on two GPUs: on the dense model speculation pays most at one sequence; on "
        "the mixture of experts it pays least at low batch and peaks where the plain step already reads most of "
        "the experts.",
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
