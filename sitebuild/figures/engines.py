"""The engines against real servers (the page "Does it match a real server?", the article's
section on engines and the model page's profile table): the ladder under each engine, every
engine profile's constants, every public measurement on one GPU against the model (figure
and tables), and the tables of EAGLE-3's step-time trade-off and of the profile refitted at
other memory efficiencies. Each figure's data, drawing and
:class:`~sitebuild.figures.spec.FigureSpec` are together, each table beside its figure. The
four-GPU measurements are with their series in :mod:`sitebuild.figures.beyond`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment, SiteSettings
from sitebuild.engine_tradeoff import SPLITS, Tradeoff, width_label
from sitebuild.figures import placement as pl
from sitebuild.figures.common import (
    CONCURRENCY,
    IDEAL_SYMBOL,
    SPEEDUP_HOVER,
    evaluation_frame,
    point_colors,
    prediction_diagonal,
    sequences,
)
from sitebuild.figures.spec import FigureSpec
from sitebuild.memory_sensitivity import HELD_OUT, Refit
from sitebuild.paths import MEASUREMENTS
from specmodel.formatting import percent
from specmodel.measurements import Measurement, load_measurements, predict, relative_errors
from specmodel.model.engines import EngineProfile
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import ENGINES

# --- the ladder under each engine -------------------------------------------------------------


def engine_ladder(settings: SiteSettings, drafters: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The default scenario's speedup against concurrency under each engine (its own
    batching), for the deployment's draft model and n-gram lookup."""
    drafters = drafters or (settings.deployment.draft, "ngram")
    batch, d, e = np.meshgrid(CONCURRENCY, np.array(drafters), np.array(ENGINES), indexing="ij")
    ev = evaluate(settings=settings, concurrency=batch, drafter=d, engine=e)
    return evaluation_frame(ev, concurrency=batch, drafter=d, engine=e, speedup=ev.speedup, fits=ev.fits)


#: How each engine's traces look: the article's ideal model dashed with triangles, the fitted
#: engine solid with circles (open markers mean "does not fit" on every figure of the site).
ENGINE_STYLE = {
    "ideal": {"dash": "dash", "symbol": IDEAL_SYMBOL, "label": "ideal roofline"},
    "vllm": {"dash": "solid", "symbol": "circle", "label": "vLLM profile"},
}


def draw_engine_ladder(data: pd.DataFrame, deployment: ArticleDeployment) -> go.Figure:
    """Speedup against concurrency for each drafter under the ideal model (dashed) and the
    vLLM profile (solid)."""
    fig = th.base_figure(height=440)
    for key, part in data.groupby(["drafter", "engine"], sort=False):
        drafter, engine = cast(tuple[str, str], key)  # a key of two columns of names
        color, style = th.drafter_color(drafter, deployment), ENGINE_STYLE[engine]
        label = f"{th.drafter_label(drafter)}, {style['label']}"
        fig.add_trace(
            go.Scatter(
                x=part["concurrency"],
                y=part["speedup"],
                mode="lines+markers",
                name=label,
                line={"color": color, "width": 2.5, "dash": style["dash"]},
                marker={
                    "size": 8,
                    "color": point_colors(part["speedup"], color),
                    "symbol": style["symbol"],
                    "line": {"width": 1.5, "color": color},
                },
                hovertext=sequences(part["concurrency"]),
                hovertemplate="%{hovertext}: " + SPEEDUP_HOVER + "<extra>" + label + "</extra>",
            )
        )
    x = data["concurrency"]
    th.reference_line(fig, 1.0, x.min(), x.max())
    fig.update_layout(
        xaxis={**th.log2_axis(sorted(x.unique())), "title": "concurrent sequences"},
        yaxis={
            "title": "speedup over plain decoding",
            "ticksuffix": "x",
            "range": [0, float(data["speedup"].max()) * 1.1],
        },
    )
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 470, extra=pl.sparse_ticks(sorted(x.unique()))))
    return fig


ENGINES_FIGURE = FigureSpec(
    "engines",
    "Speedup against concurrency under the ideal model and the vLLM profile",
    "Dashed lines with triangles: the article's ideal roofline; solid lines with circles: the same scenario "
    "under the engine profile fitted to measurements of vLLM, with continuous batching keeping the batch full.",
    engine_ladder,
    lambda d, s: draw_engine_ladder(d, s.deployment),
    setting=lambda s: {"concurrency": 16, "engine": "vllm"},
)


