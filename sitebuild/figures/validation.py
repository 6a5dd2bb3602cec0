"""The page "Does it match a real server?" beyond the rows the profile is fitted on: every
measurement no fit has read against both engines (the page's first figure), the draft model
measured at 1 to 128 sequences (Qwen3-0.6B for Qwen3-8B on one H100, each series' acceptance
fitted at batch 1 under each engine, :mod:`specmodel.acceptance_fit`; its figure is also the
article's, in section 4), and forward passes timed on a GPU (``tools/time_passes.py``) against
the model's pass times. Each figure's data, drawing and
:class:`~sitebuild.figures.spec.FigureSpec` are together, each table beside its figure."""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import SiteSettings
from sitebuild.figures import beyond
from sitebuild.figures import placement as pl
from sitebuild.figures.common import fitted_frame, point_colors, prediction_diagonal, sequences, square_scatter
from sitebuild.figures.engines import ENGINE_STYLE, validation
from sitebuild.figures.spec import FigureSpec, parts_table
from sitebuild.memo import Keyed
from sitebuild.pass_timings import PassTimings, model_pass_ms
from sitebuild.paths import DRAFT_MODEL_MEASUREMENTS, ELSEWHERE
from specmodel.acceptance_fit import FittedSeries, fit_series
from specmodel.formatting import percent
from specmodel.measurements import Measurement, load_measurements
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import ENGINES
from specmodel.model.specs import get_architecture

#: Each engine's colour on the validation figures (the one-GPU figure's: orange and purple).
ENGINE_COLORS = th.ENGINE_COLORS
#: Marker of a published measurement drawn beside the model's predictions.
MEASURED_SYMBOL = "diamond"


# --- the draft model measured at 1 to 128 sequences ---------------------------------------------


def draft_model_rows() -> list[Measurement]:
    """The measurements of the draft model (sitebuild/data/measurements-draft-model.csv)."""
    return load_measurements(DRAFT_MODEL_MEASUREMENTS)


def draft_model_fitted(settings: SiteSettings, engine: str) -> list[FittedSeries]:
    """Every series of the draft-model measurements with its mean acceptance length fitted at
    batch 1 under ``engine`` (computed once per settings and engine: the figures, tables,
    numbers and claims of one build all need the same fits)."""
    return _draft_model_fitted(engine, Keyed(repr(settings), settings))


@cache
def _draft_model_fitted(engine: str, settings: Keyed[SiteSettings]) -> list[FittedSeries]:
    """:func:`draft_model_fitted`, memoised by the engine and the settings' JSON."""
    return fit_series(draft_model_rows(), engine, settings.value)


def draft_model_validation(settings: SiteSettings) -> pd.DataFrame:
    """Every draft-model measurement against the model under each engine, the acceptance of its
    series fitted at batch 1 under that engine."""
    return fitted_frame({engine: draft_model_fitted(settings, engine) for engine in ENGINES})


def _panel(row: Measurement) -> str:
    return f"{row.dataset} ({row.prompt_tokens:,} + {row.output_tokens:,} tokens)"


