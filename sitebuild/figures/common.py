"""What the figures share: the axes and drafters they sweep, a tidy frame of an evaluation,
hover text, verdict colours, sliders and menus, the unfit marker."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from sitebuild.config import SiteSettings
from sitebuild.theme import EVEN, LOSS, MUTED, REFERENCE
from specmodel.acceptance_fit import FittedSeries
from specmodel.formatting import plural, verdict
from specmodel.model.evaluation import Evaluation
from specmodel.model.scenario import CONCURRENCY_LADDER, GRID_CONTEXTS
from specmodel.model.scenario import GAMMAS as GAMMA_VALUES

CONCURRENCY = np.array(CONCURRENCY_LADDER)
CONTEXTS = np.array(GRID_CONTEXTS)
GAMMAS = np.array(GAMMA_VALUES)

#: Heads the site's figures and simulator show next to the draft models and n-gram lookup.
SITE_HEADS = ("eagle", "eagle-32k")

SPEEDUP_HOVER = "%{y:.2f}x over plain decoding"

#: Marker of a scenario that does not fit on the card: open, where fitting ones are filled.
UNFIT_SYMBOL = "circle-open"
#: Marker of the ideal roofline where a figure sets it against the vLLM profile (circles): a
#: filled triangle, since open markers mean "does not fit" everywhere on the site.
IDEAL_SYMBOL = "triangle-up"


def site_drafters(settings: SiteSettings) -> tuple[str, ...]:
    """The drafters of the site's figures: the deployment's two draft models, n-gram lookup,
    and the heads of SITE_HEADS."""
    d = settings.deployment
    return (d.draft, d.big_draft, "ngram", *SITE_HEADS)


def model_drafters(settings: SiteSettings) -> tuple[str, str]:
    """The deployment's two draft models."""
    return settings.deployment.draft, settings.deployment.big_draft


def evaluation_frame(ev: Evaluation, **columns: ArrayLike) -> pd.DataFrame:
    """A tidy frame of an evaluation over a grid: each column broadcast to the grid's shape
    (that of ``ev.speedup``) and flattened."""
    shape = np.shape(ev.speedup)
    out = {k: np.broadcast_to(v, shape).ravel() for k, v in columns.items()}
    return pd.DataFrame(out)


def sequences(counts: Any) -> list[str]:
    """Hover text for concurrencies (``%{hovertext}``): ``1 sequence``, ``64 sequences``."""
    return [plural(int(batch), "sequence") for batch in counts]


def named_groups(data: pd.DataFrame, column: str) -> Iterator[tuple[str, pd.DataFrame]]:
    """``data.groupby(column, sort=False)`` over a column of names: each name (a ``str``, which
    pandas' types cannot tell) with its rows, in the order the names first appear."""
    for name, part in data.groupby(column, sort=False):
        yield str(name), part


def point_colors(speedup: Any, color: str) -> list[str]:
    """Each point's colour: magenta for a loss, grey within 3% of even (the verdict of
    :func:`specmodel.formatting.verdict`), else the trace's colour."""
    return [{"slower": LOSS, "even": EVEN}.get(verdict(float(s)), color) for s in speedup]


def visibility_steps(
    labels: Sequence[str], groups: Sequence[Sequence[int]], always: Sequence[int], prefix: str
) -> list[dict]:
    """Slider steps: step k shows the traces in ``groups[k]`` plus ``always``."""
    total = sum(len(g) for g in groups) + len(always)
    steps = []
    for label, group in zip(labels, groups):
        visible = [False] * total
        for i in list(group) + list(always):
            visible[i] = True
        steps.append({"method": "restyle", "args": [{"visible": visible}], "label": label})
    return steps


def prediction_diagonal(fig: go.Figure, low: float, top: float) -> None:
    """On a figure of predicted against measured speedup from ``low`` to ``top``: dotted lines
    15% above and below the diagonal, then the diagonal (a perfect prediction)."""
    for share in (1.15, 0.85):
        fig.add_trace(
            go.Scatter(
                x=[low, top],
                y=[low * share, top * share],
                mode="lines",
                meta=REFERENCE,
                line={"color": MUTED, "dash": "dot", "width": 1},
                hoverinfo="skip",
                showlegend=False,
                name=f"{share - 1:+.0%}",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[low, top],
            y=[low, top],
            mode="lines",
            meta=REFERENCE,
            name="measured = predicted",
            line={"color": MUTED, "width": 1.5},
            hoverinfo="skip",
        )
    )


def slider(steps: list[dict], active: int, prefix: str) -> dict:
    """A slider over ``steps``, step ``active`` applied, labelled ``prefix``. Plotly does not draw
    it (``visible`` false): docs/javascripts/figures.js puts a native range input for it above
    the figure, which applies each step as Plotly's slider would."""
    return {"active": active, "steps": steps, "currentvalue": {"prefix": prefix}, "visible": False}


def menu(name: str, buttons: list[dict], active: int) -> dict:
    """A menu of ``buttons``, button ``active`` applied, labelled ``name``. Plotly does not draw
    it (``visible`` false): docs/javascripts/figures.js puts a native select for it above the
    figure, which applies each button as Plotly's menu would."""
    return {"name": name, "buttons": buttons, "active": active, "visible": False}


def fitted_frame(fits: dict[str, list[FittedSeries]]) -> pd.DataFrame:
    """Every row of fitted series against the model under each engine (``fits``: engine -> its
    series), the acceptance of its series fitted at batch 1 (``fitted``: the row it was fitted on)."""
    rows = []
    for engine, series in fits.items():
        for fit in series:
            for i, row in enumerate(fit.rows):
                rows.append(
                    {
                        "engine": engine,
                        "dataset": row.dataset,
                        "method": row.method,
                        "target": row.target,
                        "batch": row.batch,
                        "gamma": row.num_speculative_tokens,
                        "prompt_tokens": row.prompt_tokens,
                        "output_tokens": row.output_tokens,
                        "measured": row.measured_speedup,
                        "predicted": float(fit.predicted[i]),
                        "mean_acceptance_length": fit.mean_acceptance_length,
                        "fitted": i == 0,
                        "source": row.citation,
                        "url": row.source_url or "",
                    }
                )
    frame = pd.DataFrame(rows)
    frame["error"] = frame["predicted"] / frame["measured"] - 1.0
    return frame


def square_scatter(fig: go.Figure, low: float, top: float) -> go.Figure:
    """A predicted-against-measured scatter finished: both axes over ``[low, top]`` at one scale,
    the legend above, and the height it needs on a phone."""
    from sitebuild.figures import placement as pl

    axis = {"range": [low, top], "ticksuffix": "x"}
    fig.update_layout(
        xaxis={**axis, "title": "measured speedup", "constrain": "domain"},
        yaxis={**axis, "title": "predicted speedup", "scaleanchor": "x"},
    )
    pl.legend_above(fig)
    pl.set_narrow(fig, pl.narrow_below(fig, 480))
    return fig