#: Each profile constant, with its symbol on the model page, unit and what it stands for.
CONSTANTS = (
    ("target_pass_s", "t_0", 1e3, "ms", "fixed time per target pass"),
    ("sequence_pass_s", "t_s", 1e6, "µs", "per sequence per target pass"),
    ("draft_model_pass", "t_m", 1e3, "ms", "fixed time per draft-model pass"),
    ("head_pass_s", "t_h", 1e3, "ms", "fixed time per draft-head step"),
    ("ngram_lookup_s", "t_n", 1e6, "µs", "n-gram lookup, per sequence per iteration"),
    ("iteration_s", "t_i", 1e3, "ms", "fixed time per speculative iteration"),
    ("overlap", "p", 1.0, "", "overlap exponent of memory and arithmetic"),
    ("compute_efficiency", r"\eta_{\text{flop}}", 1.0, "", "achievable share of peak FLOP/s"),
    ("memory_efficiency", r"\eta_{\text{mem}}", 1.0, "", "achievable share of the datasheet's memory bandwidth"),
    ("ngram_matched_acceptance", "a_n", 1.0, "", "first-token acceptance of a matched n-gram lookup"),
    ("token_budget", "C", 1.0, "tokens", "token budget per pass: a waiting prompt is prefilled whole up to it"),
)


def _value(profile: EngineProfile, field: str, scale: float, settings: SiteSettings) -> str:
    value = getattr(profile, field)
    if field == "compute_efficiency":
        value = profile.compute_efficiency_or(settings.constants.COMPUTE_EFFICIENCY)
    if field == "memory_efficiency":
        value = profile.memory_efficiency_or(settings.constants.MEMORY_EFFICIENCY)
    if value is None:
        empty = {"ngram_matched_acceptance": "none (always drafts)", "token_budget": "none (prefill spread evenly)"}
        return empty.get(field, "-")
    if math.isinf(value):
        return "∞ (max)"
    return f"{value:d}" if isinstance(value, int) else f"{value * scale:.3g}"


def engines_table(settings: SiteSettings) -> str:
    """Every engine profile's constants side by side, with its default batching and how its
    passes read an untied input embedding (``embedding_read``)."""
    names = list(settings.engines)
    out = [
        "| constant | meaning | " + " | ".join(f"`{n}`" for n in names) + " |",
        "| --- | --- |" + " ---: |" * len(names),
    ]
    for field, symbol, scale, unit, meaning in CONSTANTS:
        cells = " | ".join(_value(settings.engines[n], field, scale, settings) for n in names)
        out.append(f"| \\({symbol}\\){f' ({unit})' if unit else ''} | {meaning} | {cells} |")
    out.append("| batching | default | " + " | ".join(settings.engines[n].batching for n in names) + " |")
    reads = " | ".join(settings.engines[n].embedding_read for n in names)
    out.append(f"| embedding read | an untied input table: whole, or the rows the tokens index | {reads} |")
    return "\n".join(out)


# --- the public measurements on one GPU -------------------------------------------------------


def validation(settings: SiteSettings, rows: list[Measurement]) -> pd.DataFrame:
    """Every public measurement against the model's prediction under each engine, with the
    acceptance the run measured given to the model."""
    frame = pd.DataFrame(
        {
            "source": [r.source for r in rows],
            "url": [r.source_url or "" for r in rows],
            "method": [r.method for r in rows],
            "batch": [r.batch for r in rows],
            "gamma": [r.num_speculative_tokens for r in rows],
            "prompt_tokens": [r.prompt_tokens for r in rows],
            "output_tokens": [r.output_tokens for r in rows],
            "mean_acceptance_length": [r.mean_acceptance_length for r in rows],
            "measured": [r.measured_speedup for r in rows],
        }
    )
    for engine in ENGINES:
        frame[engine] = predict(rows, engine, settings)
        frame[f"{engine}_error"] = relative_errors(frame[engine].to_numpy(), rows)
    return frame


def draw_validation(data: pd.DataFrame) -> go.Figure:
    """Predicted against measured speedup for every public measurement, one colour per engine,
    with the diagonal (a perfect prediction) and a band of +-15 %."""
    fig = th.base_figure(height=480)
    top = float(max(data["measured"].max(), data["ideal"].max(), data["vllm"].max())) * 1.05
    low = min(0.9, float(min(data["measured"].min(), data["vllm"].min())) * 0.95)
    prediction_diagonal(fig, low, top)
    text = [f"{m}, batch {b}, gamma {g}" for m, b, g in zip(data["method"], data["batch"], data["gamma"])]
    for engine, style in ENGINE_STYLE.items():
        fig.add_trace(
            go.Scatter(
                x=data["measured"],
                y=data[engine],
                mode="markers",
                name=style["label"],
                text=text,
                marker={
                    "size": 8,
                    "symbol": style["symbol"],
                    "color": th.ENGINE_COLORS[engine],
                    "line": {"width": 1.5},
                },
                customdata=np.stack([100 * data[f"{engine}_error"], data["source"]], axis=-1),
                hovertemplate="%{text}<br>measured %{x:.2f}x, predicted %{y:.2f}x (%{customdata[0]:+.0f}%)"
                "<br>%{customdata[1]}<extra>" + style["label"] + "</extra>",
            )
        )
    axis = {"range": [low, top], "ticksuffix": "x"}
    fig.update_layout(
        xaxis={**axis, "title": "measured speedup"}, yaxis={**axis, "title": "predicted speedup", "scaleanchor": "x"}
    )
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 470))
    return fig


