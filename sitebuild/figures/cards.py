"""The page "Other cards": the ladder on H100, H200 and B200 side by side, and how many
sequences each card holds (its table). The figure's data, drawing and
:class:`~sitebuild.figures.spec.FigureSpec` are together, the table beside them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sitebuild import theme as th
from sitebuild.config import ArticleDeployment, SiteSettings
from sitebuild.figures import placement as pl
from sitebuild.figures.common import slider, visibility_steps
from sitebuild.figures.ladders import ladder_frame, ladder_trace
from sitebuild.figures.spec import FigureSpec
from specmodel.formatting import GIB
from specmodel.model.evaluate import evaluate
from specmodel.model.specs import architecture_catalog, get_hardware

#: Cards the side-by-side ladder compares.
COMPARED_HARDWARE = ("h100-sxm", "h200", "b200")
COMPARED_CONTEXTS = (512, 2048, 8192, 32768)


def hardware_ladders(settings: SiteSettings) -> pd.DataFrame:
    """The ladder (speedup vs concurrency) on each card of COMPARED_HARDWARE for the draft
    model, n-gram lookup and the 32k-vocabulary EAGLE head at four contexts, with whether
    each scenario fits on the card."""
    frames = []
    for key in COMPARED_HARDWARE:
        frame = ladder_frame(settings, key, COMPARED_CONTEXTS, (settings.deployment.draft, "ngram", "eagle-32k"))
        frame.insert(0, "hardware", key)
        hw = get_hardware(key)
        frame.insert(1, "hardware_name", f"{key.upper()}, {hw.datasheet_memory_capacity.value / 1e9:.0f} GB")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def draw_hardware_ladders(data: pd.DataFrame, deployment: ArticleDeployment, default_context: int = 2048) -> go.Figure:
    """The ladder on several cards side by side (one panel each, shared speedup axis), with
    one slider over context for all panels; open markers do not fit on that card."""
    cards = list(dict.fromkeys(data["hardware"]))
    names = [data.loc[data["hardware"] == c, "hardware_name"].iloc[0] for c in cards]
    fig = make_subplots(rows=1, cols=len(cards), shared_yaxes=True, horizontal_spacing=0.03, subplot_titles=names)
    fig.update_layout(template=th.TEMPLATE, height=420, autosize=True)
    contexts = sorted(data["context"].unique())
    x = data["concurrency"]
    groups = []
    for context in contexts:
        group = []
        for col, card in enumerate(cards, start=1):
            part_ctx = data[(data["hardware"] == card) & (data["context"] == context)]
            for drafter, part in part_ctx.groupby("drafter", sort=False):
                group.append(len(fig.data))
                fig.add_trace(
                    ladder_trace(
                        part,
                        drafter,
                        context,
                        bool(context == default_context),
                        deployment,
                        col == 1,
                        f", {names[col - 1]}",
                    ),
                    row=1,
                    col=col,
                )
        groups.append(group)
    always = []
    for col in range(1, len(cards) + 1):
        always.append(len(fig.data))
        th.reference_line(fig, 1.0, x.min(), x.max(), row=1, col=col)
    steps = visibility_steps([f"{c:,}" for c in contexts], groups, always, "context")
    fig.update_xaxes(**th.log2_axis([2**i for i in range(0, 11, 2)]), title_text="concurrent sequences")
    fig.update_yaxes(range=[0, float(data["speedup"].max()) * 1.08], ticksuffix="x")
    fig.update_yaxes(title_text="speedup over plain decoding", row=1, col=1)
    fig.update_layout(sliders=[slider(steps, contexts.index(default_context), "context (prompt tokens): ")])
    pl.side_by_side(fig, len(cards))
    return fig


HARDWARE_FIGURE = FigureSpec(
    "hardware",
    "The ladder on H100, H200 and B200 side by side",
    "The same model pair on three cards at the prompt length the one slider sets for all three, with open "
    "markers where the scenario does not fit in memory.",
    hardware_ladders,
    lambda d, s: draw_hardware_ladders(d, s.deployment),
)


def hardware_capacity_table(
    settings: SiteSettings, cards: Iterable[str], contexts: Sequence[int] = (2048, 8192)
) -> str:
    """Most concurrent sequences each card holds, with the draft model and without, per context,
    and the usable share of the memory the card reports (the page's text gives the reported
    totals: a seventh column would not fit a phone's width)."""
    d = settings.deployment
    head = " | ".join(f"context {c:,}: plain | with draft" for c in contexts)
    out = [f"| card | usable memory | {head} |", "| --- | ---: |" + " ---: | ---: |" * len(contexts)]
    for card in cards:
        ev = evaluate(context=np.array(contexts), hardware=card, settings=settings)
        cells = " | ".join(
            f"{int(p):,} | {int(w):,}" for p, w in zip(ev.max_concurrency_without_draft, ev.max_concurrency)
        )
        usable = float(ev.usable_memory_bytes[0]) / GIB
        out.append(f"| {get_hardware(card).name} | {usable:,.1f} GiB | {cells} |")
    out.append(f"\nDraft: {th.drafter_label(d.draft)}; target: {architecture_catalog()[d.target].name}.")
    return "\n".join(out)


FIGURES: tuple[FigureSpec, ...] = (HARDWARE_FIGURE,)
"""The figures of this module, in the order of their pages."""
