"""What a pass costs, the article's sections on arithmetic and on memory: the arithmetic bill
against Theorem 3.11, the three models'
weights and cache (with the footprint and capacity tables), speedup and draft share against
context, and what a draft head's step reads (with its table). Each figure's data, drawing and
:class:`~sitebuild.figures.spec.FigureSpec` are together, each table beside its figure."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment, SiteSettings
from sitebuild.figures.common import (
    CONTEXTS,
    GAMMAS,
    SPEEDUP_HOVER,
    UNFIT_SYMBOL,
    evaluation_frame,
    model_drafters,
    named_groups,
    point_colors,
    site_drafters,
)
from sitebuild.figures.placement import (
    legend_above,
    legend_below,
    narrow_below,
    set_narrow,
    sparse_ticks,
    stacked_domains,
)
from sitebuild.figures.spec import FigureSpec
from specmodel.formatting import GIB, KIB
from specmodel.model import acceptance as acc
from specmodel.model import architecture as arch
from specmodel.model import heads
from specmodel.model.drafters import drafter_coefficients, drafter_label
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import DEFAULTS
from specmodel.model.specs import architecture_catalog, get_architecture, get_hardware

# --- the arithmetic bill ----------------------------------------------------------------------


def arithmetic_bill(settings: SiteSettings) -> pd.DataFrame:
    """Arithmetic per output token (speculative / plain) vs gamma: simulated for three
    drafter/profile pairs, and Leviathan et al.'s Theorem 3.11 for c = 0 and for the 0.6B draft."""
    rows = []
    draft = settings.deployment.draft
    cases = [(draft, "falling"), (draft, "same"), ("ngram", "same")]
    for drafter, profile in cases:
        ev = evaluate(settings=settings, gamma=GAMMAS, drafter=drafter, acceptance=profile)
        rows.append(
            pd.DataFrame(
                {
                    "gamma": GAMMAS,
                    "series": f"simulated: {drafter_label(drafter)}, {profile}",
                    "drafter": drafter,
                    "profile": profile,
                    "kind": "simulated",
                    "ratio": ev.arithmetic_ratio,
                }
            )
        )
    target, draft_arch = get_architecture(settings.deployment.target), get_architecture(draft)
    c_draft = arch.draft_cost_ratio(draft_arch, target, settings.constants.FLOPS_PER_PARAMETER)
    for c, label, drafter in (
        (0.0, "Theorem 3.11, c = 0", "ngram"),
        (c_draft, f"Theorem 3.11, c = {c_draft:.3f}", draft),
    ):
        rows.append(
            pd.DataFrame(
                {
                    "gamma": GAMMAS,
                    "series": label,
                    "drafter": drafter,
                    "profile": "same",  # the theorem's assumption: one alpha at every position
                    "kind": "theorem",
                    "ratio": acc.theorem_3_11_arithmetic_increase(DEFAULTS["alpha"], GAMMAS, c),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def draw_arithmetic_bill(data: pd.DataFrame, deployment: ArticleDeployment) -> go.Figure:
    """Arithmetic per output token vs gamma: simulated points and Theorem 3.11 lines."""
    fig = th.base_figure()
    styles = {
        "simulated": {"mode": "markers", "marker": {"size": 10}},
        "theorem": {"mode": "lines", "line": {"width": 2, "dash": "dot"}},
    }
    for series, part in named_groups(data, "series"):
        kind, drafter, profile = part[["kind", "drafter", "profile"]].iloc[0]
        # A theorem line takes the colour of the dots it explains: the same drafter under the
        # theorem's own assumption, the same acceptance at every position.
        same_draft = profile == "same" and drafter == deployment.draft
        color = th.SAME_ACCEPTANCE if same_draft else th.drafter_color(drafter, deployment)
        style = {k: (dict(v, color=color) if isinstance(v, dict) else v) for k, v in styles[kind].items()}
        fig.add_trace(
            go.Scatter(
                x=part["gamma"],
                y=part["ratio"],
                name=series,
                **style,
                hovertemplate="gamma %{x}: %{y:.2f}x the FLOPs per output token<extra>" + series + "</extra>",
            )
        )
    fig.update_layout(
        xaxis={"title": "draft tokens per iteration (gamma)", "dtick": 1},
        yaxis={
            "title": "FLOPs per output token vs plain",
            "ticksuffix": "x",
            "range": [1, float(data["ratio"].max()) * 1.05],
        },
    )
    legend_below(fig)
    set_narrow(fig, narrow_below(fig, 460))
    return fig


ARITHMETIC_FIGURE = FigureSpec(
    "arithmetic",
    "Arithmetic per output token against gamma",
    "The bill: dots are the model's own FLOP counts per output token, dotted lines Theorem 3.11; compare each "
    "set of dots with the line of the same colour.",
    arithmetic_bill,
    lambda d, s: draw_arithmetic_bill(d, s.deployment),
    setting=lambda s: {"acceptance": "same", "drafter": "ngram"},
)


# --- memory: weights and cache of the three models --------------------------------------------


def memory_footprint(settings: SiteSettings) -> pd.DataFrame:
    """Weights (GiB) and KV cache per token (KiB) of the target and the two draft models."""
    keys = (settings.deployment.target, *model_drafters(settings))
    models = [get_architecture(k) for k in keys]
    return pd.DataFrame(
        {
            "model": [m.name for m in models],
            "weights_gib": [arch.weight_bytes(m) / GIB for m in models],
            "kv_kib_per_token": [arch.kv_cache_bytes_per_token(m) / KIB for m in models],
            "parameters": [arch.parameter_count(m) for m in models],
        }
    )


def draw_memory_footprint(data: pd.DataFrame) -> go.Figure:
    """Weights vs KV cache per token for the three models (two panels)."""
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("weights (GiB, bf16)", "KV cache per token (KiB)"), horizontal_spacing=0.14
    )
    fig.update_layout(template=th.TEMPLATE, height=380, autosize=True, showlegend=False)
    colors = [th.MUTED, th.ROLE_COLORS["draft"], th.ROLE_COLORS["big_draft"]]
    panels = (
        ("weights_gib", "{:.2f}", ".2f", "GiB of weights"),
        ("kv_kib_per_token", "{:.0f}", ".0f", "KiB of cache per token"),
    )
    for col, (column, label, hover, unit) in enumerate(panels, start=1):
        fig.add_trace(
            go.Bar(
                x=data["model"],
                y=data[column],
                marker_color=colors,
                text=data[column].map(label.format),
                textposition="outside",
                cliponaxis=False,
                hovertemplate=f"%{{x}}: %{{y:{hover}}} {unit}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_yaxes(range=[0, float(data[column].max()) * 1.2], row=1, col=col)
    fig.update_xaxes(tickangle=0, tickfont_size=12)  # the models' names stay level in a 600 px figure
    # Narrow: the panels one over the other, each with its title over it.
    height, top, bottom = 560, 36, 56
    upper, lower = stacked_domains(2, height - top - bottom, 62)
    narrow = {"height": height, "margin.t": top, "margin.b": bottom, "xaxis.domain": [0, 1], "xaxis2.domain": [0, 1]}
    narrow.update({"yaxis.domain": upper, "yaxis2.domain": lower})
    for i, domain in enumerate((upper, lower)):
        narrow.update({f"annotations[{i}].x": 0.5, f"annotations[{i}].y": domain[1]})
    set_narrow(fig, narrow)
    return fig


MEMORY_FIGURE = FigureSpec(
    "memory",
    "Weights and KV cache per token of the three models",
    "Weights and KV cache per token of the target and the two draft models, side by side.",
    memory_footprint,
    lambda d, s: draw_memory_footprint(d),
)


def footprint_table(settings: SiteSettings) -> str:
    """The article's table: layers, KV heads, head dim, weights and cache per token of the
    deployment's target and two draft models, with each draft's share of the target's."""
    target = settings.deployment.target
    drafts = (settings.deployment.draft, settings.deployment.big_draft)
    catalog = architecture_catalog()
    t = catalog[target]
    out = [
        "| model | layers | KV heads | head dim | weights | KV cache per token |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, role in [(target, "target")] + [(d, "draft") for d in drafts]:
        a = catalog[key]
        w, kv = arch.weight_bytes(a), arch.kv_cache_bytes_per_token(a)
        share = "" if key == target else f" ({w / arch.weight_bytes(t):.0%})"
        kv_share = "" if key == target else f" ({kv / arch.kv_cache_bytes_per_token(t):.0%})"
        out.append(
            f"| {a.name} ({role}) | {a.num_hidden_layers} | {a.num_key_value_heads} | {a.head_dim} | "
            f"{w / GIB:.2f} GiB{share} | {kv / KIB:.0f} KiB{kv_share} |"
        )
    return "\n".join(out)


#: The article's scenarios whose memory the capacity table checks: (concurrency, context).
ARTICLE_SCENARIOS = ((1, 2048), (32, 2048), (64, 2048), (64, 8192), (128, 2048), (1024, 256), (1024, 2048))


def capacity_table(settings: SiteSettings, scenarios: Sequence[tuple[int, int]] = ARTICLE_SCENARIOS) -> str:
    """For each of the article's scenarios: memory needed with the draft model and without
    (plain decoding), against what the card offers."""
    d = settings.deployment
    hw = get_hardware(d.hardware)
    batch, t = (np.array(x) for x in zip(*scenarios))
    spec = evaluate(concurrency=batch, context=t, settings=settings)
    plain = evaluate(concurrency=batch, context=t, drafter="ngram", settings=settings)
    usable = float(spec.usable_memory_bytes[0]) / GIB
    out = [
        f"| sequences | context | with {th.drafter_label(d.draft)} | fits | plain decoding | fits |",
        "| ---: | ---: | ---: | :---: | ---: | :---: |",
    ]
    for i in range(len(batch)):
        out.append(
            f"| {batch[i]:,} | {t[i]:,} | {spec.memory_required_bytes[i] / GIB:,.1f} GiB | "
            f"{'yes' if spec.fits[i] else '**no**'} | {plain.memory_required_bytes[i] / GIB:,.1f} GiB | "
            f"{'yes' if plain.fits[i] else '**no**'} |"
        )
    out.append(
        f"\nUsable on one {hw.name}: {usable:,.1f} GiB ({settings.constants.GPU_MEMORY_UTILIZATION:.0%} of "
        f"the {hw.memory_capacity.value / GIB:,.1f} GiB the card reports)."
    )
    return "\n".join(out)


# --- speedup and draft share against context --------------------------------------------------


def context_sweep(settings: SiteSettings, concurrency: int = 64) -> pd.DataFrame:
    """Draft share of wall clock and speedup vs context at 64 sequences, every drafter."""
    t, d = np.meshgrid(CONTEXTS, np.array(site_drafters(settings)), indexing="ij")
    ev = evaluate(settings=settings, concurrency=concurrency, context=t, drafter=d)
    return evaluation_frame(ev, context=t, drafter=d, speedup=ev.speedup, draft_share=ev.draft_share, fits=ev.fits)


#: Hover text added to a point that does not fit in memory.
FITS_NOTE = {True: "", False: "<br>does not fit in memory"}


def draw_context_sweep(data: pd.DataFrame, concurrency: int, deployment: ArticleDeployment) -> go.Figure:
    """Speedup (top) and the drafter's share of wall clock (bottom) vs context."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    fig.update_layout(template=th.TEMPLATE, height=520, autosize=True)
    for drafter, part in named_groups(data, "drafter"):
        color, label = th.drafter_color(drafter, deployment), th.drafter_label(drafter)
        # Open markers: the scenario does not fit in memory (as on the ladder).
        symbols = ["circle" if f else UNFIT_SYMBOL for f in part["fits"]]
        marker = {"size": 8, "color": point_colors(part["speedup"], color), "symbol": symbols, "line": {"width": 2}}
        fig.add_trace(
            go.Scatter(
                x=part["context"],
                y=part["speedup"],
                mode="lines+markers",
                name=label,
                line={"color": color, "width": 2.5},
                marker=marker,
                legendgroup=drafter,
                text=[FITS_NOTE[bool(f)] for f in part["fits"]],
                hovertemplate="context %{x:,}: " + SPEEDUP_HOVER + "%{text}<extra>" + label + "</extra>",
            ),
            row=1,
            col=1,
        )
        if drafter != "ngram":
            fig.add_trace(
                go.Scatter(
                    x=part["context"],
                    y=part["draft_share"] * 100,
                    mode="lines+markers",
                    name=label,
                    line={"color": color, "width": 2.5},
                    marker={"symbol": symbols, "line": {"width": 2}, "color": color},
                    showlegend=False,
                    legendgroup=drafter,
                    hovertemplate="context %{x:,}: %{y:.0f}% of wall clock drafting<extra>" + label + "</extra>",
                ),
                row=2,
                col=1,
            )
    x = data["context"]
    th.reference_line(fig, 1.0, x.min(), x.max(), row=1, col=1)
    fig.update_xaxes(**th.log2_axis(sorted(x.unique())))
    fig.update_xaxes(title_text=f"context, prompt tokens per sequence ({concurrency} sequences)", row=2, col=1)
    fig.update_yaxes(title_text="speedup", ticksuffix="x", range=[0, float(data["speedup"].max()) * 1.1], row=1, col=1)
    fig.update_yaxes(title_text="draft share", ticksuffix="%", range=[0, 100], row=2, col=1)
    legend_above(fig)
    title = f"prompt tokens ({concurrency} sequences)"
    set_narrow(
        fig, narrow_below(fig, 650, extra={"xaxis2.title.text": title, **sparse_ticks(sorted(x.unique()), axes=2)})
    )
    return fig


CONTEXT_FIGURE = FigureSpec(
    "context",
    "Speedup and draft share against context at 64 sequences",
    "Speedup (top) and the share of the wall clock spent drafting (bottom) against prompt length at 64 "
    "sequences, with open markers where 64 sequences at that prompt length do not fit in memory.",
    lambda s: context_sweep(s, 64),
    lambda d, s: draw_context_sweep(d, 64, s.deployment),
    setting=lambda s: {"concurrency": 64, "context": 8192},
)


# --- what a draft step reads ------------------------------------------------------------------


#: Heads the article's section on heads compares (EAGLE-3's own structure is on the validation page).
ARTICLE_HEADS = ("eagle", "eagle-32k", "mtp")


def head_costs(settings: SiteSettings, concurrency: int = 64) -> pd.DataFrame:
    """What one draft step costs for each head and the deployment's draft model: weights read
    (of which the LM head), the head's cache per token, the bytes of a full-batch draft pass at
    1 and at ``concurrency`` sequences, and the speedup there (defaults otherwise)."""
    t = get_architecture(settings.deployment.target)
    fpp = settings.constants.FLOPS_PER_PARAMETER
    rows = []
    for name in (settings.deployment.draft, *ARTICLE_HEADS):
        one, many = (
            evaluate(settings=settings, drafter=name),
            evaluate(settings=settings, drafter=name, concurrency=concurrency),
        )
        if name in heads.head_catalog():
            head = heads.head_catalog()[name]
            lm = heads.lm_head_bytes_per_step(head, t)
            vocab = heads.draft_vocabulary(head, t)
        else:
            lm = arch.lm_head_bytes(get_architecture(name))
            vocab = get_architecture(name).vocab_size
        rows.append(
            {
                "drafter": name,
                "vocabulary": vocab,
                "weights_read_gib": float(one.draft_weight_bytes) / GIB,
                "lm_head_gib": lm / GIB,
                "lm_head_share": lm / float(one.draft_weight_bytes),
                "kv_kib_per_token": float(one.draft_kv_bytes_per_token) / KIB,
                "resident_gib": drafter_coefficients(name, t.key, fpp).resident_bytes / GIB,
                "step_gib_b1": float(one.draft_step_bytes) / GIB,
                "step_gib_bn": float(many.draft_step_bytes) / GIB,
                "speedup_b1": float(one.speedup),
                "speedup_bn": float(many.speedup),
            }
        )
    return pd.DataFrame(rows)


def draw_head_costs(data: pd.DataFrame) -> go.Figure:
    """Bytes one draft step reads per drafter at one sequence: the LM head against the rest."""
    fig = th.base_figure(height=360)
    labels = [th.drafter_label(d) for d in data["drafter"]]
    rest = data["weights_read_gib"] - data["lm_head_gib"]
    fig.add_trace(
        go.Bar(
            y=labels,
            x=data["lm_head_gib"],
            orientation="h",
            name="output (LM) head",
            marker_color=th.COMPUTE,
            customdata=data["vocabulary"],
            hovertemplate="%{y}: %{x:.2f} GiB of LM head over %{customdata:,} tokens<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            y=labels,
            x=rest,
            orientation="h",
            name="everything else",
            marker_color=th.MEMORY,
            hovertemplate="%{y}: %{x:.2f} GiB of other weights<extra></extra>",
        )
    )
    fig.update_layout(
        barmode="stack",
        xaxis={"title": "weights read per draft step, GiB", "range": [0, float(data["weights_read_gib"].max()) * 1.1]},
        yaxis={"autorange": "reversed"},
    )
    legend_below(fig)
    short = [th.drafter_short_label(d) for d in data["drafter"]]
    narrow = {"xaxis.title.text": "GiB read per draft step", "yaxis.tickvals": labels, "yaxis.ticktext": short}
    set_narrow(fig, narrow_below(fig, 380, extra=narrow))
    return fig


HEADS_FIGURE = FigureSpec(
    "heads",
    "Weights one draft step reads, LM head against the rest",
    "Weights one draft step reads at one sequence, by drafter: orange is the output head it scores tokens "
    "with, the rest its own layers.",
    head_costs,
    lambda d, s: draw_head_costs(d),
    setting=lambda s: {"concurrency": 64, "drafter": "eagle-32k"},
)


def heads_table(costs: pd.DataFrame, concurrency: int = 64) -> str:
    """What one draft step costs per drafter (:func:`head_costs`, at ``concurrency`` sequences
    as it was computed): the drafter first, units in the header, so that it fits the article's
    column without scrolling."""
    many = f"{concurrency} seq."
    out = [
        "| drafter | vocabulary (tokens) | read per step (GiB) | LM head (GiB) | cache per token (KiB) "
        f"| draft pass at {many} (GiB) | speedup at 1 and {many} |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in costs.itertuples():
        out.append(
            f"| {th.drafter_label(str(r.drafter))} | {r.vocabulary:,} | {r.weights_read_gib:.2f} | "
            f"{r.lm_head_gib:.2f} ({r.lm_head_share:.0%}) | {r.kv_kib_per_token:.0f} | {r.step_gib_bn:.2f} | "
            f"{r.speedup_b1:.2f}x, {r.speedup_bn:.2f}x |"
        )
    return "\n".join(out)


FIGURES: tuple[FigureSpec, ...] = (
    ARITHMETIC_FIGURE,
    MEMORY_FIGURE,
    CONTEXT_FIGURE,
    HEADS_FIGURE,
)
"""The figures of this module, in the order of their pages."""