VALIDATION_FIGURE = FigureSpec(
    "validation",
    "Predicted against measured speedup on public vLLM measurements",
    "Each point is one published measurement of vLLM on an H100, with the acceptance that run measured given "
    "to the model, against the prediction of the ideal roofline (orange triangles) and of the fitted vLLM "
    "profile (purple circles): on the diagonal the model predicts exactly, and dotted lines are 15% off.",
    lambda s: validation(s, load_measurements(MEASUREMENTS)),
    lambda d, s: draw_validation(d),
)


def validation_table(data: pd.DataFrame) -> str:
    """Every public measurement with a link to its source (the key column, first), against the
    model under each engine."""
    out = [
        "| source | method | batch | γ | prompt / output | acceptance length | measured | ideal | vLLM |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data.to_dict("records"):
        source = r["source"].split(" (")[0]
        link = f"[{source}]({r['url']})" if r["url"] else source
        ideal, vllm = (percent(e, signed=True) for e in (r["ideal_error"], r["vllm_error"]))
        out.append(
            f"| {link} | `{r['method']}` | {r['batch']} | {r['gamma']} | {r['prompt_tokens']} / "
            f"{r['output_tokens']} | {r['mean_acceptance_length']:.2f} | {r['measured']:.2f}x "
            f"| {r['ideal']:.2f}x ({ideal}) | {r['vllm']:.2f}x ({vllm}) |"
        )
    return "\n".join(out)


# --- EAGLE-3's step time, and the profile at other memory efficiencies ------------------------


#: How each split heads its column in the trade-off table.
TRADEOFF_COLUMNS = {
    "in_sample": "in sample, median / p90",
    "leave_one_source_out": "leave one source out, median",
    "small_to_large": "batch 1 and 16 to 64 and 128, median",
}


def _target_cell(errors: tuple[float, float, float], split: str, met: bool) -> str:
    """A split's ``(median, p90, worst)`` as a table cell: the median (and, in sample, the 90th
    percentile the targets also name), then ✓ if the split meets its targets, ✗ if not."""
    median, p90, _ = errors
    text = f"{percent(median, 1)} / {percent(p90, 1)}" if split == "in_sample" else percent(median, 1)
    return f"{text} {'✓' if met else '✗'}"


def eagle3_tradeoff_table(results: Sequence[Tradeoff]) -> str:
    """EAGLE-3's own step time under each prior width: the fitted step times and each split's
    errors, a target met marked ✓ and one missed ✗ (:mod:`sitebuild.engine_tradeoff`)."""
    head = " | ".join(
        ["prior width \\(w\\)", "\\(t_h\\) (ms)", "\\(t_{h3}\\) (ms)", *(TRADEOFF_COLUMNS[s] for s in SPLITS)]
    )
    out = [f"| {head} |", "| --- |" + " ---: |" * (2 + len(SPLITS))]
    for r in results:
        cells = [_target_cell(r.errors[split], split, r.met(split)) for split in SPLITS]
        times = f"{r.head_s * 1e3:.3g} | {r.eagle3_s * 1e3:.3g}"
        out.append(f"| {width_label(r.width)} | {times} | " + " | ".join(cells) + " |")
    return "\n".join(out)


#: How each split heads its column in the memory-efficiency table.
SENSITIVITY_COLUMNS = {**TRADEOFF_COLUMNS, "leave_one_workload_out": "leave one source and workload out, median"}


def memory_sensitivity_table(results: Sequence[Refit], profile_efficiency: float) -> str:
    """The profile refitted at each memory efficiency: the fitted constants, the plain step it
    predicts in the anchor's scenario, each split's errors (a target met ✓, missed ✗) and the
    largest relative standard error (:mod:`sitebuild.memory_sensitivity`)."""
    splits = ("in_sample", *HELD_OUT)
    head = [
        r"\(\eta_{\text{mem}}\)",
        r"\(t_0\) (ms)",
        r"\(t_h\) (ms)",
        r"\(p\)",
        r"\(a_n\)",
        "plain step (ms)",
        *(SENSITIVITY_COLUMNS[s] for s in splits),
        "largest relative SE",
    ]
    out = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for r in results:
        label = f"{r.efficiency:.2f}" + (" (the profile)" if math.isclose(r.efficiency, profile_efficiency) else "")
        v = r.values
        cells = [
            label,
            f"{v['target_pass_s'] * 1e3:.3g}",
            f"{v['head_pass_s'] * 1e3:.3g}",
            f"{v['overlap']:.3g}",
            f"{v['ngram_matched_acceptance']:.3g}",
            f"{r.plain_step_s * 1e3:.3g}",
        ]
        cells += [_target_cell(r.errors[split], split, r.met(split)) for split in splits]
        cells.append(percent(r.largest_relative_se))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


FIGURES: tuple[FigureSpec, ...] = (
    ENGINES_FIGURE,
    VALIDATION_FIGURE,
)
"""The figures of this module, in the order of their pages."""
