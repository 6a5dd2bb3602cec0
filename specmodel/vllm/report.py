"""``specmodel advise --report FILE.html``: the advice as one self-contained page to share.

The page holds the verdict and its reason, the advice as the terminal prints it, and two
figures: the deployment's ladder (predicted speedup across concurrency at the deployed
gamma, the deployment's own concurrency marked) and its speedup against gamma at the
measured concurrency (the deployed and the recommended gamma marked), with any measured
speedups beside the predictions. It loads nothing when viewed: plotly.js is inlined once,
and the figures are Plotly JSON built here from plain dicts (the package never imports the
site builder, whose colours and fonts these follow).

plotly.js comes from the repository's vendored copy (``docs/assets/vendor/plotly``, a source
checkout or an editable install) or else from the ``plotly`` Python package's bundle; with
neither, the report is refused in one line saying what to install.
"""

from __future__ import annotations

import datetime
import html
import importlib.util
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from specmodel.errors import SpecModelError
from specmodel.model.settings import Settings
from specmodel.vllm.advise import Advice, predictions

#: Concurrencies the ladder is drawn at (the deployment's own is added).
LADDER = (1, 2, 4, 8, 16, 32, 64, 128, 256)

#: The site's colours (sitebuild/theme.py): predictions, the deployment, measurements (its
#: dark grey: the teal is the site's gain colour), and the even grey of the 1x line.
PREDICTED, DEPLOYED, MEASURED, NEUTRAL = "#3b6fd8", "#d9822b", "#6b7280", "#8a8f98"
#: The recommended gamma's curve, where it differs from the deployed one.
MEASURED_ALT = "#7a4fb5"
#: The legend of measured speedups: plain over speculative time per output token (decode alone).
MEASURED_NAME = "measured (TPOT ratio)"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"

#: The line at speedup 1: plain decoding, what speculation must beat.
PLAIN_DECODING = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": 1, "y1": 1,
                  "line": {"color": NEUTRAL, "dash": "dot", "width": 1}}  # fmt: skip

#: The vendored plotly.js, relative to the repository's root (the package's parent folder).
VENDORED = Path("docs") / "assets" / "vendor" / "plotly" / "plotly-cartesian.min.js"


@dataclass(frozen=True)
class Provenance:
    """How a report was made, shown under its title: to reproduce it, or to tell two apart."""

    version: str  #: specmodel's
    command: str  #: the command line, quoted as a shell would take it
    date: str  #: when, in UTC (:func:`report_date`)
    inputs: tuple[tuple[str, str, str | None], ...] = ()  #: (option, file or URL, SHA-256 or None)


def report_date(environ: Any = None) -> str:
    """The date a report is made, in UTC: ``SOURCE_DATE_EPOCH`` (seconds since 1970, for a
    reproducible build) when it is set, else now.

    >>> report_date({"SOURCE_DATE_EPOCH": "1700000000"})
    '2023-11-14 22:13:20 UTC'
    """
    epoch = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH")
    if epoch is None or not epoch.strip():
        when = datetime.datetime.now(datetime.UTC)
    elif epoch.strip().isascii() and epoch.strip().isdigit() and len(epoch.strip()) <= 12:
        when = datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
    else:
        raise SpecModelError(f"SOURCE_DATE_EPOCH {epoch[:40]!r} is not a whole number of seconds since 1970")
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def provenance_html(provenance: Provenance | None) -> str:
    """The page's record of how it was made (nothing without one)."""
    if provenance is None:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(option)}</td><td><code>{html.escape(name)}</code></td>"
        f"<td><code>{html.escape(digest or 'not a file')}</code></td></tr>"
        for option, name, digest in provenance.inputs
    )
    table = f"<table><tr><th>input</th><th>file</th><th>SHA-256</th></tr>{rows}</table>" if rows else ""
    return (
        f'<div class="provenance" id="provenance"><p>Made by specmodel {html.escape(provenance.version)} on '
        f"{html.escape(provenance.date)} with <code>{html.escape(provenance.command)}</code></p>{table}</div>"
    )


@dataclass(frozen=True)
class MeasuredPoint:
    """A speedup measured on the server (``advise --bench``): at this concurrency and gamma."""

    concurrency: int
    gamma: int
    speedup: float


def plotly_js() -> str:
    """The text of plotly.js: the repository's vendored copy, else the ``plotly`` package's."""
    vendored = Path(__file__).resolve().parents[2] / VENDORED
    if vendored.is_file():
        return vendored.read_text(encoding="utf-8")
    spec = importlib.util.find_spec("plotly")
    if spec is not None and spec.origin is not None:
        bundled = Path(spec.origin).parent / "package_data" / "plotly.min.js"
        if bundled.is_file():
            return bundled.read_text(encoding="utf-8")
    raise SpecModelError(
        "--report needs plotly.js to inline in the page: install the plotly package (pip install plotly) "
        "or run from a source checkout of specmodel, which vendors it"
    )