def draft_model_ladders(settings: SiteSettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each engine's speedup for each measured series at every power of two up to its largest
    measured batch (with the acceptance fitted under that engine at batch 1), one panel per
    dataset; and the measured points."""
    curves, points = [], []
    for engine in ENGINES:
        for fit in draft_model_fitted(settings, engine):
            first = fit.rows[0]
            batch = np.array([2**i for i in range(int(np.log2(fit.rows[-1].batch)) + 1)])
            fields = {**first.scenario(fit.mean_acceptance_length), "concurrency": batch}
            ev = evaluate(**fields, engine=engine, settings=settings)
            frame = pd.DataFrame({"concurrency": batch, "speedup": np.asarray(ev.speedup, dtype=float)})
            frame.insert(0, "panel", _panel(first))
            frame.insert(1, "engine", engine)
            frame["mean_acceptance_length"] = fit.mean_acceptance_length
            curves.append(frame)
    for fit in draft_model_fitted(settings, "vllm"):
        points.append(
            pd.DataFrame(
                {
                    "panel": _panel(fit.rows[0]),
                    "batch": [r.batch for r in fit.rows],
                    "measured": [r.measured_speedup for r in fit.rows],
                }
            )
        )
    return pd.concat(curves, ignore_index=True), pd.concat(points, ignore_index=True)


def _measured_trace(mine: pd.DataFrame, panel: str, legend: bool) -> go.Scatter:
    """The measured points of one panel: diamonds, a loss in magenta, within 3% of even in grey."""
    color = th.ROLE_COLORS["draft"]
    return go.Scatter(
        x=mine["batch"],
        y=mine["measured"],
        mode="markers",
        name="measured (SpecDecode-Bench)",
        legendgroup="measured",
        showlegend=legend,
        marker={
            "size": 13,
            "symbol": MEASURED_SYMBOL,
            "color": point_colors(mine["measured"], color),
            "line": {"width": 1.5, "color": th.MUTED},
        },
        hovertext=sequences(mine["batch"]),
        hovertemplate="%{hovertext}: measured %{y:.2f}x<extra>" + panel + "</extra>",
    )


def draw_draft_model_ladders(curves: pd.DataFrame, points: pd.DataFrame) -> go.Figure:
    """Speedup against concurrency, one panel per dataset: each engine's prediction (ideal
    dashed with triangles, vLLM profile solid with circles) and the measured points (diamonds);
    markers of a loss in magenta, within 3% of even in grey."""
    panels = list(dict.fromkeys(curves["panel"]))
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.03, subplot_titles=panels)
    fig.update_layout(template=th.TEMPLATE, height=480, autosize=True)
    x = curves["concurrency"]
    for col, panel in enumerate(panels, start=1):
        for engine, style in ENGINE_STYLE.items():
            part = curves[(curves["panel"] == panel) & (curves["engine"] == engine)]
            color, label = ENGINE_COLORS[engine], f"predicted, {style['label']}"
            fig.add_trace(
                go.Scatter(
                    x=part["concurrency"],
                    y=part["speedup"],
                    mode="lines+markers",
                    name=label,
                    legendgroup=engine,
                    showlegend=col == 1,
                    line={"color": color, "width": 2.5, "dash": style["dash"]},
                    marker={
                        "size": 8,
                        "symbol": style["symbol"],
                        "color": point_colors(part["speedup"], color),
                        "line": {"width": 1.5, "color": color},
                    },
                    hovertext=sequences(part["concurrency"]),
                    hovertemplate="%{hovertext}: %{y:.2f}x<extra>" + label + f", {panel}</extra>",
                ),
                row=1,
                col=col,
            )
        fig.add_trace(_measured_trace(points[points["panel"] == panel], panel, col == 1), row=1, col=col)
        th.reference_line(fig, 1.0, x.min(), x.max(), row=1, col=col)
    top = max(float(curves["speedup"].max()), float(points["measured"].max()))
    low = min(0.5, float(curves["speedup"].min()) * 0.9, float(points["measured"].min()) * 0.9)
    ticks = sorted({int(b) for b in points["batch"]})
    fig.update_xaxes(**th.log2_axis(ticks), title_text="concurrent sequences")
    fig.update_yaxes(range=[low, top * 1.08], ticksuffix="x")
    fig.update_yaxes(title_text="speedup over plain decoding", row=1, col=1)
    pl.side_by_side(fig, len(panels))
    return fig


def _ladders_table(computed: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    curves, points = computed
    return parts_table("kind", ("predicted", curves), ("measured", points))


DRAFT_MODEL_FIGURE = FigureSpec(
    "draft-model-measured",
    "Qwen3-0.6B drafting for Qwen3-8B on one H100: measured speedup against both engines' predictions",
    "Diamonds: SpecDecode-Bench's measurements under vLLM (three guesses per iteration); lines: the ideal "
    "roofline (dashed, triangles) and the fitted vLLM profile (solid, circles), each with the acceptance that "
    "reproduces the measurement at one sequence, so the larger batches are predictions; magenta markers are "
    "losses, grey ones within 3% of even.",
    draft_model_ladders,
    lambda d, s: draw_draft_model_ladders(d[0], d[1]),
    _ladders_table,
)


def draft_model_table(data: pd.DataFrame) -> str:
    """Every draft-model measurement against the model under each engine; at batch 1 the
    acceptance length each engine fits, elsewhere each prediction's error."""
    out = [
        "| dataset | sequences | measured | ideal roofline | vLLM profile |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    ideal = data[data["engine"] == "ideal"].to_dict("records")
    vllm = data[data["engine"] == "vllm"].to_dict("records")
    for row, pair in zip(vllm, zip(ideal, vllm, strict=True)):  # the same rows in the same order
        cells = []
        for r in pair:
            if r["fitted"]:
                cells.append(f"{r['predicted']:.2f}x (fitted: acceptance length {r['mean_acceptance_length']:.2f})")
            else:
                cells.append(f"{r['predicted']:.2f}x ({percent(r['error'], signed=True)})")
        out.append(f"| {row['dataset']} | {row['batch']} | {row['measured']:.2f}x | {cells[0]} | {cells[1]} |")
    return "\n".join(out)


# --- every measurement no fit has read --------------------------------------------------------

#: The sets of measurements that no fit of an engine's constants reads, as the figure names them.
HELD_OUT_SETS = {
    "elsewhere": "one GPU, found elsewhere (acceptance measured)",
    "four_gpus": "Llama-3-70B on four H100s (acceptance fitted at batch 1)",
    "draft_model": "Qwen3-0.6B for Qwen3-8B (acceptance fitted at batch 1)",
}


def held_out(settings: SiteSettings) -> pd.DataFrame:
    """Every measurement no fit has read, predicted under each engine: the one-GPU rows found
    elsewhere (with the acceptance each run measured) and the four-GPU and draft-model rows at
    batches above 1 (with the acceptance fitted at batch 1 under that engine; the batch-1 rows
    reproduce their measurement by construction and are left out)."""
    frames = []
    found = validation(settings, load_measurements(ELSEWHERE))
    for engine in ENGINES:
        frames.append(
            pd.DataFrame(
                {
                    "engine": engine,
                    "set": "elsewhere",
                    "label": [f"{s.split(' (')[0]}, {m}" for s, m in zip(found["source"], found["method"])],
                    "batch": found["batch"],
                    "measured": found["measured"],
                    "predicted": found[engine],
                }
            )
        )
    for name, data in (
        ("four_gpus", beyond.multigpu_validation(settings)),
        ("draft_model", draft_model_validation(settings)),
    ):
        part = data[~data["fitted"]]
        frames.append(
            pd.DataFrame(
                {
                    "engine": part["engine"],
                    "set": name,
                    "label": [f"{d}, {th.drafter_label(m)}" for d, m in zip(part["dataset"], part["method"])],
                    "batch": part["batch"],
                    "measured": part["measured"],
                    "predicted": part["predicted"],
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    frame["error"] = frame["predicted"] / frame["measured"] - 1.0
    return frame


def draw_held_out(data: pd.DataFrame) -> go.Figure:
    """Predicted against measured speedup on every measurement no fit has read, one trace per
    engine, with the diagonal (a perfect prediction) and a band of +-15 %."""
    fig = th.base_figure(height=480)
    low = min(0.5, float(min(data["measured"].min(), data["predicted"].min())) * 0.95)
    top = float(max(data["measured"].max(), data["predicted"].max())) * 1.05
    prediction_diagonal(fig, low, top)
    for engine, style in ENGINE_STYLE.items():
        part = data[data["engine"] == engine]
        color, label = ENGINE_COLORS[engine], f"{style['label']}, held out"
        fig.add_trace(
            go.Scatter(
                x=part["measured"],
                y=part["predicted"],
                mode="markers",
                name=label,
                text=[f"{t}, {sequences([b])[0]}" for t, b in zip(part["label"], part["batch"])],
                marker={"size": 9, "symbol": style["symbol"], "color": color, "line": {"width": 1.5, "color": color}},
                customdata=np.stack([100 * part["error"], [HELD_OUT_SETS[s] for s in part["set"]]], axis=-1),
                hovertemplate="%{text}<br>measured %{x:.2f}x, predicted %{y:.2f}x (%{customdata[0]:+.0f}%)"
                "<br>%{customdata[1]}<extra>" + label + "</extra>",
            )
        )
    return square_scatter(fig, low, top)


HELD_OUT_FIGURE = FigureSpec(
    "validation-held-out",
    "Predicted against measured speedup on every measurement no fit has read",
    "Each point is a published measurement that no fitted constant has seen (one-GPU runs found outside the "
    "fitted file, with the acceptance each measured, and the four-GPU and draft-model series at 16 to 128 "
    "sequences, with the acceptance fitted at one sequence under each engine), against the ideal roofline "
    "(orange triangles) and the fitted vLLM profile (purple circles): on the diagonal the model predicts "
    "exactly, and dotted lines are 15% off.",
    held_out,
    lambda d, s: draw_held_out(d),
)


# --- forward passes timed on a GPU ------------------------------------------------------------


def pass_timings_frame(record: PassTimings, settings: SiteSettings) -> pd.DataFrame:
    """Every timed pass of ``record`` beside the model's roofline time for it (the untimed ones
    left out), with their ratio."""
    timed = [t for t in record.timings if t.median_ms is not None]
    frame = pd.DataFrame([t.model_dump() for t in timed])
    c, kv = settings.constants, record.kv_tokens
    frame["model_ms"] = [float(model_pass_ms(c, t.model, record.hardware, t.batch, t.positions, kv)) for t in timed]
    frame["ratio"] = frame["median_ms"] / frame["model_ms"]
    return frame


def pass_timings_table(frame: pd.DataFrame) -> str:
    """The timed passes against the model's roofline time, one line each."""
    out = [
        "| model | sequences | positions each | measured (ms) | roofline (ms) | measured / roofline |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in frame.to_dict("records"):
        name = get_architecture(str(r["model"])).name
        out.append(
            f"| {name} ({r['role']}) | {r['batch']} | {r['positions']} | {r['median_ms']:.3g} "
            f"| {r['model_ms']:.3g} | {r['ratio']:.2f}x |"
        )
    return "\n".join(out)


FIGURES: tuple[FigureSpec, ...] = (
    HELD_OUT_FIGURE,
    DRAFT_MODEL_FIGURE,
)
"""The figures of this module, in the order of their pages (the draft model's is also the article's)."""
