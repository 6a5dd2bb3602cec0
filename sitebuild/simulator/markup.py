"""The simulator's HTML, from its one template (``templates/simulator.html``), showing the
default scenario so that the page is complete without JavaScript: every readout, the ladder's
values, the sampled iteration and the log line come from the same tables the data files carry
(:mod:`sitebuild.simulator.data`). The page's description of the data and the simulator's script
(docs/javascripts/simulator.js) are embedded in it, and so is the default setting's slice of
data, so that the first answer waits for nothing: no request, no other script. The ladder's
bars are drawn by the script alone (their scale depends on the bars in view); without it each
row shows its value."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from sitebuild.config import SiteSettings
from sitebuild.figures.schedule import LARGEST_LOAD
from sitebuild.paths import ROOT
from sitebuild.simulator.data import (
    FITS_TEXT,
    PART_LABELS,
    READOUT_AXES,
    REASONS,
    UNFIT_HEADLINE,
    SimulatorData,
    axes,
    default_text,
    slice_file,
)
from specmodel import formatting
from specmodel.model import drafters
from specmodel.model.evaluate import evaluate
from specmodel.model.scenario import default_scenario
from specmodel.model.timing import TIME_PARTS
from specmodel.readouts import BY_KEY

#: The simulator's script, embedded in the page (the one copy of it).
SCRIPT = ROOT / "docs" / "javascripts" / "simulator.js"

LABELS = {
    "concurrency": "Concurrent sequences",
    "context": "Context (prompt tokens)",
    "gamma": "Draft tokens per iteration, γ (vLLM's num_speculative_tokens)",
    "drafter": "Drafts come from",
    "acceptance": "Acceptance across draft positions",
    "alpha": "Acceptance rate, α",
    "engine": "Engine",
}
ACCEPTANCE_LABELS = {"falling": "falls with position", "same": "same at every position"}
ENGINE_LABELS = {"ideal": "ideal roofline (the article)", "vllm": "vLLM, fitted to measurements"}
#: Controls over a list of stops (the ladder's concurrencies, the grid's contexts) are sliders
#: over their positions; the page shows and keeps the value.
STOPS = ("concurrency", "context")
RANGES = ("concurrency", "context", "gamma", "alpha")
#: The readouts after the answer and its reasons, in groups.
READOUT_GROUPS = (
    ("Throughput", ("spec_tokens_per_s", "base_tokens_per_s", "arithmetic_ratio")),
    ("The verify pass", ("verify_gib", "verify_tflop", "verify_memory_ms", "verify_compute_ms")),
    ("The drafter", ("draft_weight_fraction", "draft_kv_fraction")),
    ("Memory per GPU", ("hbm_required_gib", "max_concurrency", "max_concurrency_without_draft")),
)
#: The answer's three reasons, labelled by what each says about the trade.
REASON_LABELS = {
    "mean_acceptance_length": "What a verify pass yields",
    "draft_share": "What drafting costs, share of the wall clock",
    "verify_idle": "Whether checking is free: tensor cores idle in the verify pass",
}
#: Rows that are not readouts of :mod:`specmodel.readouts`: the unconditional acceptance of each
#: draft position (as vLLM's per-position counters report it), and whether the scenario fits.
EXTRA_LABELS = {"acceptance": "Share of iterations each guess reaches the output", "fits": "Fits in memory"}
#: The best gamma at the current load, and what the schedule under the log line is.
BEST_GAMMA_LABEL = "Best γ at this load (its speedup)"
SCHEDULE_CAPTION = (
    "The best γ at every load for these settings, from one sequence to the most that plain decoding holds in "
    f"memory (at most {LARGEST_LOAD:,}), as vLLM's schedule to merge into --speculative-config (0: speculation off "
    "there; {} where not even one sequence fits). Section 5 explains it."
)
#: The token chips' states and what each means (their tooltips).
CHIP_TITLES = {
    "accepted": "accepted guess",
    "rejected": "first rejected guess",
    "skipped": "thrown away",
    "emitted": "token the target emits",
}

_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).resolve().parent / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)


def choice_label(name: str, value: str) -> str:
    """The text of a radio button: the drafter's name or the profile's description."""
    if name == "drafter":
        return drafters.drafter_label(value)
    return ENGINE_LABELS[value] if name == "engine" else ACCEPTANCE_LABELS[value]


def help_texts(settings: SiteSettings) -> dict[str, str]:
    """What each control means, shown under it."""
    ratio = settings.constants.FALLING_RATIO
    return {
        "alpha": "The chance that the first guess is accepted.",
        "acceptance": (f"Falls with position: each guess is accepted {ratio:g} times as often as the one before, "
                       "given that one was; the same: every guess as often as the first."),
        "drafter": "The drafter sets what a guess costs; how often guesses are accepted is set by α, not by the "
                   "drafter.",
        "engine": "Ideal: the article's roofline, a batch that starts together and drains. vLLM: fixed costs of a "
                  "real server, fitted to measurements, with the batch kept full.",
    }  # fmt: skip


def value_text(name: str, value: Any) -> str:
    """A control's value as the page shows it beside the control and tells a screen reader."""
    if name == "concurrency":
        return formatting.plural(int(value), "sequence")
    if name == "context":
        return formatting.plural(int(value), "token")
    return f"{value:g}"