def ladder(
    advice: Advice, settings: Settings, concurrencies: Sequence[int] = LADDER, gamma: int | None = None
) -> list[tuple[int, float | None]]:
    """(concurrency, predicted speedup at ``gamma``, the deployed gamma by default) for each of
    ``concurrencies`` and the deployment's own; None where the deployment does not fit in the
    GPUs' memory."""
    layout = {"tensor_parallel": advice.tensor_parallel, **advice.served.layout()}
    u = advice.per_position[: gamma or advice.deployed_gamma]
    out: list[tuple[int, float | None]] = []
    for b in sorted({*concurrencies, advice.concurrency}):
        at = predictions(u, b, advice.context, advice.served.drafter, advice.hardware, advice.target,
                         settings, advice.engine, layout, advice.served.tree_widths)[-1]  # fmt: skip
        out.append((b, float(at.speedup) if bool(at.fits) else None))
    return out


def _axis(title: str, **extra: Any) -> dict[str, Any]:
    """An axis as the site draws one: a title, a faint grid."""
    return {"title": {"text": title}, "gridcolor": "rgba(128,128,128,0.25)", "zeroline": False, **extra}


def _layout(title: str, x: dict[str, Any]) -> dict[str, Any]:
    """The site's base layout (font, transparent background, legend above the plot)."""
    return {
        "title": {"text": title, "x": 0, "xanchor": "left"},
        "font": {"family": FONT, "size": 13, "color": "#3c3f45"},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "height": 400,
        "margin": {"l": 64, "r": 24, "t": 72, "b": 56},
        "hovermode": "closest",
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"},
        "xaxis": x,
        "yaxis": _axis("speedup over plain decoding (x)"),
        "shapes": [PLAIN_DECODING],
    }


def _trace(name: str, x: list[Any], y: list[Any], color: str, mode: str = "lines+markers", size: int = 7) -> dict:
    """One scatter trace."""
    return {"type": "scatter", "name": name, "x": x, "y": y, "mode": mode,
            "line": {"color": color, "width": 2}, "marker": {"color": color, "size": size}}  # fmt: skip


def ladder_band(advice: Advice, settings: Settings, rungs: list[tuple[int, float | None]]) -> list[dict]:
    """The interval around the deployed gamma's curve (:func:`specmodel.uncertainty.speedup_interval`
    at the advice's level) as two traces, the upper filled down to the lower; none where no
    rung fits."""
    from specmodel.uncertainty import speedup_interval

    held = [(b, s) for b, s in rungs if s is not None]
    if not held:
        return []
    b, s = np.array([x for x, _ in held]), np.array([y for _, y in held])
    low, high = speedup_interval(settings, advice.engine, advice.served.drafter, b, s, level=advice.level)
    name = f"{advice.level:.0%} interval"
    lower = {**_trace(name, b.tolist(), np.asarray(low).tolist(), PREDICTED, mode="lines"), "showlegend": False,
             "line": {"width": 0}}  # fmt: skip
    upper = {**_trace(name, b.tolist(), np.asarray(high).tolist(), PREDICTED, mode="lines"), "fill": "tonexty",
             "fillcolor": "rgba(59,111,216,0.15)", "line": {"width": 0}}  # fmt: skip
    return [lower, upper]


def ladder_figure(
    advice: Advice, rungs: list[tuple[int, float | None]], measured: Sequence[MeasuredPoint] = (),
    band: Sequence[dict] = (), recommended: list[tuple[int, float | None]] | None = None,
) -> dict:  # fmt: skip
    """Speedup across concurrency at the deployed gamma: the prediction with its interval
    ``band``, the recommended gamma's curve where it differs, the deployment, the measured."""
    g = advice.deployed_gamma
    traces = [_trace(f"predicted, gamma {g}", [b for b, _ in rungs], [s for _, s in rungs], PREDICTED), *band]
    if recommended:
        traces.append(_trace(f"predicted, recommended gamma {advice.recommended_gamma}",
                             [b for b, _ in recommended], [s for _, s in recommended], MEASURED_ALT))  # fmt: skip
    mine = dict(rungs).get(advice.concurrency)
    traces.append(_trace(f"your deployment, B = {advice.concurrency} (predicted)", [advice.concurrency], [mine],
                         DEPLOYED, mode="markers", size=13))  # fmt: skip
    at_g = [m for m in measured if m.gamma == g]
    if at_g:
        traces.append(_trace(MEASURED_NAME, [m.concurrency for m in at_g], [m.speedup for m in at_g], MEASURED,
                             mode="markers", size=11))  # fmt: skip
    x = _axis("concurrent sequences B", type="log", tickvals=[b for b, _ in rungs])
    return {"data": traces, "layout": _layout(f"Speedup across concurrency at gamma {g}", x)}