def _control(name: str, values: tuple[Any, ...], default: Any, help_text: str | None) -> dict[str, Any]:
    control: dict[str, Any] = {"name": name, "label": LABELS[name], "help": help_text}
    if name in STOPS:
        control.update(kind="range", min="0", max=str(len(values) - 1), step="1", value=str(values.index(default)),
                       stops=",".join(str(v) for v in values))  # fmt: skip
    elif name in RANGES:
        step = round(values[1] - values[0], 10)
        control.update(kind="range", min=f"{values[0]:g}", max=f"{values[-1]:g}", step=f"{step:g}",
                       value=f"{default:g}", stops=None)  # fmt: skip
    else:
        control["kind"] = "radio"
        control["options"] = [{"value": v, "text": choice_label(name, v), "selected": v == default} for v in values]
    control["value_text"] = value_text(name, default) if name in RANGES else ""
    return control


def _rungs(settings: SiteSettings) -> list[dict[str, Any]]:
    """The ladder's rows: each concurrency and its speedup at the default scenario, as text (for
    a reader without JavaScript). The script draws each row (its bar, verdict, tooltip, whether
    it fits) from the data, the only place that is done."""
    concurrency = np.array(axes(settings)["concurrency"])
    ev = evaluate(concurrency=concurrency, settings=settings)
    return [
        {"concurrency": int(batch), "text": BY_KEY["speedup"].format(s), "label": f"{int(batch):,}"}
        for batch, s in zip(concurrency, ev.speedup, strict=True)
    ]


def _row(key: str, text: dict[str, Any], attr: str = "readout", label: str | None = None) -> dict[str, str]:
    """A readout's row: its label, and its value in the element ``data-<attr>="<key>"``."""
    label = label or (BY_KEY[key].label if attr == "readout" else EXTRA_LABELS[key])
    return {"label": label, "key": key, "attr": attr, "text": text[key]}


def _groups(text: dict[str, Any]) -> list[dict[str, Any]]:
    groups = []
    for title, keys in READOUT_GROUPS:
        rows = [_row(k, text) for k in keys]
        if title == "The drafter":
            rows.append(_row("acceptance", text, "acceptance"))
        if title == "Memory per GPU":
            rows.append(_row("fits", text, "fits"))
        groups.append({"title": title, "rows": rows})
    return groups


def _parts(text: dict[str, Any]) -> list[dict[str, Any]]:
    zero = formatting.percent(0.0, 0)
    return [
        {"key": p, "label": PART_LABELS[p], "plain": text["parts"][p]["plain"], "spec": text["parts"][p]["spec"],
         "hidden": text["parts"][p]["plain"] == zero and text["parts"][p]["spec"] == zero}
        for p in TIME_PARTS
    ]  # fmt: skip


def script_source() -> str:
    """The simulator's script, checked to be embeddable in a ``<script>`` element."""
    source = SCRIPT.read_text(encoding="utf-8")
    if "</script" in source.lower():
        raise ValueError(f"{SCRIPT} contains '</script', which would end the embedded script")
    return source


def embedded_json(data: dict) -> str:
    """JSON for a ``<script type="application/json">`` element (``</`` escaped)."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False).replace("</", "<\\/")


def simulator_html(settings: SiteSettings, sim: SimulatorData, src: str = "generated/data/sim/") -> str:
    """The simulator's markup, showing the default scenario (complete without JavaScript)."""
    default = default_scenario(settings)
    text = default_text(settings)
    words = sim.meta["tokens"]["words"]
    chips = [("accepted", words[0]), ("accepted", words[1]), ("rejected", words[2])]
    chips += [("skipped", words[j]) for j in range(3, default.gamma)] + [("emitted", "correction")]
    helps = help_texts(settings)
    setting = {name: getattr(default, name) for name in axes(settings)}
    context = {
        "src": src,
        "default_file": slice_file(sim.meta, setting),
        # The default setting's slice, in the page (base64 of its plain bytes): the first answer
        # needs no request and no wait; every other slice is fetched.
        "first_slice": base64.b64encode(sim.blobs[slice_file(sim.meta, setting)]).decode("ascii"),
        "shown": "&".join(f"{k}={v}" for k, v in setting.items()),
        "meta": embedded_json(sim.meta),
        "script": script_source(),
        "controls": [
            _control(name, values, getattr(default, name), helps.get(name)) for name, values in axes(settings).items()
        ],
        "text": text,
        "verdict": text["verdict"],
        "verdict_text": formatting.VERDICTS[text["verdict"]],
        "fits": text["fits"] == FITS_TEXT[True],
        "unfit_text": UNFIT_HEADLINE,
        "reasons": [_row(k, text, label=REASON_LABELS[k]) for k in REASONS],
        "groups": _groups(text),
        "parts": _parts(text),
        "parts_total": text["parts_total"],
        "rungs": _rungs(settings),
        "chips": chips,
        "chip_titles": CHIP_TITLES,
        "best_gamma_label": BEST_GAMMA_LABEL,
        "schedule_caption": SCHEDULE_CAPTION,
    }
    shown = {r["key"] for r in context["reasons"]} | {r["key"] for g in context["groups"] for r in g["rows"]}
    missing = set(READOUT_AXES) - shown - {"speedup"}
    if missing:
        raise ValueError(f"readouts not shown by the simulator: {sorted(missing)}")
    return _ENVIRONMENT.get_template("simulator.html").render(context)