def gamma_figure(advice: Advice, measured: Sequence[MeasuredPoint] = ()) -> dict:
    """Speedup against gamma at the measured concurrency: deployed and recommended gamma marked."""
    gammas = list(range(1, len(advice.speedup) + 1))
    traces = [_trace("predicted", gammas, list(advice.speedup), PREDICTED)]
    if advice.speedup_low:  # the interval of each gamma's prediction, as a band of error bars
        traces[0]["name"] = f"predicted, with its {advice.level:.0%} interval"
        above = [h - s for s, h in zip(advice.speedup, advice.speedup_high, strict=True)]
        below = [s - lo for s, lo in zip(advice.speedup, advice.speedup_low, strict=True)]
        traces[0]["error_y"] = {"type": "data", "symmetric": False, "color": PREDICTED, "array": above,
                                "arrayminus": below}  # fmt: skip
    d = advice.deployed_gamma
    traces.append(_trace(f"deployed, gamma {d}", [d], [advice.speedup[d - 1]], DEPLOYED, mode="markers", size=13))
    r = advice.recommended_gamma
    if r and r != d:
        traces.append(_trace(f"recommended, gamma {r}", [r], [advice.speedup[r - 1]], MEASURED, mode="markers",
                             size=13))  # fmt: skip
    at_b = [m for m in measured if m.concurrency == advice.concurrency]
    if at_b:
        traces.append(_trace(MEASURED_NAME, [m.gamma for m in at_b], [m.speedup for m in at_b], MEASURED,
                             mode="markers", size=11))  # fmt: skip
    x = _axis("draft tokens per iteration, gamma", tickvals=gammas)
    return {"data": traces, "layout": _layout(f"Speedup against gamma at B = {advice.concurrency}", x)}


def _finite(value: Any) -> Any:
    """``value`` with every float that is not finite as None (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</`` to end it early).

    >>> script_json({"a": "</script>"})
    '{"a": "<\\\\/script>"}'
    """
    return json.dumps(_finite(value), allow_nan=False).replace("</", "<\\/")


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: {font}; color: #3c3f45; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
.verdict {{ border-left: 4px solid {accent}; padding: 0.5rem 1rem; background: rgba(128,128,128,0.08); }}
.figure {{ min-height: 400px; margin: 1.5rem 0; }}
.provenance {{ font-size: 0.85rem; color: #6b7079; overflow-wrap: anywhere; }}
.provenance td, .provenance th {{ text-align: left; padding: 0 1rem 0 0; }}
pre {{ white-space: pre-wrap; background: rgba(128,128,128,0.08); padding: 1rem; }}
</style>
<script>{plotly}</script>
</head>
<body>
<h1>{title}</h1>
{provenance}
<div class="verdict" id="verdict"><p><strong>Verdict: {verdict}</strong></p><p>{reason}</p></div>
<div class="figure" id="ladder"></div>
<div class="figure" id="gamma"></div>
<h2>The advice in full</h2>
<pre>{text}</pre>
<p>Written by specmodel advise: every speedup is the model's prediction from the measured acceptance,
but those marked measured. Predictions are only as good as the engine profile ({engine}).</p>
<script type="application/json" id="figures">{figures}</script>
<script>
const figures = JSON.parse(document.getElementById("figures").textContent);
for (const [id, fig] of Object.entries(figures)) {{
  Plotly.newPlot(id, fig.data, fig.layout, {{displaylogo: false, responsive: true}});
}}
</script>
</body>
</html>
"""


def report_html(
    advice: Advice, text: str, settings: Settings, measured: Sequence[MeasuredPoint] = (),
    provenance: Provenance | None = None,
) -> str:  # fmt: skip
    """The whole page: how it was made (``provenance``), the verdict and its reason, the two
    figures, the advice's text."""
    rungs = ladder(advice, settings)
    best = advice.recommended_gamma
    recommended = ladder(advice, settings, gamma=best) if best and best != advice.deployed_gamma else None
    figures = {"ladder": ladder_figure(advice, rungs, measured, ladder_band(advice, settings, rungs), recommended),
               "gamma": gamma_figure(advice, measured)}  # fmt: skip
    title = f"Speculative decoding advice: {advice.served.drafter} on {advice.target}, {advice.hardware}"
    return PAGE.format(
        title=html.escape(title),
        font=FONT,
        accent=DEPLOYED if advice.verdict != "keep" else PREDICTED,
        plotly=plotly_js().replace("</script", "<\\/script"),
        verdict=html.escape(advice.verdict),
        reason=html.escape(advice.reason),
        text=html.escape(text),
        engine=html.escape(advice.engine),
        provenance=provenance_html(provenance),
        figures=script_json(figures),
    )
